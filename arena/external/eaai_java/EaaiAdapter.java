package ginarena;

import ginrummy.Card;
import ginrummy.GinRummyPlayer;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Gin Arena's adapter for players written against the EAAI Gin Rummy kit.
 *
 * It speaks the arena's external-bot protocol (docs/PROTOCOL.md) on stdin and
 * stdout and drives one class implementing the kit's ginrummy.GinRummyPlayer,
 * calling its methods in the order the kit's own game calls them:
 * startGame at each hand, willDrawFaceUpCard, reportDraw (the opponent's stock
 * draws as null), getDiscard, reportDiscard, getFinalMelds after each of its
 * discards (melds returned = a knock), and at the end of a hand
 * reportFinalMelds, reportLayoff, reportFinalHand and reportScores.
 *
 * The arena never tells a player what the opponent did; the adapter works it
 * out from two successive pictures of the table and checks, at every decision,
 * that its own mirror of the table equals what the arena sends.  When they
 * differ it resigns the game with the reason ("out of step"), so a fault of
 * the adapter is never played on in silence.
 *
 * Cards: the arena numbers a card suit * 13 + rank with suits c d h s; the kit
 * numbers it suit * 13 + rank with suits C H S D.  A new player object is made
 * for every game, as the kit makes one, after the generators are seeded from that
 * game's seed (see Seeder), so the same seed replays the same game wherever the
 * game falls in the process.  One more is made at the handshake and dropped, so
 * that a player that cannot be made fails to load instead of forfeiting every game.
 *
 * Usage: java -cp player:kit:adapter ginarena.EaaiAdapter com.example.MyPlayer PLAYER_PATH KIT_PATH
 * (the player's jar or class folder and the kit's, as on the class path).
 */
public final class EaaiAdapter {
    /** The arena's suit (c d h s) of each kit suit (C H S D), and back. */
    private static final int[] OUR_SUIT = {0, 2, 3, 1};
    private static final int[] KIT_SUIT = {0, 3, 1, 2};
    /** The seed of the generators the handshake's player object's constructor may draw from (see main). */
    private static final long LOAD_SEED = 0x5EED0F5BA5EL;

    private final Class<?> playerClass;
    private final PrintStream out;
    private GinRummyPlayer player;
    private long gameSeed;
    // A hand_over line began the game (its first hand ended before our first turn): the game's first
    // decide line says new_game again, and must not make the player anew, forgetting that hand.
    private boolean begunByHandOver;

    // The adapter's mirror of the table, for this seat and hand.
    private int seat = -1, handNo = -1, stock;
    private int turn; // discards so far in this hand, both players' (the table's "turn")
    private long hand, oppTaken, oppDiscarded;
    private final List<Integer> pile = new ArrayList<>();
    private ArrayList<ArrayList<Card>> finalMelds; // what getFinalMelds returned after our last discard
    private boolean askedFinal; // getFinalMelds was asked after our last discard, and a knock may follow
    private String fault; // set when the player did something the kit forfeits; reported at the next decision
    private boolean inHand;
    private String calling; // the player's method the adapter called last, for the reason when it raises
    private int knockLimit = 10;

    private EaaiAdapter(Class<?> playerClass, PrintStream out) {
        this.playerClass = playerClass;
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        fixCardHashes();
        // stdout is the protocol's: the player's own prints go to stderr (the arena keeps them in its log).
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        if (args.length != 3) {
            System.err.println("usage: java ginarena.EaaiAdapter PLAYER_CLASS PLAYER_PATH KIT_PATH");
            System.exit(2);
        }
        String loadError = null;
        Class<?> cls = null;
        try {
            cls = Class.forName(args[0]);
            if (!GinRummyPlayer.class.isAssignableFrom(cls)) {
                loadError = args[0] + " does not implement ginrummy.GinRummyPlayer";
            } else {
                // Made only to see that it can be made (and so that the class initializers it runs
                // run here, at the same point in every process); then dropped.  Each game's object
                // is made in newGame, after the generators are seeded from that game's seed: while
                // this one played the first game, what its constructor drew came from this fixed
                // seed, and a game played first in its process differed from the same game later.
                Seeder.findStatics(cls.getName(), new File(args[1]), new File(args[2]));
                Seeder.seedShared(LOAD_SEED);
                construct(cls);
            }
        } catch (ClassNotFoundException e) {
            loadError = "class " + args[0] + " not found on the class path" + nestedHint(args[0]);
        } catch (PlayerFault e) {
            loadError = e.getMessage();
        } catch (Throwable e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            loadError = "loading " + args[0] + " failed: " + e.getClass().getName() + " (" + cause + ")";
        }
        EaaiAdapter adapter = new EaaiAdapter(cls, protocol);
        String line;
        while ((line = in.readLine()) != null) {
            Map<String, Object> msg = Json.object(line);
            String type = (String) msg.get("type");
            if ("hello".equals(type)) {
                if (loadError != null) {
                    adapter.send("{\"error\":" + Json.quote(loadError) + "}");
                    System.exit(0);
                }
                adapter.send("{\"name\":" + Json.quote(botName(cls)) + ",\"protocol\":1,\"description\":"
                        + Json.quote("EAAI kit player " + cls.getName()) + ",\"hand_over\":true,\"melds\":true}");
            } else if ("decide".equals(type)) {
                String answer;
                try {
                    answer = adapter.decide(msg);
                } catch (OutOfStep e) {
                    answer = "{\"error\":" + Json.quote("eaai adapter out of step with the table: " + e.getMessage()) + "}";
                } catch (PlayerFault e) {
                    answer = "{\"error\":" + Json.quote(e.getMessage()) + "}";
                } catch (Throwable e) {
                    answer = "{\"error\":" + Json.quote("the player raised " + e + adapter.inCall()) + "}";
                }
                adapter.send(answer);
            } else if ("hand_over".equals(type)) {
                String why = null;
                try {
                    adapter.handOver(msg);
                } catch (OutOfStep e) {
                    why = "eaai adapter out of step with the table: " + e.getMessage();
                } catch (PlayerFault e) {
                    why = e.getMessage();
                } catch (Throwable e) {
                    why = "the player raised " + e + adapter.inCall() + " at the end of the last hand";
                }
                if (why != null) {
                    // It forfeits the game at the game's next decision; after the game's last hand
                    // none comes (the game is scored), so the bot's log is where it shows.
                    adapter.fault = why;
                    System.err.println("[eaai adapter] " + why);
                }
            } else if ("bye".equals(type)) {
                break;
            }
        }
        // Not a return from main: a thread the player started and never stopped (a thread pool not
        // shut down, as many searching players leave one) would keep the JVM alive, and the arena
        // would wait out its grace and kill it at the end of every process.
        System.exit(0);
    }

