package players;

import ginrummy.Card;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;

/**
 * The kit-style Simple player that breaks its discard ties by the order of a HashSet<Card> (and
 * knocks with the first melds a HashMap<Card, ...> lists), as students' players often do: the
 * kit's Card has no hashCode, so the order is its objects' identity hashes'.
 */
public class HashSetPlayer extends KitSimplePlayer {
    @Override
    public Card getDiscard() {
        Card simple = super.getDiscard(); // keeps its notes of the pairs discarded
        HashSet<Card> hand = new HashSet<>(cards);
        HashMap<Card, Integer> deadwood = new HashMap<>();
        for (Card c : hand) {
            if (c == faceUpCard && c == drawnCard)
                continue;
            ArrayList<Card> rest = new ArrayList<>(cards);
            rest.remove(c);
            deadwood.put(c, ginrummy.GinRummyUtil.getDeadwoodPoints(rest));
        }
        Card best = simple;
        int least = Integer.MAX_VALUE;
        for (Card c : deadwood.keySet()) // ties go to the first in the set's order
            if (deadwood.get(c) < least) {
                least = deadwood.get(c);
                best = c;
            }
        return best;
    }
}
