package players;

import ginrummy.Card;

import java.util.ArrayList;

/**
 * The kit-style Simple player that returns a Card of its own making, not one of the kit's 52:
 * as its discard (rank 13 of suit 0, a copy of a real card, or suit 4, by the class's name), or
 * in its knocking melds (MeldCopy).
 */
public class ForeignCardPlayer extends KitSimplePlayer {
    private final String how = getClass().getSimpleName();

    @Override
    public Card getDiscard() {
        Card d = super.getDiscard();
        switch (how) {
            case "ForeignCardPlayer": return new Card(13, 0);
            case "CopyCardPlayer": return new Card(d.getRank(), d.getSuit());
            case "SuitFourPlayer": return new Card(0, 4);
            default: return d;
        }
    }

    @Override
    public ArrayList<ArrayList<Card>> getFinalMelds() {
        ArrayList<ArrayList<Card>> melds = super.getFinalMelds();
        if (melds == null || melds.isEmpty() || !how.equals("MeldCopyPlayer"))
            return melds;
        ArrayList<ArrayList<Card>> out = new ArrayList<>();
        for (ArrayList<Card> m : melds)
            out.add(new ArrayList<>(m));
        Card c = out.get(0).get(0);
        out.get(0).set(0, new Card(c.getRank(), c.getSuit()));
        return out;
    }

    public static class CopyCardPlayer extends ForeignCardPlayer {
    }

    public static class SuitFourPlayer extends ForeignCardPlayer {
    }

    public static class MeldCopyPlayer extends ForeignCardPlayer {
    }
}
