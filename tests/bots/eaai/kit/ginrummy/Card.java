package ginrummy;

/**
 * Gin Arena's stand-in for the kit's card (tests only): one object per card, numbered
 * suit * 13 + rank with ranks A..K = 0..12 and suits C H S D = 0..3, as the kit numbers them.
 */
public class Card {
    public static final String[] rankNames = {"A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"};
    public static final String[] suitNames = {"C", "H", "S", "D"};
    public static final int NUM_RANKS = 13;
    public static final int NUM_SUITS = 4;
    public static final int NUM_CARDS = 52;
    public static final Card[] allCards = new Card[NUM_CARDS];

    static {
        for (int s = 0; s < NUM_SUITS; s++)
            for (int r = 0; r < NUM_RANKS; r++)
                allCards[s * NUM_RANKS + r] = new Card(r, s);
    }

    public final int rank;
    public final int suit;

    /** Public, as the kit's: a player may make a Card of its own, which the kit never takes for one of its 52. */
    public Card(int rank, int suit) {
        this.rank = rank;
        this.suit = suit;
    }

    public static Card getCard(int id) {
        return allCards[id];
    }

    public static Card getCard(int rank, int suit) {
        return allCards[suit * NUM_RANKS + rank];
    }

    public int getRank() {
        return rank;
    }

    public int getSuit() {
        return suit;
    }

    public int getId() {
        return suit * NUM_RANKS + rank;
    }

    @Override
    public String toString() {
        return rankNames[rank] + suitNames[suit];
    }
}
