package players;

import ginrummy.Card;

import java.util.Random;
import java.util.function.Supplier;

/**
 * The kit-style Simple player that takes a face-up card or not by coins made in every way the
 * adapter's class rewriting must follow (a Random made within a call, by a constructor reference,
 * as an anonymous subclass, in a class initializer, in an array), placed after switches (their
 * padded tables) and after a method's 256th local (wide instructions), so that an instruction
 * misread by the rewriting fails the class's verification as it loads.
 */
public class ZooRandPlayer extends KitSimplePlayer {
    private static final int[] TABLE = new int[16];

    static {
        Random r = new Random();
        for (int i = 0; i < TABLE.length; i++)
            TABLE[i] = r.nextInt(2);
    }

    private final Supplier<Random> maker = Random::new;
    private final Random[] box = {new Random()};
    private final Random anon = new Random() {
        @Override
        public boolean nextBoolean() {
            return !super.nextBoolean();
        }
    };
    private int calls;

    @Override
    public boolean willDrawFaceUpCard(Card card) {
        super.willDrawFaceUpCard(card);
        calls++;
        int coin;
        switch (card.rank) { // a tableswitch
            case 0: case 1: case 2: case 3: coin = maker.get().nextInt(2); break;
            case 4: case 5: case 6: coin = box[0].nextInt(2); break;
            case 7: case 8: coin = anon.nextBoolean() ? 1 : 0; break;
            default: coin = wide(card.suit);
        }
        switch (calls * 1000) { // a lookupswitch
            case 1000: coin ^= TABLE[card.rank]; break;
            case 7000: coin ^= new Random().nextInt(2); break;
            default: break;
        }
        return coin == 1;
    }

    /** A coin drawn after more than 256 locals: the loads and stores past 255 are wide instructions. */
    private static int wide(int suit) {
        double d0 = 0.5, d1 = 1.5, d2 = 2.5, d3 = 3.5, d4 = 4.5, d5 = 5.5, d6 = 6.5, d7 = 7.5, d8 = 8.5, d9 = 9.5, d10 = 10.5, d11 = 11.5, d12 = 12.5, d13 = 13.5, d14 = 14.5, d15 = 15.5, d16 = 16.5, d17 = 17.5, d18 = 18.5, d19 = 19.5, d20 = 20.5, d21 = 21.5, d22 = 22.5, d23 = 23.5, d24 = 24.5, d25 = 25.5, d26 = 26.5, d27 = 27.5, d28 = 28.5, d29 = 29.5, d30 = 30.5, d31 = 31.5, d32 = 32.5, d33 = 33.5, d34 = 34.5, d35 = 35.5, d36 = 36.5, d37 = 37.5, d38 = 38.5, d39 = 39.5, d40 = 40.5, d41 = 41.5, d42 = 42.5, d43 = 43.5, d44 = 44.5, d45 = 45.5, d46 = 46.5, d47 = 47.5, d48 = 48.5, d49 = 49.5, d50 = 50.5, d51 = 51.5, d52 = 52.5, d53 = 53.5, d54 = 54.5, d55 = 55.5, d56 = 56.5, d57 = 57.5, d58 = 58.5, d59 = 59.5, d60 = 60.5, d61 = 61.5, d62 = 62.5, d63 = 63.5, d64 = 64.5, d65 = 65.5, d66 = 66.5, d67 = 67.5, d68 = 68.5, d69 = 69.5, d70 = 70.5, d71 = 71.5, d72 = 72.5, d73 = 73.5, d74 = 74.5, d75 = 75.5, d76 = 76.5, d77 = 77.5, d78 = 78.5, d79 = 79.5, d80 = 80.5, d81 = 81.5, d82 = 82.5, d83 = 83.5, d84 = 84.5, d85 = 85.5, d86 = 86.5, d87 = 87.5, d88 = 88.5, d89 = 89.5, d90 = 90.5, d91 = 91.5, d92 = 92.5, d93 = 93.5, d94 = 94.5, d95 = 95.5, d96 = 96.5, d97 = 97.5, d98 = 98.5, d99 = 99.5, d100 = 100.5, d101 = 101.5, d102 = 102.5, d103 = 103.5, d104 = 104.5, d105 = 105.5, d106 = 106.5, d107 = 107.5, d108 = 108.5, d109 = 109.5, d110 = 110.5, d111 = 111.5, d112 = 112.5, d113 = 113.5, d114 = 114.5, d115 = 115.5, d116 = 116.5, d117 = 117.5, d118 = 118.5, d119 = 119.5, d120 = 120.5, d121 = 121.5, d122 = 122.5, d123 = 123.5, d124 = 124.5, d125 = 125.5, d126 = 126.5, d127 = 127.5, d128 = 128.5, d129 = 129.5;
        d129 += suit;
        d128 = d129 * d0;
        Random late = new Random();
        return (late.nextInt(2) + (int) d128) % 2 == 0 ? 0 : 1;
    }
}
