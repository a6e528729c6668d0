package players;

import ginrummy.Card;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The kit-style Simple player whose coin is a Random kept in a list, made lazily at its first
 * face-up decision (after startGame): out of the adapter's reach by its fields.
 */
public class ListRandPlayer extends KitSimplePlayer {
    private final List<Random> coins = new ArrayList<>();

    @Override
    public boolean willDrawFaceUpCard(Card card) {
        super.willDrawFaceUpCard(card);
        if (coins.isEmpty())
            coins.add(new Random());
        return coins.get(0).nextBoolean();
    }
}