    /**
     * "; a nested class is named Outer$Inner" when ``name`` (Outer.Inner, as Java source writes it)
     * names no class but its last dot read as a '$' does; else "".
     */
    static String nestedHint(String name) {
        int dot = name.lastIndexOf('.');
        if (dot <= 0)
            return "";
        String nested = name.substring(0, dot) + "$" + name.substring(dot + 1);
        try {
            Class.forName(nested, false, ClassLoader.getSystemClassLoader());
            return "; a nested class is named with a $: " + nested;
        } catch (Throwable e) {
            return "";
        }
    }

    /** " in reportScores" after "the player raised X": the method it raised in, when the adapter had called one. */
    private String inCall() {
        return calling == null ? "" : " in " + calling;
    }

    /** One line, in one write: a player thread that exits the JVM between two writes left half a line. */
    private void send(String s) {
        byte[] line = (s + "\n").getBytes(StandardCharsets.UTF_8);
        out.write(line, 0, line.length);
        out.flush();
    }

    /**
     * A new player object, as the kit makes one for each game; a PlayerFault says in one line why
     * none can be made (the constructor's own exception, not the reflection's wrapper around it).
     */
    static GinRummyPlayer construct(Class<?> cls) throws PlayerFault {
        String name = cls.getName();
        if (Modifier.isAbstract(cls.getModifiers()))
            throw new PlayerFault(name + " is abstract" + (cls.isInterface() ? " (an interface)" : "")
                    + ": name a class that can be constructed");
        try {
            Constructor<?> c = cls.getDeclaredConstructor();
            c.setAccessible(true);
            return (GinRummyPlayer) c.newInstance();
        } catch (NoSuchMethodException e) {
            throw new PlayerFault(name + " has no constructor without arguments");
        } catch (InvocationTargetException e) {
            throw new PlayerFault("the constructor of " + name + " raised " + describe(e.getCause()));
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new PlayerFault(name + " cannot be constructed: " + describe(e));
        }
    }

    /** An exception and, when its own text leaves it out, its cause (an initializer's error, say). */
    static String describe(Throwable e) {
        Throwable cause = e.getCause();
        String s = e.toString();
        return cause == null || s.contains(cause.toString()) ? s : s + " (" + cause + ")";
    }

    static String botName(Class<?> cls) {
        String s = cls.getSimpleName().replaceAll("[^A-Za-z0-9_.+-]", "");
        if (s.isEmpty() || !Character.isLetterOrDigit(s.charAt(0)))
            s = "eaai-" + s;
        return s.length() > 64 ? s.substring(0, 64) : s;
    }

    // --- cards -------------------------------------------------------------------------------

    /**
     * Gives the kit's 52 Card objects their identity hashes, in card order, before any of the
     * player's code runs.  The kit's Card has no hashCode, so a player's HashSet<Card> or
     * HashMap<Card, ...> iterates in an order its identity hashes decide; HotSpot gives an object
     * its hash when first asked, from the asking thread's generator, so the cards' hashes depended
     * on how many hashes the process had given out before: on the game's place in its process.
     * Asked here, first thing, the cards get the same hashes in every process (measured with
     * OpenJDK 17: the same 52 hashes at every start, on one core (taskset) or two, for two players
     * and heaps of 256 and 2304 MiB; another JVM version, or other options, such as no seeding
     * agent, give others).  It costs nothing per game: once per process, the cards' class loading.
     *
     * The other choice, -XX:hashCode=2 (every identity hash 1), would fix the order of every
     * object's too, but makes every HashSet or HashMap of objects without a hashCode a list: 50,000
     * objects took 41 s to add and look up three times, against 0.1 s (a search's nodes in a
     * HashMap would time out).  So the hashes of the objects the player makes itself still depend
     * on what the process did before (the docs say so).
     */
    static void fixCardHashes() {
        try {
            for (int c = 0; c < 52; c++)
                System.identityHashCode(Card.getCard(c % 13, c / 13));
        } catch (Throwable e) {
            // a kit whose Card cannot load: the player's loading below fails with the reason
        }
    }

    static Card kit(int ours) {
        return Card.getCard(ours % 13, KIT_SUIT[ours / 13]);
    }

    /**
     * Our number of a card the player returned, which must be one of the kit's 52 objects, or a
     * PlayerFault naming it after ``returned``.  The kit's Card has no equals: the kit forfeits a
     * discard that is not one of the hand's objects (ArrayList.contains), and counts a meld's card
     * that is not as deadwood (a HashSet of the melded cards), though it checks the meld by the
     * card's number; a rank or suit out of range is another card's number there, or an index
     * error.  So any Card but the kit's own is refused, with the same reason in both places.
     */
    static int ours(Card c, String returned) throws PlayerFault {
        int rank = c.getRank(), suit = c.getSuit();
        boolean real = rank >= 0 && rank < 13 && suit >= 0 && suit < 4;
        if (real && Card.getCard(rank, suit) == c)
            return OUR_SUIT[suit] * 13 + rank;
        throw new PlayerFault(returned + " a Card that is not one of the kit's 52 (rank " + rank + ", suit " + suit
                + (real ? ", like " + Card.getCard(rank, suit) : ", out of range")
                + ": made with new Card? return the kit's own, Card.getCard(rank, suit))");
    }

