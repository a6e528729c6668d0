package players;

/** A player whose reportScores raises at the end of every hand: the game forfeits at its next decision. */
public class ScoresThrowPlayer extends KitSimplePlayer {
    @Override
    public void reportScores(int[] scores) {
        throw new IllegalStateException("no scores wanted");
    }
}
