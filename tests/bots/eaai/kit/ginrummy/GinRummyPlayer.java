package ginrummy;

import java.util.ArrayList;

/**
 * Gin Arena's stand-in for the EAAI kit's player interface, written for the arena's tests:
 * the same package, name and method signatures, so a player compiled against it runs with
 * the real kit too.  The kit's game calls these in the order the arena's adapter follows.
 */
public interface GinRummyPlayer {
    /** A hand begins: this player's number, the number of the player who acts first, its ten cards. */
    void startGame(int playerNum, int startingPlayerNum, Card[] cards);

    /** Take the face-up card (true) or draw from the face-down stock (false). */
    boolean willDrawFaceUpCard(Card card);

    /** A player drew a card; null when it came from the stock and the player is the opponent. */
    void reportDraw(int playerNum, Card drawnCard);

    /** The card to discard (never the face-up card just taken). */
    Card getDiscard();

    /** A player discarded a card. */
    void reportDiscard(int playerNum, Card discardedCard);

    /** After each own discard: melds to knock with, or null to play on; asked again when the opponent knocked. */
    ArrayList<ArrayList<Card>> getFinalMelds();

    /** A player's melds at the end of a hand. */
    void reportFinalMelds(int playerNum, ArrayList<ArrayList<Card>> melds);

    /** The game scores after a hand, by player number. */
    void reportScores(int[] scores);

    /** A card laid off on one of the opponent's melds (the meld as it was before). */
    void reportLayoff(int playerNum, Card layoffCard, ArrayList<Card> opponentMeld);

    /** A player's whole hand at the end of a hand. */
    void reportFinalHand(int playerNum, ArrayList<Card> hand);
}