    static Card[] kitCards(long mask) {
        List<Card> out = new ArrayList<>();
        for (int c = 0; c < 52; c++)
            if ((mask >> c & 1) != 0)
                out.add(kit(c));
        return out.toArray(new Card[0]);
    }

    static ArrayList<Card> kitList(List<Object> ids) {
        ArrayList<Card> out = new ArrayList<>();
        for (Object o : ids)
            out.add(kit(((Long) o).intValue()));
        return out;
    }

    static long mask(Object list) {
        long m = 0;
        for (Object o : (List<?>) list)
            m |= 1L << ((Long) o).intValue();
        return m;
    }

    static int integer(Map<String, Object> msg, String key) {
        return ((Long) msg.get(key)).intValue();
    }

    // --- decisions ---------------------------------------------------------------------------

    private String decide(Map<String, Object> msg) throws Exception {
        calling = null;
        long seed = ((Long) msg.get("seed")).longValue();
        if (Boolean.TRUE.equals(msg.get("new_game")) && !(begunByHandOver && seed == gameSeed)) {
            newGame(seed);
        }
        begunByHandOver = false;
        if (fault != null)
            return "{\"error\":" + Json.quote(fault) + "}";
        knockLimit = integer(msg, "knock_limit");
        int mySeat = integer(msg, "seat");
        int no = integer(msg, "hand_no");
        if (!inHand || no != handNo || mySeat != seat)
            startHand(msg, mySeat, no);
        String decision = (String) msg.get("decision");
        if (decision.equals("knock") || decision.equals("melds")) // right after our discard: nothing to report
            check(msg, mask(msg.get("hand")), integer(msg, "stock"));
        else
            catchUp(msg, false);
        if (fault != null)
            return "{\"error\":" + Json.quote(fault) + "}";
        switch (decision) {
            case "take_upcard":
            case "draw":
                calling = "willDrawFaceUpCard";
                return player.willDrawFaceUpCard(kit(integer(msg, "top"))) ? "1" : "0";
            case "big_gin":
                return "0"; // the kit has no big gin: eleven melded cards still discard
            case "discard": {
                calling = "getDiscard";
                Card d = player.getDiscard();
                if (d == null)
                    return "{\"error\":\"getDiscard returned null\"}";
                int c = ours(d, "getDiscard returned");
                if ((hand >> c & 1) == 0)
                    return Integer.toString(c); // the arena rejects it and forfeits, as the kit does
                hand &= ~(1L << c);
                pile.add(c);
                turn++;
                calling = "reportDiscard";
                player.reportDiscard(seat, d);
                calling = "getFinalMelds";
                finalMelds = player.getFinalMelds();
                askedFinal = true;
                return Integer.toString(c);
            }
            case "knock": {
                askedFinal = false;
                return finalMelds != null ? "1" : "0";
            }
            case "melds": {
                StringBuilder b = new StringBuilder("[");
                for (ArrayList<Card> meld : finalMelds) {
                    if (meld == null)
                        return "{\"error\":\"getFinalMelds returned a null meld\"}";
                    if (meld.contains(null))
                        return "{\"error\":\"getFinalMelds returned a meld that holds a null card\"}";
                    if (b.length() > 1)
                        b.append(',');
                    b.append('[');
                    for (int i = 0; i < meld.size(); i++)
                        b.append(i > 0 ? "," : "").append(ours(meld.get(i), "getFinalMelds returned a meld holding"));
                    b.append(']');
                }
                finalMelds = null;
                return "{\"melds\":" + b.append(']') + "}";
            }
            default:
                throw new OutOfStep("unknown decision " + decision);
        }
    }

    private void newGame(long seed) throws PlayerFault {
        fault = null;
        inHand = false;
        gameSeed = seed;
        player = null; // none for this game if it cannot be made
        Seeder.seedShared(seed ^ 0x3C6EF372FE94F82BL); // for what the constructor draws (see main)
        calling = null; // construct names the constructor itself
        player = construct(playerClass);
        Seeder.seed(player, seed);
    }

    private void startHand(Map<String, Object> msg, int mySeat, int no) throws OutOfStep {
        long h = mask(msg.get("hand"));
        if (Long.bitCount(h) != 10)
            throw new OutOfStep("a hand begins with " + Long.bitCount(h) + " cards in our hand, not 10");
        seat = mySeat;
        handNo = no;
        hand = h;
        oppTaken = oppDiscarded = 0;
        pile.clear();
        pile.add(integer(msg, "upcard"));
        stock = 31;
        turn = 0;
        finalMelds = null;
        askedFinal = false;
        inHand = true;
        int starting = Boolean.TRUE.equals(msg.get("is_dealer")) ? 1 - seat : seat;
        calling = "startGame";
        player.startGame(seat, starting, kitCards(h));
        // Again, for a generator startGame made (seeded from the game's seed, a new one each hand).
        Seeder.seed(player, gameSeed + 0x632BE59BD9B4E019L * (no + 1));
    }

