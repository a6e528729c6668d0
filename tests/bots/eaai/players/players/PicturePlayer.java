package players;

import ginrummy.Card;

import java.util.ArrayList;
import java.util.TreeSet;

/**
 * The kit-style Simple player, which also rebuilds the whole table from the kit's callbacks
 * alone and writes its picture to stderr (one JSON line, kit card numbers) at each decision
 * and at the end of each hand: what the arena's tests compare with the arena's own view.
 */
public class PicturePlayer extends KitSimplePlayer {
    private int me, starting, stock, turn;
    private final ArrayList<Integer> pile = new ArrayList<>();
    private final TreeSet<Integer> oppTaken = new TreeSet<>(), oppDiscarded = new TreeSet<>(), oppPassed = new TreeSet<>();
    private final TreeSet<Integer> myTaken = new TreeSet<>(), myDiscarded = new TreeSet<>(), myPassed = new TreeSet<>();
    private final int[] scores = new int[2];
    private int upcard, offers;
    private final StringBuilder end = new StringBuilder();

    @Override
    public void startGame(int playerNum, int startingPlayerNum, Card[] dealt) {
        super.startGame(playerNum, startingPlayerNum, dealt);
        me = playerNum;
        starting = startingPlayerNum;
        stock = 31;
        turn = 0;
        offers = 0;
        pile.clear();
        upcard = -1;
        for (TreeSet<Integer> s : java.util.List.of(oppTaken, oppDiscarded, oppPassed, myTaken, myDiscarded, myPassed))
            s.clear();
        end.setLength(0);
    }

    @Override
    public boolean willDrawFaceUpCard(Card card) {
        if (upcard < 0) { // the first offer of the hand shows the upcard
            upcard = card.getId();
            pile.add(upcard);
        }
        // The dealer offered the upcard first: the non-dealer passed it.
        if (me != starting && pile.size() == 1 && turn == 0 && oppTaken.isEmpty() && offers == 0)
            oppPassed.add(upcard);
        boolean take = super.willDrawFaceUpCard(card);
        picture("draw");
        offers++;
        if (!take && turn == 0 && pile.size() == 1 && card.getId() == upcard)
            myPassed.add(upcard);
        return take;
    }

    @Override
    public void reportDraw(int who, Card card) {
        if (upcard < 0) { // we deal, and the non-dealer took the upcard before we saw it
            upcard = card.getId();
            pile.add(upcard);
        }
        if (card != null && !pile.isEmpty() && pile.get(pile.size() - 1) == card.getId()) {
            pile.remove(pile.size() - 1);
            (who == me ? myTaken : oppTaken).add(card.getId());
        } else {
            stock--;
            // A stock draw before any discard by the non-dealer means both passed the upcard.
            if (turn == 0 && who == starting)
                (who == me ? oppPassed : myPassed).add(upcard);
        }
        super.reportDraw(who, card);
    }

    @Override
    public Card getDiscard() {
        picture("discard");
        return super.getDiscard();
    }

    @Override
    public void reportDiscard(int who, Card card) {
        pile.add(card.getId());
        (who == me ? myDiscarded : oppDiscarded).add(card.getId());
        turn++;
        super.reportDiscard(who, card);
    }

    @Override
    public void reportFinalHand(int who, ArrayList<Card> hand) {
        end.append(end.length() == 0 ? "" : ",").append(ids(hand));
        super.reportFinalHand(who, hand);
    }

    @Override
    public void reportScores(int[] s) {
        scores[0] = s[0];
        scores[1] = s[1];
        System.err.println("{\"picture\":\"end\",\"hands\":[" + end + "],\"scores\":[" + s[0] + "," + s[1] + "]}");
        super.reportScores(s);
    }

    private static String ids(Iterable<?> xs) {
        StringBuilder b = new StringBuilder("[");
        for (Object x : xs)
            b.append(b.length() > 1 ? "," : "").append(x instanceof Card ? ((Card) x).getId() : x);
        return b.append("]").toString();
    }

    private void picture(String what) {
        TreeSet<Integer> hand = new TreeSet<>();
        for (Card c : cards)
            hand.add(c.getId());
        System.err.println("{\"picture\":\"" + what + "\",\"hand\":" + ids(hand) + ",\"pile\":" + ids(pile)
                + ",\"stock\":" + stock + ",\"turn\":" + turn + ",\"seat\":" + me + ",\"is_dealer\":" + (me != starting)
                + ",\"opp_taken\":" + ids(oppTaken) + ",\"opp_discarded\":" + ids(oppDiscarded)
                + ",\"opp_passed\":" + ids(oppPassed) + ",\"my_taken\":" + ids(myTaken)
                + ",\"my_discarded\":" + ids(myDiscarded) + ",\"my_passed\":" + ids(myPassed)
                + ",\"my_score\":" + scores[me] + ",\"opp_score\":" + scores[1 - me] + "}");
    }
}
