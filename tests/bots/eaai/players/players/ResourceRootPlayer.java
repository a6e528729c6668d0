package players;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;

/**
 * The kit-style Simple player that finds its table from the class path's root, getResource("/"),
 * as players using the kit's own file helper do (written here, not the kit's code): plain Java
 * with the player's folder first on the class path reads table.txt beside its classes.
 */
public class ResourceRootPlayer extends KitSimplePlayer {
    static final List<String> TABLE;

    static {
        try {
            Path root = Paths.get(ResourceRootPlayer.class.getResource("/").toURI());
            TABLE = Files.readAllLines(root.resolve("table.txt"));
        } catch (Exception e) {
            throw new ExceptionInInitializerError(e);
        }
        System.err.println("resource root table: " + TABLE.size() + " lines");
    }
}
