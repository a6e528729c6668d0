package players;

import ginrummy.Card;

import java.util.Random;

/**
 * The kit-style Simple player that takes a face-up card or not by a coin it makes and throws
 * within the one call (a new Random each time: no field of the player ever holds it).
 */
public class LocalRandPlayer extends KitSimplePlayer {
    @Override
    public boolean willDrawFaceUpCard(Card card) {
        super.willDrawFaceUpCard(card); // keeps its note of the face-up card
        return new Random().nextBoolean();
    }
}
