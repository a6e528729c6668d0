package players;

import ginrummy.Card;

import java.util.Random;

/**
 * The kit-style Simple player that takes face-up cards or not at random (either is legal) by a
 * table of coin flips it draws in its constructor, from a static Random of its class and from
 * Math.random: the first object is made when the player loads, before any game's seed is known.
 */
public class CtorRandPlayer extends KitSimplePlayer {
    static final Random SHARED = new Random();
    private final long flips = SHARED.nextLong() ^ Double.doubleToLongBits(Math.random());
    private int asked;

    @Override
    public boolean willDrawFaceUpCard(Card card) {
        super.willDrawFaceUpCard(card); // keeps its note of the face-up card
        return (flips >>> (asked++ % 64) & 1) != 0;
    }
}
