package players;

import ginrummy.Card;
import ginrummy.GinRummyPlayer;
import ginrummy.GinRummyUtil;

import java.util.ArrayList;
import java.util.Random;

/**
 * A kit-style Simple player, written here for the arena's tests: the algorithm of Gin Arena's
 * built-in "simple" bot on the kit's interface.  Take the face-up card only if it joins a
 * meld; discard a card leaving the least deadwood (ties at random, never the face-up card
 * just taken, never repeating a {drawn, discarded} pair of this hand); knock at once.
 */
public class KitSimplePlayer implements GinRummyPlayer {
    protected int playerNum;
    protected final ArrayList<Card> cards = new ArrayList<>();
    protected Random random = new Random();
    protected boolean opponentKnocked;
    protected Card faceUpCard, drawnCard;
    protected final ArrayList<Long> drawDiscard = new ArrayList<>();

    @Override
    public void startGame(int playerNum, int startingPlayerNum, Card[] dealt) {
        this.playerNum = playerNum;
        cards.clear();
        for (Card c : dealt)
            cards.add(c);
        opponentKnocked = false;
        drawDiscard.clear();
        faceUpCard = drawnCard = null;
    }

    @Override
    public boolean willDrawFaceUpCard(Card card) {
        faceUpCard = card;
        ArrayList<Card> more = new ArrayList<>(cards);
        more.add(card);
        for (ArrayList<Card> meld : GinRummyUtil.cardsToAllMelds(more))
            if (meld.contains(card))
                return true;
        return false;
    }

    @Override
    public void reportDraw(int who, Card card) {
        if (who == playerNum) {
            cards.add(card);
            drawnCard = card;
        }
    }

    @Override
    public Card getDiscard() {
        int least = Integer.MAX_VALUE;
        ArrayList<Card> candidates = new ArrayList<>();
        for (Card card : cards) {
            if (card == drawnCard && drawnCard == faceUpCard)
                continue;
            long pair = (1L << card.getId()) | (drawnCard == null ? 0 : 1L << drawnCard.getId());
            if (drawDiscard.contains(pair))
                continue;
            ArrayList<Card> rest = new ArrayList<>(cards);
            rest.remove(card);
            ArrayList<ArrayList<ArrayList<Card>>> best = GinRummyUtil.cardsToBestMeldSets(rest);
            int dw = best.isEmpty() ? GinRummyUtil.getDeadwoodPoints(rest) : GinRummyUtil.getDeadwoodPoints(best.get(0), rest);
            if (dw < least) {
                least = dw;
                candidates.clear();
            }
            if (dw == least)
                candidates.add(card);
        }
        Card out = candidates.get(random.nextInt(candidates.size()));
        drawDiscard.add((1L << out.getId()) | (drawnCard == null ? 0 : 1L << drawnCard.getId()));
        return out;
    }

    @Override
    public void reportDiscard(int who, Card card) {
        if (who == playerNum)
            cards.remove(card);
    }

    @Override
    public ArrayList<ArrayList<Card>> getFinalMelds() {
        ArrayList<ArrayList<ArrayList<Card>>> best = GinRummyUtil.cardsToBestMeldSets(cards);
        int dw = best.isEmpty() ? GinRummyUtil.getDeadwoodPoints(cards) : GinRummyUtil.getDeadwoodPoints(best.get(0), cards);
        if (!opponentKnocked && dw > GinRummyUtil.MAX_DEADWOOD)
            return null;
        return best.isEmpty() ? new ArrayList<>() : best.get(random.nextInt(best.size()));
    }

    @Override
    public void reportFinalMelds(int who, ArrayList<ArrayList<Card>> melds) {
        if (who != playerNum)
            opponentKnocked = true;
    }

    @Override
    public void reportScores(int[] scores) {
    }

    @Override
    public void reportLayoff(int who, Card card, ArrayList<Card> meld) {
    }

    @Override
    public void reportFinalHand(int who, ArrayList<Card> hand) {
    }
}