    /**
     * Report, in the kit's order, what happened since our last decision; then check the mirror.
     *
     * Between two of our decisions either the opponent played one turn (a draw, from the stock
     * or the top of the pile, then a discard, which tops the pile), or we drew (our hand grew by
     * one card), or nothing moved.  Which one is read from the pile, the stock and the turn count,
     * not from the card sets (a card may be taken or discarded twice in a hand); the sets are
     * checked after.  The turn count is needed where the rules let a player discard the card it
     * just took (no_retake off): an opponent that takes the top card and throws it back leaves
     * the pile and the stock as they were.
     */
    private void catchUp(Map<String, Object> msg, boolean bigGin) throws OutOfStep {
        if (askedFinal && finalMelds != null) {
            // The arena offers a knock whenever the deadwood is within this hand's limit, so none
            // was offered: past the kit's own limit of 10 that is a forfeit in the kit; under a
            // lower limit the kit does not know (Oklahoma) the player simply plays on.
            if (knockLimit >= 10) {
                fault = "getFinalMelds returned melds although the deadwood is above the knock limit (the kit forfeits)";
                return;
            }
            finalMelds = null;
        }
        askedFinal = false;
        int opp = 1 - seat;
        int msgStock = integer(msg, "stock");
        List<Integer> table = new ArrayList<>();
        for (Object o : (List<?>) msg.get("pile"))
            table.add(((Long) o).intValue());
        int msgTurn = integer(msg, "turn");
        long h = mask(msg.get("hand"));
        long mine = h & ~hand;
        if (mine != 0) { // our own draw (from the pile, the stock, or the stock after both passed)
            if (Long.bitCount(mine) != 1 || (hand & ~h) != 0)
                throw new OutOfStep("our hand changed by more than one drawn card");
            int c = Long.numberOfTrailingZeros(mine);
            if (integer(msg, "just_taken") == c) {
                if (pile.isEmpty() || pile.get(pile.size() - 1) != c)
                    throw new OutOfStep("we took " + c + ", which was not on top of the pile");
                pile.remove(pile.size() - 1);
            } else {
                stock--;
            }
            hand = h;
            calling = "reportDraw";
            player.reportDraw(seat, kit(c));
        } else if (!(table.equals(pile) && msgStock == stock && msgTurn == turn)) { // the opponent's turn
            boolean fromStock = msgStock == stock - 1;
            if (!fromStock && msgStock != stock)
                throw new OutOfStep("the stock went from " + stock + " to " + msgStock + " cards in one turn");
            if (!fromStock && pile.isEmpty())
                throw new OutOfStep("the opponent drew from an empty pile");
            List<Integer> after = new ArrayList<>(pile);
            int taken = fromStock ? -1 : after.remove(after.size() - 1);
            boolean discarded = !bigGin || table.size() > after.size();
            if (discarded && !table.isEmpty())
                after.add(table.get(table.size() - 1));
            if (!after.equals(table) || (discarded && table.isEmpty()))
                throw new OutOfStep("the pile is " + table + " after one opponent turn from " + pile);
            if (fromStock) {
                stock--;
                calling = "reportDraw";
                player.reportDraw(opp, null);
            } else {
                oppTaken |= 1L << taken;
                calling = "reportDraw";
                player.reportDraw(opp, kit(taken));
            }
            pile.clear();
            pile.addAll(after);
            if (discarded) {
                int d = table.get(table.size() - 1);
                oppDiscarded |= 1L << d;
                turn++;
                calling = "reportDiscard";
                player.reportDiscard(opp, kit(d));
            }
        }
        check(msg, h, msgStock);
    }

    private void check(Map<String, Object> msg, long h, int msgStock) throws OutOfStep {
        if (h != hand)
            throw new OutOfStep("our hand is " + Long.toHexString(hand) + ", the table says " + Long.toHexString(h));
        if (msgStock != stock)
            throw new OutOfStep("the stock holds " + stock + " cards, the table says " + msgStock);
        int msgTurn = integer(msg, "turn");
        if (msgTurn != turn)
            throw new OutOfStep("this is turn " + turn + " of the hand, the table says " + msgTurn);
        List<?> p = (List<?>) msg.get("pile");
        boolean same = p.size() == pile.size();
        for (int i = 0; same && i < p.size(); i++)
            same = ((Long) p.get(i)).intValue() == pile.get(i);
        if (!same)
            throw new OutOfStep("the pile is " + pile + ", the table says " + p);
        if (mask(msg.get("opp_taken")) != oppTaken || mask(msg.get("opp_discarded")) != oppDiscarded)
            throw new OutOfStep("the opponent's takes or discards differ from the table's");
    }

    // --- the end of a hand ---------------------------------------------------------------------

    @SuppressWarnings("unchecked")
    private void handOver(Map<String, Object> msg) throws Exception {
        calling = null;
        if (Boolean.TRUE.equals(msg.get("new_game"))) {
            newGame(((Long) msg.get("seed")).longValue());
            begunByHandOver = true;
        }
        if (player == null || fault != null)
            return;
        int mySeat = integer(msg, "seat");
        int no = integer(msg, "hand_no");
        knockLimit = integer(msg, "knock_limit");
        if (!inHand || no != handNo || mySeat != seat) // the hand ended before our first turn
            startHand(msg, mySeat, no);
        String outcome = (String) msg.get("outcome");
        int knocker = integer(msg, "knocker");
        catchUp(msg, outcome.equals("big_gin") && knocker != seat);
        inHand = false;
        if (fault != null)
            return;
        if (knocker >= 0) {
            ArrayList<ArrayList<Card>> knockMelds = new ArrayList<>();
            for (Object m : (List<Object>) msg.get("knocker_melds"))
                knockMelds.add(kitList((List<Object>) m));
            calling = "reportFinalMelds";
            player.reportFinalMelds(knocker, copy(knockMelds));
            int defender = 1 - knocker;
            if (defender == seat) { // the kit asks the defender too; the arena lays out its best melds
                calling = "getFinalMelds";
                player.getFinalMelds();
            }
            ArrayList<ArrayList<Card>> defMelds = new ArrayList<>();
            for (Object m : (List<Object>) msg.get("defender_melds"))
                defMelds.add(kitList((List<Object>) m));
            calling = "reportFinalMelds";
            player.reportFinalMelds(defender, copy(defMelds));
            for (Object o : (List<Object>) msg.get("layoffs")) {
                Map<String, Object> lay = (Map<String, Object>) o;
                calling = "reportLayoff";
                player.reportLayoff(defender, kit(((Long) lay.get("card")).intValue()),
                        kitList((List<Object>) lay.get("meld")));
            }
        }
        List<Object> hands = (List<Object>) msg.get("hands");
        calling = "reportFinalHand";
        for (int j = 0; j < 2; j++)
            player.reportFinalHand(j, kitList((List<Object>) hands.get(j)));
        List<Object> scores = (List<Object>) msg.get("scores");
        calling = "reportScores";
        player.reportScores(new int[] {((Long) scores.get(0)).intValue(), ((Long) scores.get(1)).intValue()});
    }

