package players;

/** A player class that cannot be constructed. */
public abstract class AbstractPlayer extends KitSimplePlayer {
}
