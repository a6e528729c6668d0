package players;

import ginrummy.Card;

import java.util.Random;

/**
 * The kit-style Simple player whose coin is its own subclass of Random, made with no seed, and
 * which draws its first flip in its constructor.
 */
public class SubRandPlayer extends KitSimplePlayer {
    /** A Random of the player's own (counts its draws), made with Random's unseeded constructor. */
    static final class Coin extends Random {
        int flips;

        Coin() {
            super();
        }

        @Override
        protected int next(int bits) {
            flips++;
            return super.next(bits);
        }
    }

    private final Coin coin = new Coin();
    private boolean first = coin.nextBoolean();

    @Override
    public boolean willDrawFaceUpCard(Card card) {
        super.willDrawFaceUpCard(card);
        boolean take = first ^ coin.nextBoolean();
        first = false;
        return take;
    }
}