    private static ArrayList<ArrayList<Card>> copy(ArrayList<ArrayList<Card>> melds) {
        ArrayList<ArrayList<Card>> out = new ArrayList<>();
        for (ArrayList<Card> m : melds)
            out.add(new ArrayList<>(m));
        return out;
    }

    static final class OutOfStep extends Exception {
        OutOfStep(String why) {
            super(why);
        }
    }

    /** The player cannot play: its message is the whole reason, for the arena's one line. */
    static final class PlayerFault extends Exception {
        PlayerFault(String why) {
            super(why);
        }
    }

    // --- seeding the player's generators ----------------------------------------------------

    /**
     * Seeds, from one seed, every java.util.Random the adapter can find before the player draws:
     * those in the player object's fields (and in their objects' fields, two levels deep), in the
     * static fields of its class and superclasses, the static Random fields of the other classes
     * of the player's jar or folder that its code refers to (findStatics), and Math.random's and
     * Collections.shuffle's.  It runs when a game's player is made and again after each startGame;
     * the generators that exist without the object (seedShared) are seeded before it is made too.
     *
     * The Randoms it cannot reach are seeded when they are made: the player's classes are rewritten
     * as they load (Rewriter) so that each "new Random()" of theirs is a SeededRandom, whose seed is
     * the next number of a stream restarted at every seeding (fresh).  Made in the same order in
     * a replay, they get the same seeds: one made and used within a method, made after startGame,
     * held in an array or a collection, or of the player's own subclass of Random.  A SecureRandom
     * adds entropy to any seed; ThreadLocalRandom, threads and clocks are beyond any seed.
     */
    static final class Seeder {
        /** The static Random fields of the player's other classes (findStatics), in name order. */
        private static final List<Field> STATICS = new ArrayList<>();
        private static final String RANDOM = "Ljava/util/Random;";
        /** The stream of the seeds of the Randoms the player makes (fresh), restarted by shared(). */
        private static long freshState = 0x5EED0F5BA5EL ^ 0x2545F4914F6CDD1DL;

        private long state;

        /** The seed of a Random the player makes with no seed: the stream's next number. */
        static synchronized long fresh() {
            Seeder s = new Seeder(freshState);
            long seed = s.next();
            freshState = s.state;
            return seed;
        }

        private static synchronized void restartFresh(long seed) {
            freshState = seed;
        }

        private Seeder(long seed) {
            state = seed;
        }

        /**
         * Find the classes of the player's jar or folder that its class refers to, directly or
         * through its other classes there, and that declare a static Random field; initialize them,
         * so that their generators exist to be seeded before the player draws from them.
         *
         * The class files are read, not loaded, to find out: no class is loaded or initialized but
         * these, since a class initializer may take long or fail, a jar may bundle whole libraries,
         * and a folder may hold other players.  Such a class is only initialized sooner than the
         * player would have.  Classes the kit also holds (a player folder with the kit inside) are
         * the kit's and left alone, as is the adapter's package.
         */
        static void findStatics(String playerClass, File player, File kit) {
            TreeMap<String, Boolean> reached = new TreeMap<>(); // class name -> declares a static Random
            try (ClassFiles mine = new ClassFiles(player); ClassFiles kits = new ClassFiles(kit)) {
                List<String> todo = new ArrayList<>(List.of(playerClass));
                while (!todo.isEmpty()) {
                    String name = todo.remove(todo.size() - 1);
                    if (reached.containsKey(name) || name.startsWith("ginarena.") || kits.has(name))
                        continue;
                    byte[] bytes = mine.read(name);
                    if (bytes != null)
                        reached.put(name, readClassFile(bytes, todo));
                }
            } catch (IOException | RuntimeException e) {
                System.err.println("[eaai adapter] cannot read the classes of " + player + ": " + e);
                return;
            }
            ClassLoader loader = ClassLoader.getSystemClassLoader();
            for (Map.Entry<String, Boolean> c : reached.entrySet()) {
                if (!c.getValue())
                    continue;
                try {
                    for (Field f : Class.forName(c.getKey(), true, loader).getDeclaredFields())
                        if (Modifier.isStatic(f.getModifiers()) && f.getType() == Random.class) {
                            f.setAccessible(true);
                            STATICS.add(f);
                        }
                } catch (Throwable e) {
                    System.err.println("[eaai adapter] cannot seed the static Random of " + c.getKey() + ": "
                            + describe(e));
                }
            }
        }

        /**
         * The class files of a jar or a class folder, read by class name when asked (a jar may
         * bundle whole libraries).  With java.io, not java.nio.file: NIO's first file channel sets
         * up the JVM's networking, whose socket() the wall refuses (check-bot would list it against
         * the player).
         */
        static final class ClassFiles implements AutoCloseable {
            private final File folder;
            private final JarFile jar;

            ClassFiles(File path) throws IOException {
                folder = path.isDirectory() ? path : null;
                jar = folder == null ? new JarFile(path) : null;
            }

            boolean has(String className) {
                String rel = file(className);
                return folder != null ? new File(folder, rel).isFile() : jar.getJarEntry(rel) != null;
            }

