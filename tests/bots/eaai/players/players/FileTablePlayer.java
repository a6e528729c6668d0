package players;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Scanner;

/**
 * The kit-style Simple player that loads a table from the file beside its class (table.txt)
 * while its class loads, with java.nio.file.Files and java.util.Scanner, as trained players do.
 */
public class FileTablePlayer extends KitSimplePlayer {
    static final List<String> TABLE;
    static final int SUM;

    static {
        try {
            Path here = Path.of(FileTablePlayer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path file = here.resolve("table.txt");
            TABLE = Files.readAllLines(file);
            int sum = 0;
            try (Scanner scan = new Scanner(new File(file.toString()))) {
                while (scan.hasNextInt())
                    sum += scan.nextInt();
            }
            SUM = sum;
        } catch (Exception e) {
            throw new ExceptionInInitializerError(e);
        }
        System.err.println("loaded table: " + TABLE.size() + " lines, sum " + SUM);
    }
}
