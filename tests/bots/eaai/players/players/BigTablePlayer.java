package players;

/** A player that loads a table of 300 MiB (more than the JVM's smallest heap) when its class loads. */
public class BigTablePlayer extends KitSimplePlayer {
    private static final long[][] TABLE = new long[300][];

    static {
        for (int i = 0; i < TABLE.length; i++)
            TABLE[i] = new long[1 << 17]; // 1 MiB each
    }
}
