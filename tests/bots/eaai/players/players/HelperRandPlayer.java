package players;

import ginrummy.Card;

import java.util.Random;

/**
 * The kit-style Simple player that takes a face-up card or not at random (either is legal),
 * drawing from a static Random of a helper class of its own (the adapter cannot reach it
 * from the player object).
 */
public class HelperRandPlayer extends KitSimplePlayer {
    @Override
    public boolean willDrawFaceUpCard(Card card) {
        super.willDrawFaceUpCard(card); // keeps its note of the face-up card
        return Dice.R.nextBoolean();
    }
}

class Dice {
    static final Random R = new Random();
}