            /** The bytes of the class, or null when it is not here. */
            byte[] read(String className) throws IOException {
                if (!has(className))
                    return null;
                String rel = file(className);
                try (InputStream in = folder != null ? new FileInputStream(new File(folder, rel))
                        : jar.getInputStream(jar.getJarEntry(rel))) {
                    return in.readAllBytes();
                }
            }

            private static String file(String className) {
                return className.replace('.', '/') + ".class";
            }

            @Override
            public void close() throws IOException {
                if (jar != null)
                    jar.close();
            }
        }

        /**
         * Read a class file (JVMS 4.1, 4.4, 4.5): whether it declares a static field of type
         * java.util.Random; the names of the classes it refers to are added to refs.
         */
        static boolean readClassFile(byte[] b, List<String> refs) {
            boolean staticRandom = false;
            try {
                int[] at = Rewriter.pool(b);
                if (at == null)
                    return false;
                int count = at.length - 1;
                for (int i = 1; i < count; i++) // internal names (a/b/C), or array descriptors ([[La/b/C;)
                    if (at[i] != 0 && b[at[i]] == 7)
                        refs.add(Rewriter.text(b, at, Rewriter.u2(b, at[i] + 1)).replaceAll("^\\[+L|;$", "")
                                .replace('/', '.'));
                int p = at[count] + 6; // access flags, this class, super class
                p += 2 + 2 * Rewriter.u2(b, p); // interfaces
                int fields = Rewriter.u2(b, p);
                p += 2;
                for (int f = 0; f < fields; f++) { // access flags, name, descriptor, attributes
                    int access = Rewriter.u2(b, p), descriptor = Rewriter.u2(b, p + 4);
                    int attributes = Rewriter.u2(b, p + 6);
                    staticRandom |= (access & Modifier.STATIC) != 0 && Rewriter.utf8(b, at, descriptor, RANDOM);
                    p += 8;
                    for (int a = 0; a < attributes; a++) // name, length, body
                        p += 6 + Rewriter.u4(b, p + 2);
                }
            } catch (IOException | RuntimeException e) {
                // not a class file the JVM would load either: as far as it was read
            }
            return staticRandom;
        }

        private long next() { // splitmix64
            long z = (state += 0x9E3779B97F4A7C15L);
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            return z ^ (z >>> 31);
        }

        static void seed(Object player, long seed) {
            Seeder s = new Seeder(seed);
            IdentityHashMap<Object, Boolean> seen = new IdentityHashMap<>();
            for (Class<?> c = player.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
                for (Field f : c.getDeclaredFields()) {
                    if (f.getType().isPrimitive())
                        continue;
                    try {
                        f.setAccessible(true);
                        Object v = f.get(Modifier.isStatic(f.getModifiers()) ? null : player);
                        s.visit(v, seen, 2);
                    } catch (Throwable e) {
                        // a field the JVM will not open: nothing of ours to seed there
                    }
                }
            }
            s.shared(seen);
        }

        /**
         * Seeds the generators that exist before a player object does (the static ones of its classes,
         * Math.random's and Collections.shuffle's), for the draws its constructor makes.
         */
        static void seedShared(long seed) {
            new Seeder(seed).shared(new IdentityHashMap<>());
        }

        private void shared(IdentityHashMap<Object, Boolean> seen) {
            for (Field f : STATICS) {
                try {
                    visit(f.get(null), seen, 2);
                } catch (IllegalAccessException e) {
                    // cannot happen: findStatics opened it
                }
            }
            jdk("java.lang.Math$RandomNumberGeneratorHolder", "randomNumberGenerator", false);
            jdk("java.util.Collections", "r", true);
            restartFresh(next());
        }

        private void visit(Object v, IdentityHashMap<Object, Boolean> seen, int depth) {
            if (v == null || seen.put(v, Boolean.TRUE) != null)
                return;
            if (v instanceof Random) {
                // never a SecureRandom (its setSeed adds entropy), nor a subclass (setSeed may be its own)
                if (v.getClass() == Random.class || v.getClass() == SeededRandom.class)
                    ((Random) v).setSeed(next());
                return;
            }
            if (depth == 0 || v.getClass().getName().startsWith("java.") || v.getClass().isArray())
                return;
            for (Class<?> c = v.getClass(); c != null && c != Object.class; c = c.getSuperclass())
                for (Field f : c.getDeclaredFields()) {
                    if (f.getType().isPrimitive() || Modifier.isStatic(f.getModifiers()))
                        continue;
                    try {
                        f.setAccessible(true);
                        visit(f.get(v), seen, depth - 1);
                    } catch (Throwable e) {
                        // not ours to open
                    }
                }
        }

        private void jdk(String className, String field, boolean replace) {
            try {
                Field f = Class.forName(className).getDeclaredField(field);
                f.setAccessible(true);
                long seed = next();
                if (replace)
                    f.set(null, new Random(seed));
                else
                    ((Random) f.get(null)).setSeed(seed);
            } catch (Throwable e) {
                System.err.println("[eaai adapter] cannot seed " + className + "." + field + ": " + e);
            }
        }
    }

    // --- seeding the Randoms the player makes: its classes rewritten as they load -------------

    /**
     * What a player's "new Random()" makes once its class is rewritten (Rewriter): a Random seeded
     * from the adapter's stream of the game (Seeder.fresh), so that a Random made within a method,
     * or kept where the adapter cannot find it, draws the same numbers when the game is played
     * again.  A player's own subclass of Random extends this one instead.
     */
    public static class SeededRandom extends Random {
        private static final long serialVersionUID = 1L;

        public SeededRandom() {
            super(Seeder.fresh());
        }

        public SeededRandom(long seed) {
            super(seed);
        }
    }

