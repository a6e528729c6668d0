package players;

/** NullMeldPlayer with a null card in its first knocking meld instead of a null meld. */
public class NullCardPlayer extends NullMeldPlayer {
    public NullCardPlayer() {
        nullCard = true;
    }
}
