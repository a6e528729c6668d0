package ginrummy;

import java.util.ArrayList;

/**
 * Gin Arena's stand-in for the kit's meld helpers (tests only, written here): the few the
 * test players call, under the kit's names.
 */
public class GinRummyUtil {
    public static final int GOAL_SCORE = 100;
    public static final int GIN_BONUS = 25;
    public static final int UNDERCUT_BONUS = 25;
    public static final int MAX_DEADWOOD = 10;

    public static int getDeadwoodPoints(Card card) {
        return Math.min(card.rank + 1, 10);
    }

    public static int getDeadwoodPoints(ArrayList<Card> cards) {
        int sum = 0;
        for (Card c : cards)
            sum += getDeadwoodPoints(c);
        return sum;
    }

    /** The deadwood of ``hand`` outside ``melds``. */
    public static int getDeadwoodPoints(ArrayList<ArrayList<Card>> melds, ArrayList<Card> hand) {
        long melded = 0;
        for (ArrayList<Card> m : melds)
            melded |= cardsToBitstring(m);
        int sum = 0;
        for (Card c : hand)
            if ((melded >> c.getId() & 1) == 0)
                sum += getDeadwoodPoints(c);
        return sum;
    }

    public static long cardsToBitstring(ArrayList<Card> cards) {
        long m = 0;
        for (Card c : cards)
            if (c != null)
                m |= 1L << c.getId();
        return m;
    }

    public static ArrayList<Card> bitstringToCards(long bits) {
        ArrayList<Card> out = new ArrayList<>();
        for (int i = 0; i < Card.NUM_CARDS; i++)
            if ((bits >> i & 1) != 0)
                out.add(Card.getCard(i));
        return out;
    }

    /** Every meld inside ``cards``: sets of three or four of a rank, runs of three or more of a suit. */
    public static ArrayList<ArrayList<Card>> cardsToAllMelds(ArrayList<Card> cards) {
        long have = cardsToBitstring(cards);
        ArrayList<ArrayList<Card>> out = new ArrayList<>();
        for (int r = 0; r < Card.NUM_RANKS; r++) {
            ArrayList<Card> same = new ArrayList<>();
            for (int s = 0; s < Card.NUM_SUITS; s++)
                if ((have >> (s * 13 + r) & 1) != 0)
                    same.add(Card.getCard(r, s));
            if (same.size() >= 3)
                out.add(same);
            if (same.size() == 4)
                for (int skip = 0; skip < 4; skip++) {
                    ArrayList<Card> three = new ArrayList<>(same);
                    three.remove(skip);
                    out.add(three);
                }
        }
        for (int s = 0; s < Card.NUM_SUITS; s++)
            for (int lo = 0; lo < Card.NUM_RANKS; lo++) {
                ArrayList<Card> run = new ArrayList<>();
                for (int r = lo; r < Card.NUM_RANKS && (have >> (s * 13 + r) & 1) != 0; r++) {
                    run.add(Card.getCard(r, s));
                    if (run.size() >= 3)
                        out.add(new ArrayList<>(run));
                }
            }
        return out;
    }

    /** The meld sets (disjoint melds) that leave the least deadwood; empty if no card melds. */
    public static ArrayList<ArrayList<ArrayList<Card>>> cardsToBestMeldSets(ArrayList<Card> cards) {
        ArrayList<ArrayList<Card>> melds = cardsToAllMelds(cards);
        ArrayList<ArrayList<ArrayList<Card>>> best = new ArrayList<>();
        if (melds.isEmpty())
            return best;
        long[] masks = new long[melds.size()];
        long meldable = 0;
        for (int i = 0; i < masks.length; i++) {
            masks[i] = cardsToBitstring(melds.get(i));
            meldable |= masks[i];
        }
        int[] bestDw = {Integer.MAX_VALUE};
        search(melds, masks, cardsToBitstring(cards), meldable, 0, new ArrayList<>(), best, bestDw);
        return best;
    }

    /** Each card that can meld, lowest first, is either deadwood or in one of its melds. */
    private static void search(ArrayList<ArrayList<Card>> melds, long[] masks, long left, long meldable, int dw,
                               ArrayList<ArrayList<Card>> chosen, ArrayList<ArrayList<ArrayList<Card>>> best, int[] bestDw) {
        long open = left & meldable;
        if (open == 0) {
            int total = dw + getDeadwoodPoints(bitstringToCards(left));
            if (total < bestDw[0]) {
                bestDw[0] = total;
                best.clear();
            }
            if (total == bestDw[0] && !chosen.isEmpty())
                best.add(new ArrayList<>(chosen));
            return;
        }
        int c = Long.numberOfTrailingZeros(open);
        for (int i = 0; i < masks.length; i++)
            if ((masks[i] >> c & 1) != 0 && (masks[i] & ~left) == 0) {
                chosen.add(melds.get(i));
                search(melds, masks, left & ~masks[i], meldable, dw, chosen, best, bestDw);
                chosen.remove(chosen.size() - 1);
            }
        search(melds, masks, left & ~(1L << c), meldable, dw + getDeadwoodPoints(Card.getCard(c)), chosen, best, bestDw);
    }
}
