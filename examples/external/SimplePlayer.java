// The Simple player (bots/simple.py) as an external bot in Java 17: one file, no libraries.
//
//   javac -d build examples/external/SimplePlayer.java
//   arena check-bot 'cmd:java -Xmx64m -XX:+UseSerialGC -XX:CompressedClassSpaceSize=64m -XX:ReservedCodeCacheSize=64m -cp build SimplePlayer'
//
// The protocol is described in docs/PROTOCOL.md: one JSON line in, one line out.
// (The JVM options keep it well inside the arena's default 2 GiB address-space limit:
// a JVM reserves a heap sized from the machine's memory, 1 GiB of class space and
// 240 MiB of code cache up front, and may not start, or fail later, under the limit.
// The serial GC needs the fewest threads.)
//
// Policy (the EAAI SimpleGinRummyPlayer): take the upcard or the top discard only
// if it then sits in some meld; discard a card that leaves the least deadwood
// (ties at random, never the card just taken from the pile, and never one that
// repeats a (drawn card, discarded card) pair already played this hand, unless
// every card would); knock at the first chance; always declare big gin.  Its random numbers come from the game's seed
// the way the arena's in-process bots draw theirs (xoshiro256** seeded by
// splitmix64), so it plays exactly the moves of the built-in simple bot.

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public final class SimplePlayer {

    // --- random numbers: xoshiro256** seeded by splitmix64 (as arena/rng.py) ------------

    static long splitmix64(long x) {
        long z = x + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    static final class Rng {
        final long[] s = new long[4];

        Rng(long seed) {
            long x = seed;
            for (int i = 0; i < 4; i++) {
                x += 0x9E3779B97F4A7C15L;
                s[i] = splitmix64(x);
            }
        }

        long nextU64() {
            long result = Long.rotateLeft(s[1] * 5, 7) * 9;
            long t = s[1] << 17;
            s[2] ^= s[0];
            s[3] ^= s[1];
            s[1] ^= s[2];
            s[0] ^= s[3];
            s[2] ^= t;
            s[3] = Long.rotateLeft(s[3], 45);
            return result;
        }

        /** A random int in 0..n-1 (multiply-shift, as the arena's rand_below). */
        int below(int n) {
            return (int) (((nextU64() >>> 32) * n) >>> 32);
        }
    }

    // --- melds and deadwood -------------------------------------------------------------
    // A card is suit * 13 + rank (rank 0 = Ace .. 12 = King); per suit a hand is a 13-bit
    // mask.  With runs only, a suit's best arrangement melds exactly the cards lying in a
    // window of three consecutive held ranks, so its deadwood is a table look-up; sets (3
    // or 4 cards of a rank) are tried on top of that.

    static final int[] RUN_DW = new int[1 << 13];

    static {
        for (int m = 0; m < (1 << 13); m++) {
            int starts = m & (m >> 1) & (m >> 2);
            int covered = starts | (starts << 1) | (starts << 2);
            int left = m & ~covered;
            int dw = 0;
            for (int r = 0; r < 13; r++) {
                if (((left >> r) & 1) != 0) dw += Math.min(r + 1, 10);
            }
            RUN_DW[m] = dw;
        }
    }

    static int[] suitsOf(long hand) {
        return new int[] {(int) (hand & 0x1FFF), (int) ((hand >>> 13) & 0x1FFF), (int) ((hand >>> 26) & 0x1FFF),
            (int) ((hand >>> 39) & 0x1FFF)};
    }

    /** Every way of taking sets out of a hand, as the suit masks that are left. */
    static List<int[]> setChoices(int[] suits) {
        List<int[]> choices = new ArrayList<>();
        choices.add(suits);
        int c = suits[0], d = suits[1], h = suits[2], s = suits[3];
        int three = (c & d & (h | s)) | (h & s & (c | d));
        for (int r = 0; r < 13; r++) {
            int bit = 1 << r;
            if ((three & bit) == 0) continue;
            List<int[]> grown = new ArrayList<>();
            for (int[] left : choices) {
                grown.add(left);
                List<Integer> held = new ArrayList<>();
                for (int t = 0; t < 4; t++) if ((left[t] & bit) != 0) held.add(t);
                // the whole set, and with four cards each set of three
                List<List<Integer>> subsets = new ArrayList<>();
                subsets.add(held);
                if (held.size() == 4) {
                    for (int out : held) {
                        List<Integer> sub = new ArrayList<>(held);
                        sub.remove(Integer.valueOf(out));
                        subsets.add(sub);
                    }
                }
                for (List<Integer> chosen : subsets) {
                    int[] rest = left.clone();
                    for (int t : chosen) rest[t] &= ~bit;
                    grown.add(rest);
                }
            }
            choices = grown;
        }
        return choices;
    }

    /** For each card of {@code cards} (all in hand): least deadwood of the hand without it. */
    static int[] deadwoodAfterDiscards(long hand, int[] cards) {
        int[] best = new int[cards.length];
        java.util.Arrays.fill(best, 1000);
        for (int[] rest : setChoices(suitsOf(hand))) {
            int total = RUN_DW[rest[0]] + RUN_DW[rest[1]] + RUN_DW[rest[2]] + RUN_DW[rest[3]];
            for (int i = 0; i < cards.length; i++) {
                int m = rest[cards[i] / 13];
                int bit = 1 << (cards[i] % 13);
                if ((m & bit) != 0) { // the card is not in a set of this choice
                    int v = total - RUN_DW[m] + RUN_DW[m ^ bit];
                    if (v < best[i]) best[i] = v;
                }
            }
        }
        return best;
    }

    static boolean inAnyMeld(long hand, int card) {
        long h = hand | (1L << card);
        int r = card % 13, s = card / 13;
        int same = 0;
        for (int t = 0; t < 4; t++) same += (int) ((h >>> (13 * t + r)) & 1);
        if (same >= 3) return true;
        int m = (int) ((h >>> (13 * s)) & 0x1FFF);
        for (int lo = r - 2; lo <= r; lo++) {
            if (lo >= 0 && lo + 2 <= 12 && ((m >> lo) & 7) == 7) return true;
        }
        return false;
    }

    // --- the decisions -----------------------------------------------------------------------

    /** What the bot keeps during one game: its random numbers and the repeat guard. */
    static final class Game {
        final Rng rng;
        int handNo = -1; // the hand the notes below belong to
        long before = 0; // my hand before this turn's draw
        long[] pairs = new long[52]; // pairs[c]: cards d such that {c, d} was played this hand

        Game(long seed) { rng = new Rng(seed); }

        void noteHand(int hand_no, long hand) {
            if (hand_no != handNo) {
                handNo = hand_no;
                pairs = new long[52];
            }
            before = hand;
        }

        /** The card drawn this turn, or -1 if unknown. */
        int drawnCard(int hand_no, int justTaken, long hand) {
            if (hand_no != handNo) return -1;
            if (justTaken >= 0) return justTaken;
            long fresh = hand & ~before;
            if (fresh == 0 || (fresh & (fresh - 1)) != 0) return -1;
            return Long.numberOfTrailingZeros(fresh);
        }
    }

    static int decide(Map<String, Object> msg, Game game) {
        String kind = (String) msg.get("decision");
        long hand = 0;
        for (Object c : asList(msg.get("hand"))) hand |= 1L << asInt(c);
        int handNo = asInt(msg.get("hand_no"));
        switch (kind) {
            case "take_upcard":
            case "draw":
                game.noteHand(handNo, hand);
                return inAnyMeld(hand, asInt(msg.get("top"))) ? 1 : 0;
            case "big_gin":
            case "knock":
                return 1;
            default: { // discard: least deadwood, never the card just taken, no repeated pair; ties at random
                int justTaken = asInt(msg.get("just_taken"));
                long allowed = justTaken >= 0 ? hand & ~(1L << justTaken) : hand;
                int drawn = game.drawnCard(handNo, justTaken, hand);
                if (drawn >= 0 && (allowed & ~game.pairs[drawn]) != 0) allowed &= ~game.pairs[drawn];
                int[] cards = new int[Long.bitCount(allowed)];
                for (int c = 0, i = 0; c < 52; c++) if (((allowed >>> c) & 1) != 0) cards[i++] = c;
                int[] after = deadwoodAfterDiscards(hand, cards);
                int least = Integer.MAX_VALUE;
                for (int v : after) least = Math.min(least, v);
                List<Integer> tied = new ArrayList<>();
                for (int i = 0; i < cards.length; i++) if (after[i] == least) tied.add(cards[i]);
                int card = tied.get(game.rng.below(tied.size()));
                if (drawn >= 0) {
                    game.pairs[drawn] |= 1L << card;
                    game.pairs[card] |= 1L << drawn;
                }
                return card;
            }
        }
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        Game game = new Game(0);
        String line;
        while ((line = in.readLine()) != null) {
            Map<String, Object> msg = asMap(new Json(line).value());
            String type = (String) msg.get("type");
            if ("hello".equals(type)) {
                out.print("{\"name\":\"simple-java\",\"protocol\":1,"
                        + "\"description\":\"The Simple player, as an external Java program\"}\n");
            } else if ("decide".equals(type)) {
                if (Boolean.TRUE.equals(msg.get("new_game"))) game = new Game(asLong(msg.get("seed")));
                out.print(decide(msg, game) + "\n");
            } else if ("bye".equals(type)) {
                break;
            }
            out.flush();
        }
    }

    // --- a small JSON reader (objects, arrays, strings, numbers, true/false/null) ------------

    @SuppressWarnings("unchecked")
    static Map<String, Object> asMap(Object o) { return (Map<String, Object>) o; }

    @SuppressWarnings("unchecked")
    static List<Object> asList(Object o) { return (List<Object>) o; }

    static int asInt(Object o) { return (int) asLong(o); }

    static long asLong(Object o) { return ((Number) o).longValue(); }

    static final class Json {
        private final String s;
        private int i;

        Json(String s) { this.s = s; }

        Object value() {
            skip();
            char c = s.charAt(i);
            if (c == '{') return object();
            if (c == '[') return array();
            if (c == '"') return string();
            if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
            if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            return number();
        }

        private void skip() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
        }

        private Map<String, Object> object() {
            Map<String, Object> m = new HashMap<>();
            i++;
            skip();
            if (s.charAt(i) == '}') { i++; return m; }
            while (true) {
                skip();
                String key = string();
                skip();
                i++; // ':'
                m.put(key, value());
                skip();
                if (s.charAt(i++) == '}') return m; // else ','
            }
        }

        private List<Object> array() {
            List<Object> a = new ArrayList<>();
            i++;
            skip();
            if (s.charAt(i) == ']') { i++; return a; }
            while (true) {
                a.add(value());
                skip();
                if (s.charAt(i++) == ']') return a; // else ','
            }
        }

        private String string() {
            StringBuilder b = new StringBuilder();
            i++; // opening quote
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') return b.toString();
                if (c == '\\') {
                    char e = s.charAt(i++);
                    switch (e) {
                        case 'n': b.append('\n'); break;
                        case 't': b.append('\t'); break;
                        case 'r': b.append('\r'); break;
                        case 'b': b.append('\b'); break;
                        case 'f': b.append('\f'); break;
                        case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                        default: b.append(e);
                    }
                } else {
                    b.append(c);
                }
            }
        }

        private Number number() {
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            String t = s.substring(start, i);
            if (t.indexOf('.') >= 0 || t.indexOf('e') >= 0 || t.indexOf('E') >= 0) return Double.parseDouble(t);
            return Long.parseLong(t);
        }
    }
}
