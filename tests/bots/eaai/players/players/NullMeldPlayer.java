package players;

import ginrummy.Card;

import java.util.ArrayList;

/**
 * The kit-style Simple player whose knocking melds hold a null: an extra null meld, or (in its
 * subclass NullCardPlayer) a null card in its first meld.
 */
public class NullMeldPlayer extends KitSimplePlayer {
    protected boolean nullCard;

    @Override
    public ArrayList<ArrayList<Card>> getFinalMelds() {
        ArrayList<ArrayList<Card>> melds = super.getFinalMelds();
        if (melds == null || melds.isEmpty())
            return melds;
        ArrayList<ArrayList<Card>> out = new ArrayList<>();
        for (ArrayList<Card> m : melds)
            out.add(new ArrayList<>(m));
        if (nullCard)
            out.get(0).add(null);
        else
            out.add(null);
        return out;
    }
}
