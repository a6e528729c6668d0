package players;

/**
 * A player whose constructor raises from the third object on: the handshake's and the first game's
 * are made, and the second game forfeits.
 */
public class SecondCtorThrowPlayer extends KitSimplePlayer {
    private static int made;

    public SecondCtorThrowPlayer() {
        if (++made > 2)
            throw new IllegalStateException("made twice");
    }
}
