package players;

/** A player whose constructor always raises; the adapter makes one at the handshake. */
public class CtorThrowPlayer extends KitSimplePlayer {
    public CtorThrowPlayer() {
        throw new IllegalStateException("no table to load");
    }
}
