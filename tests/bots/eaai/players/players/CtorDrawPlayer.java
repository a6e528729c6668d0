package players;

import ginrummy.Card;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The kit-style Simple player that takes face-up cards or not by generators its constructor makes
 * and draws from where the adapter's search of its fields cannot reseed them: a Random kept in a
 * list, an anonymous subclass of Random, and a number drawn in the constructor itself.  Its games
 * replay only if each game's object is made after the generators are seeded from that game's seed.
 */
public class CtorDrawPlayer extends KitSimplePlayer {
    private final List<Random> coins = new ArrayList<>();
    private final Random odd = new Random() {
        @Override
        public int nextInt(int bound) {
            return super.nextInt(bound);
        }
    };
    private final int bias;

    public CtorDrawPlayer() {
        coins.add(new Random());
        bias = new Random().nextInt(1000);
    }

    @Override
    public boolean willDrawFaceUpCard(Card card) {
        super.willDrawFaceUpCard(card);
        return (coins.get(0).nextInt(2) + odd.nextInt(2) + bias) % 2 == 0;
    }
}
