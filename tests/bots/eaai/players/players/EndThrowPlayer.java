package players;

/** A player whose reportScores raises once the game is won: after the game's last hand, no decision follows. */
public class EndThrowPlayer extends KitSimplePlayer {
    @Override
    public void reportScores(int[] scores) {
        if (scores[0] >= 100 || scores[1] >= 100)
            throw new IllegalStateException("scores past the target");
    }
}
