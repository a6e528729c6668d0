package players;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** A player that searches on a thread pool it never shuts down (its threads are not daemons), as many do. */
public class PoolPlayer extends KitSimplePlayer {
    private static final ExecutorService POOL = Executors.newFixedThreadPool(1);

    @Override
    public boolean willDrawFaceUpCard(ginrummy.Card card) {
        try {
            return POOL.submit(() -> super.willDrawFaceUpCard(card)).get();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