    /**
     * A Java agent (the jar's Premain-Class; eaai.py gives -javaagent) that rewrites each class the
     * player's class path loads, the kit's included, so that it makes SeededRandoms where it made
     * Randoms.  In the class file (JVMS 4): two constants are added (the name and the class
     * SeededRandom); every "new java/util/Random" instruction, every reference to a constructor of
     * Random, and a superclass Random are pointed at SeededRandom.  Nothing else changes: no
     * instruction moves, and a field, a parameter or a stack map frame typed Random holds a
     * SeededRandom as it held a Random.  A class file it cannot read is left as it is.
     */
    public static final class Rewriter implements ClassFileTransformer {
        private static final byte[] SEEDED = "ginarena/EaaiAdapter$SeededRandom".getBytes(StandardCharsets.US_ASCII);
        /** Each opcode's length in bytes; 0 for the three of variable length and for unused ones. */
        private static final byte[] LENGTH = new byte[256];

        static {
            int[][] runs = { // {first, last, length}
                {0x00, 0x0f, 1}, {0x10, 0x10, 2}, {0x11, 0x11, 3}, {0x12, 0x12, 2}, {0x13, 0x14, 3},
                {0x15, 0x19, 2}, {0x1a, 0x35, 1}, {0x36, 0x3a, 2}, {0x3b, 0x83, 1}, {0x84, 0x84, 3},
                {0x85, 0x98, 1}, {0x99, 0xa8, 3}, {0xa9, 0xa9, 2}, {0xac, 0xb1, 1}, {0xb2, 0xb8, 3},
                {0xb9, 0xba, 5}, {0xbb, 0xbb, 3}, {0xbc, 0xbc, 2}, {0xbd, 0xbd, 3}, {0xbe, 0xbf, 1},
                {0xc0, 0xc1, 3}, {0xc2, 0xc3, 1}, {0xc5, 0xc5, 4}, {0xc6, 0xc7, 3}, {0xc8, 0xc9, 5},
            };
            for (int[] r : runs)
                for (int op = r[0]; op <= r[1]; op++)
                    LENGTH[op] = (byte) r[2];
        }

        public static void premain(String args, Instrumentation inst) {
            inst.addTransformer(new Rewriter());
        }

        @Override
        public byte[] transform(ClassLoader loader, String name, Class<?> redefined, ProtectionDomain domain,
                byte[] bytes) {
            // The JDK's own classes and the adapter's are not the player's.
            if (loader == null || loader == ClassLoader.getPlatformClassLoader() || name == null
                    || name.startsWith("ginarena/"))
                return null;
            try {
                return rewrite(bytes);
            } catch (RuntimeException e) { // a class file the JVM will refuse anyway
                return null;
            }
        }

        /** The class file with its Randoms made SeededRandoms, or null when it makes none. */
        static byte[] rewrite(byte[] b) {
            int[] at = pool(b);
            if (at == null)
                return null;
            int count = at.length - 1, poolEnd = at[count], p;
            int random = 0;
            for (int i = 1; i < count && random == 0; i++)
                if (at[i] != 0 && b[at[i]] == 7 && utf8(b, at, u2(b, at[i] + 1), "java/util/Random"))
                    random = i;
            if (random == 0)
                return null;
            List<Integer> constructors = new ArrayList<>(); // Methodrefs of Random.<init>
            for (int i = 1; i < count; i++)
                if (at[i] != 0 && b[at[i]] == 10 && u2(b, at[i] + 1) == random) {
                    int nameAndType = u2(b, at[i] + 3);
                    if (utf8(b, at, u2(b, at[nameAndType] + 1), "<init>"))
                        constructors.add(at[i] + 1);
                }
            int superAt = poolEnd + 4;
            boolean subclass = u2(b, superAt) == random;
            if (constructors.isEmpty() && !subclass)
                return null;
            List<Integer> news = new ArrayList<>(); // operands of "new java/util/Random"
            p = poolEnd + 6;
            p += 2 + 2 * u2(b, p); // interfaces
            p = members(b, p, null, 0, null); // fields
            p = members(b, p, at, random, news); // methods
            if (p < 0 || count + 2 > 0xffff)
                return null;
            int added = 3 + SEEDED.length + 3;
            byte[] out = new byte[b.length + added];
            System.arraycopy(b, 0, out, 0, poolEnd);
            System.arraycopy(b, poolEnd, out, poolEnd + added, b.length - poolEnd);
            out[poolEnd] = 1; // Utf8 "ginarena/EaaiAdapter$SeededRandom", constant number count
            put2(out, poolEnd + 1, SEEDED.length);
            System.arraycopy(SEEDED, 0, out, poolEnd + 3, SEEDED.length);
            out[poolEnd + 3 + SEEDED.length] = 7; // Class of it, constant number count + 1
            put2(out, poolEnd + 4 + SEEDED.length, count);
            put2(out, 8, count + 2);
            int seeded = count + 1;
            for (int ref : constructors)
                put2(out, ref, seeded);
            if (subclass)
                put2(out, superAt + added, seeded);
            for (int operand : news)
                put2(out, operand + added, seeded);
            return out;
        }

        /**
         * Skips the fields or methods from p (JVMS 4.5, 4.6) and returns where they end, or -1 when
         * a method's code cannot be read; with news given, the operands of the methods' "new
         * random" instructions are added to it.
         */
        private static int members(byte[] b, int p, int[] at, int random, List<Integer> news) {
            int n = u2(b, p);
            p += 2;
            for (int m = 0; m < n; m++) {
                p += 6; // access flags, name, descriptor
                int attributes = u2(b, p);
                p += 2;
                for (int a = 0; a < attributes; a++) { // name, length, then (Code) max_stack, max_locals, length, code
                    int length = u4(b, p + 2);
                    if (news != null && utf8(b, at, u2(b, p), "Code") && !code(b, p + 14, u4(b, p + 10), random, news))
                        return -1;
                    p += 6 + length;
                }
            }
            return p;
        }

