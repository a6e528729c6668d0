package players;

import ginrummy.Card;

import java.util.Random;

/**
 * The kit-style Simple player that takes a face-up card or not at random (either is legal),
 * drawing from a Random it makes in its first startGame (not when it is constructed).
 */
public class StartRandPlayer extends KitSimplePlayer {
    private Random dice;

    @Override
    public void startGame(int playerNum, int startingPlayerNum, Card[] dealt) {
        super.startGame(playerNum, startingPlayerNum, dealt);
        if (dice == null)
            dice = new Random();
    }

    @Override
    public boolean willDrawFaceUpCard(Card card) {
        super.willDrawFaceUpCard(card); // keeps its note of the face-up card
        return dice.nextBoolean();
    }
}
