package players;

/** A player whose constructor raises from the second object on: the second game forfeits. */
public class SecondCtorThrowPlayer extends KitSimplePlayer {
    private static int made;

    public SecondCtorThrowPlayer() {
        if (++made > 1)
            throw new IllegalStateException("made twice");
    }
}