        /**
         * Walks the instructions of code[start, start + length) (JVMS 6.5); false at one it does not know,
         * or when the last one does not end where the code does.
         */
        private static boolean code(byte[] b, int start, int length, int random, List<Integer> news) {
            int pc = 0;
            while (pc < length) {
                int op = b[start + pc] & 0xff;
                if (op == 0xbb && u2(b, start + pc + 1) == random)
                    news.add(start + pc + 1);
                if (op == 0xaa || op == 0xab) { // tableswitch, lookupswitch: padded to 4 bytes from the code's start
                    int table = (pc + 4) & ~3;
                    long cases = op == 0xaa ? (long) u4(b, start + table + 8) - u4(b, start + table + 4) + 1
                            : u4(b, start + table + 4);
                    long next = op == 0xaa ? table + 12 + 4 * cases : table + 8 + 8 * cases;
                    if (next <= pc || next > length) // a count no JVM would take: never loop back over the code
                        return false;
                    pc = (int) next;
                } else if (op == 0xc4) { // wide
                    pc += (b[start + pc + 1] & 0xff) == 0x84 ? 6 : 4;
                } else if (LENGTH[op] == 0) {
                    return false;
                } else {
                    pc += LENGTH[op];
                }
            }
            return pc == length;
        }

        /**
         * The offset of each constant of a class file's pool (JVMS 4.4): ``at[i]`` for constant ``i`` (0 for
         * the second slot of a long or a double), and ``at[count]`` where the pool ends; null when the bytes
         * are not a class file or hold a constant it does not know.
         */
        static int[] pool(byte[] b) {
            if (u4(b, 0) != 0xCAFEBABE)
                return null;
            int count = u2(b, 8);
            int[] at = new int[count + 1];
            int p = 10;
            for (int i = 1; i < count; i++) {
                at[i] = p;
                switch (b[p] & 0xff) {
                    case 1: p += 3 + u2(b, p + 1); break;
                    case 7: case 8: case 16: case 19: case 20: p += 3; break;
                    case 15: p += 4; break;
                    case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18: p += 5; break;
                    case 5: case 6: p += 9; i++; break; // a long or a double takes two slots
                    default: return null;
                }
            }
            at[count] = p;
            return at;
        }

        /** Constant ``index`` as text: a Utf8 constant, in the class file's own modified UTF-8. */
        private static String text(byte[] b, int[] at, int index) throws IOException {
            if (index <= 0 || index >= at.length - 1 || at[index] == 0 || b[at[index]] != 1)
                throw new IOException("constant " + index + " is not text");
            return new DataInputStream(new ByteArrayInputStream(b, at[index] + 1, b.length - at[index] - 1)).readUTF();
        }

        private static boolean utf8(byte[] b, int[] at, int index, String ascii) {
            if (index <= 0 || index >= at.length - 1 || at[index] == 0 || b[at[index]] != 1
                    || u2(b, at[index] + 1) != ascii.length())
                return false;
            for (int i = 0; i < ascii.length(); i++)
                if (b[at[index] + 3 + i] != (byte) ascii.charAt(i))
                    return false;
            return true;
        }

        private static int u2(byte[] b, int p) {
            return (b[p] & 0xff) << 8 | (b[p + 1] & 0xff);
        }

        private static int u4(byte[] b, int p) {
            return (b[p] & 0xff) << 24 | (b[p + 1] & 0xff) << 16 | (b[p + 2] & 0xff) << 8 | (b[p + 3] & 0xff);
        }

        private static void put2(byte[] b, int p, int v) {
            b[p] = (byte) (v >>> 8);
            b[p + 1] = (byte) v;
        }
    }

    // --- a small JSON reader (the arena's lines: objects, arrays, integers, strings, booleans) -------

    static final class Json {
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        @SuppressWarnings("unchecked")
        static Map<String, Object> object(String line) {
            Object v = new Json(line).value();
            if (!(v instanceof Map))
                throw new IllegalArgumentException("not a JSON object: " + line);
            return (Map<String, Object>) v;
        }

        static String quote(String t) {
            StringBuilder b = new StringBuilder("\"");
            for (char c : t.toCharArray()) {
                if (c == '"' || c == '\\')
                    b.append('\\').append(c);
                else if (c < 0x20)
                    b.append(String.format("\\u%04x", (int) c));
                else
                    b.append(c);
            }
            return b.append('"').toString();
        }

        private void ws() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i)))
                i++;
        }

        private Object value() {
            ws();
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++;
                ws();
                if (s.charAt(i) == '}') {
                    i++;
                    return m;
                }
                while (true) {
                    ws();
                    String k = string();
                    ws();
                    i++; // ':'
                    m.put(k, value());
                    ws();
                    if (s.charAt(i++) == '}')
                        return m;
                }
            }
            if (c == '[') {
                List<Object> l = new ArrayList<>();
                i++;
                ws();
                if (s.charAt(i) == ']') {
                    i++;
                    return l;
                }
                while (true) {
                    l.add(value());
                    ws();
                    if (s.charAt(i++) == ']')
                        return l;
                }
            }
            if (c == '"')
                return string();
            if (s.startsWith("true", i)) {
                i += 4;
                return Boolean.TRUE;
            }
            if (s.startsWith("false", i)) {
                i += 5;
                return Boolean.FALSE;
            }
            if (s.startsWith("null", i)) {
                i += 4;
                return null;
            }
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0)
                i++;
            String num = s.substring(start, i);
            if (num.contains(".") || num.contains("e") || num.contains("E"))
                return Double.valueOf(num);
            return Long.valueOf(num);
        }

        private String string() {
            StringBuilder b = new StringBuilder();
            i++; // '"'
            while (true) {
                char c = s.charAt(i++);
                if (c == '"')
                    return b.toString();
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
    }
}
