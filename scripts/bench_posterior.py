"""How much the table tells about a Simple opponent's hidden hand: the exact posterior against monte-carlo's sampler.

monte-carlo guesses the opponent's hand from a cheap model (built hands, evidence
weights, the latest-discard fact; :func:`arena.botkit.search.sample_state_weighted`).
This benchmark asks how far that is from the best guess the public cards allow
against a player whose policy is known exactly, EAAI's Simple
(``bots/simple.py``): take a pile card only if it melds, discard a card that
leaves the least deadwood (ties at random, never the card just taken), knock
at the first chance.

The exact posterior comes from a particle filter that plays Simple's own
rules forward.  It deals ``particles`` hands uniformly from the cards I can't
see, then, at every public event of the hand, keeps each hand in proportion
to the chance that Simple holding it did what was seen:

- it passed a card (the upcard, or the pile top at its draw): 1 if the card
  melds with nothing of the hand, else 0;
- it took a card and shed ``d``: the card melds, and ``d`` is one of the
  ``t`` least-deadwood discards of the hand with it (the card excluded):
  ``1/t``;
- it drew from the stock and shed ``d``: the drawn card is dealt from the
  cards the hand and I can't account for (``d`` itself with its chance
  ``1/n`` when the hand lacks it), then as above;
- it did not knock after a discard: the hand's deadwood is above the limit;
- I drew a card from the stock: no hand holds it.

Hands are resampled (systematic) when the effective count falls below half.
Simple's repeat guard (it never trades the same two cards twice in a hand) is
not modelled: it almost never binds.  A hand whose every particle dies is
dropped from the comparison for every model alike.

Subcommands:

``model``     Over the discards of gin-chasing (seat 0) against simple in the
              first hand of each game: the true hidden cards held per guessed
              hand, the log-likelihood of the true hand under each model's card
              frequencies, and the guesses' deadwood against the true hands', for
              uniform guesses, monte-carlo's model and the exact posterior.
              ``python scripts/bench_posterior.py model --games 120 --particles 1000000 --samples 100``
``strength``  monte-carlo against simple on duplicate pairs, once with its own
              model and once with each deal's hand drawn from the filter (the
              bot's ``M_GUESSES`` slots), the opponent's type known and no work
              bound in both, and the paired difference: what exact inference
              would be worth in games.
              ``python scripts/bench_posterior.py strength --pairs 500 --seed 500000 --workers 2``

The filter costs about a second per hand at a million particles, a tenth of
that at the ``strength`` default of 100,000 (8 times as many on a retry): a
measuring stick, not a bot's budget.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from multiprocessing import Pool
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.botkit.lib import nth_card, opponent_known, pile_cards  # noqa: E402
from arena.botkit.search import sample_state_weighted  # noqa: E402
from arena.engine._jit import jit  # noqa: E402
from arena.engine.cards import popcount  # noqa: E402
from arena.engine.layout import (  # noqa: E402
    G_SIZE,
    G_WINNER,
    PH_DISCARD,
    PH_DONE,
    PH_DRAW,
    PH_KNOCK,
    PH_UPCARD_DEALER,
    PH_UPCARD_NONDEALER,
    R_KNOCK_LIMIT,
    S_CUR,
    S_HAND,
    S_PHASE,
    S_SIZE,
    S_UPCARD,
    V_HAND,
    V_SIZE,
    V_TOP,
)
from arena.engine.melds import deadwood, in_any_meld, least_discards  # noqa: E402
from arena.engine.rng import RNG_WORDS, new_rng, rand_below, rand_float  # noqa: E402
from arena.engine.rules_array import rules_array  # noqa: E402
from arena.engine.step import (  # noqa: E402
    apply_action,
    begin_game,
    begin_hand,
    build_view,
    end_hand,
    new_state,
    pile_mask,
)
from arena.loading.load import load_bot  # noqa: E402
from arena.settings.rules import load_rules  # noqa: E402

RULES = rules_array(load_rules("eaai"))
DRAWS = (PH_UPCARD_NONDEALER, PH_UPCARD_DEALER, PH_DRAW)
#: monte-carlo's model of a knock-at-once opponent, its default parameters:
#: (refuse_weight, shed_weight, tries, built, quiet_learned, sharp_weight).
BOT_MODEL = (0.25, 0.25, 8, True, 0.2, 0.1)
UNIFORM = (1.0, 1.0, 1, False, 1.0, 1.0)
ALL_CARDS = np.int64((1 << 52) - 1)


@jit
def shed_chance(held, allowed, d, limit):
    """The chance that Simple holding ``held`` sheds ``d`` (one of its least-deadwood
    discards among ``allowed``, ties at random) and then does not knock (deadwood
    above ``limit``; -1: it was asked to knock, so no condition)."""
    if not (allowed >> d) & 1:
        return 0.0
    _, ties = least_discards(held, allowed)
    if not (ties >> d) & 1:
        return 0.0
    if limit >= 0 and deadwood(held & ~(np.int64(1) << d)) <= limit:
        return 0.0
    return 1.0 / popcount(ties)


@jit
def deal_hands(hands, weights, excluded, rng):
    """Every particle a uniform 10-card hand of the cards outside ``excluded``."""
    cards = np.empty(52, np.int64)
    n = 0
    for c in range(52):
        if not (excluded >> c) & 1:
            cards[n] = c
            n += 1
    for p in range(hands.shape[0]):
        h = np.int64(0)
        for i in range(10):
            j = i + rand_below(rng, n - i)
            t = cards[i]
            cards[i] = cards[j]
            cards[j] = t
            h |= np.int64(1) << cards[i]
        hands[p] = h
        weights[p] = 1.0


@jit
def passed(hands, weights, c):
    """It passed ``c``: Simple passes only cards that meld with nothing it holds."""
    for p in range(hands.shape[0]):
        if weights[p] > 0 and in_any_meld(hands[p], c):
            weights[p] = 0.0


@jit
def seen(hands, weights, x):
    """``x`` turned up elsewhere (I drew it): no hand holds it."""
    for p in range(hands.shape[0]):
        if (hands[p] >> x) & 1:
            weights[p] = 0.0


@jit
def took(hands, weights, c, d, limit):
    """It took ``c`` (which must meld) and shed ``d`` (never ``c``)."""
    for p in range(hands.shape[0]):
        if weights[p] == 0 or not in_any_meld(hands[p], c):
            weights[p] = 0.0
            continue
        held = hands[p] | (np.int64(1) << c)
        w = shed_chance(held, held & ~(np.int64(1) << c), d, limit)
        weights[p] *= w
        hands[p] = held & ~(np.int64(1) << d)


@jit
def drew(hands, weights, d, visible, limit, rng):
    """It drew from the stock and shed ``d``; ``visible``: my hand and the pile, ``d`` on top."""
    for p in range(hands.shape[0]):
        if weights[p] == 0:
            continue
        h = hands[p]
        stock = ALL_CARDS & ~(visible | h)
        n = popcount(stock)
        if (h >> d) & 1:
            s = nth_card(stock, rand_below(rng, n))
            q = 1.0
        else:  # it shed the card it drew: d was one of the n + 1 cards it could draw
            s = d
            q = 1.0 / (n + 1)
        held = h | (np.int64(1) << s)
        weights[p] *= q * shed_chance(held, held, d, limit)
        hands[p] = held & ~(np.int64(1) << d)


@jit
def resample(hands, weights, rng):
    """Systematic resampling once the effective number of hands falls below half; False if none is left."""
    n = hands.shape[0]
    tot = weights.sum()
    if tot <= 0:
        return False
    if tot * tot / (weights * weights).sum() > n / 2:
        return True
    cum = np.cumsum(weights) / tot
    u = rand_float(rng) / n
    out = np.empty_like(hands)
    j = 0
    for i in range(n):
        while j < n - 1 and cum[j] < u + i / n:
            j += 1
        out[i] = hands[j]
    hands[:] = out
    weights[:] = 1.0
    return True


@dataclass
class SimplePosterior:
    """The particle filter of one hand, fed the public events as they happen.

    ``retry``: when every hand dies, deal ``retry`` times as many and replay
    the hand's events once before giving up (0: give up at once).
    """

    particles: int
    seed: int
    retry: int = 0
    alive: bool = field(init=False, default=True)

    def __post_init__(self) -> None:
        self.rng = new_rng(self.seed)

    def deal(self, excluded: int, n: int | None = None) -> None:
        n = n or self.particles
        self.hands, self.weights = np.zeros(n, np.int64), np.zeros(n)
        deal_hands(self.hands, self.weights, np.int64(excluded), self.rng)
        self.events: list[tuple] = []
        self.excluded, self.alive, self.retried = excluded, True, n != self.particles

    def _apply(self, event: tuple) -> bool:
        kind, *a = event
        if kind == "passed":
            passed(self.hands, self.weights, a[0])
        elif kind == "seen":
            seen(self.hands, self.weights, a[0])
        elif a[0] >= 0:
            took(self.hands, self.weights, a[0], a[1], a[3])
        else:
            drew(self.hands, self.weights, a[1], np.int64(a[2]), a[3], self.rng)
        return resample(self.hands, self.weights, self.rng) if kind == "shed" else self.weights.sum() > 0

    def _event(self, event: tuple) -> None:
        if not self.alive:
            return
        self.events.append(event)
        self.alive = self._apply(event)
        if not self.alive and self.retry and not self.retried:
            events = self.events
            self.deal(self.excluded, self.retry * self.particles)
            self.events = events
            self.alive = all(self._apply(e) for e in events)

    def passed(self, c: int) -> None:
        """It passed ``c`` (the upcard, or the pile top at its draw)."""
        self._event(("passed", c))

    def seen(self, x: int) -> None:
        """I drew ``x`` from the stock."""
        self._event(("seen", x))

    def shed(self, taken: int, d: int, visible: int, limit: int) -> None:
        """Its discard ``d`` after taking ``taken`` from the pile (-1: it drew from the stock);
        ``visible``: my hand and the pile; ``limit``: the knock limit, -1 if it was asked to knock."""
        self._event(("shed", taken, d, visible, limit))

    def guesses(self, k: int) -> np.ndarray:
        """``k`` hands drawn by weight (systematic)."""
        cum = np.cumsum(self.weights)
        u = (np.arange(k) + rand_float(self.rng)) / k * cum[-1]
        return self.hands[np.minimum(np.searchsorted(cum, u), self.hands.shape[0] - 1)]


class Tracker:
    """Feeds one seat's :class:`SimplePosterior` the public events of a hand played step by step."""

    def __init__(self, post: SimplePosterior, me: int) -> None:
        self.post, self.me, self.taken = post, me, -1

    def deal(self, st: np.ndarray) -> None:
        self.taken = -1
        self.post.deal(int(st[S_HAND + self.me]) | (1 << int(st[S_UPCARD])))

    def step(self, st: np.ndarray, p: int, ph: int, a: int, top: int, mine: int) -> None:
        """After ``apply_action``: seat ``p`` answered ``a`` in phase ``ph`` with ``top`` on the pile,
        my hand having been ``mine`` before it."""
        me, post = self.me, self.post
        if p != me and ph in DRAWS:
            if a == 1:
                self.taken = top
            else:
                post.passed(top)
        elif p != me and ph == PH_DISCARD:
            visible = int(st[S_HAND + me]) | int(pile_mask(st))
            asked = st[S_PHASE] == PH_KNOCK and st[S_CUR] == p
            post.shed(self.taken, a, visible, -1 if asked else int(RULES[R_KNOCK_LIMIT]))
            self.taken = -1
        new = int(st[S_HAND + me]) & ~mine
        if new and not (p == me and ph in DRAWS and a == 1):
            post.seen(new.bit_length() - 1)  # my stock card (mine after both passed, too)


def first_hands(n_games: int, particles: int, seed: int = 0):
    """``(view, true opponent hand, filter)`` at each discard of gin-chasing (seat 0) against simple,
    first hands of ``n_games`` games, the filter fed every public event so far (None once it died)."""
    me, opp = load_bot("gin-chasing"), load_bot("simple")
    bots = (me, opp)
    mems = [np.zeros(me.memory_size), np.zeros(opp.memory_size)]
    rngs = [new_rng(seed + 1), new_rng(seed + 2)]
    view = np.zeros(V_SIZE, dtype=np.int64)
    post = SimplePosterior(particles, seed + 3)
    track = Tracker(post, 0)
    for g in range(n_games):
        st = new_state()
        begin_game(st, RULES, seed + g, rngs[0], rngs[1], mems[0], mems[1], np.zeros(G_SIZE, dtype=np.int64))
        begin_hand(st, RULES, seed + g, np.zeros(RNG_WORDS, dtype=np.uint64))
        track.deal(st)
        while st[S_PHASE] != PH_DONE:
            p, ph = int(st[S_CUR]), int(st[S_PHASE])
            build_view(st, RULES, p, view)
            if p == 0 and ph == PH_DISCARD:
                yield view.copy(), int(st[S_HAND + 1]), post if post.alive else None
            b = bots[p]
            a = int(b.functions[ph](view, b.params, mems[p], rngs[p]))
            top, mine = int(view[V_TOP]), int(st[S_HAND])
            apply_action(st, RULES, a)
            track.step(st, p, ph, a, top, mine)


@dataclass
class Tally:
    """Per model: hidden cards hit per guessed hand, log-likelihood of the true hand, guessed deadwood."""

    hits: list[float] = field(default_factory=list)
    loglik: list[float] = field(default_factory=list)
    dw: list[float] = field(default_factory=list)

    def add(self, guesses: list[int], true: int, known: int, unseen: int) -> None:
        counts = np.zeros(52)
        for h in guesses:
            self.hits.append(popcount(np.int64(h & true & ~known)))
            self.dw.append(deadwood(np.int64(h)))
            for c in range(52):
                counts[c] += (h >> c) & 1
        ll = 0.0
        for c in range(52):
            if (unseen >> c) & 1:
                q = (counts[c] + 0.5) / (len(guesses) + 1.0)
                ll += np.log(q) if (true >> c) & 1 else np.log(1.0 - q)
        self.loglik.append(ll)


def compare(n_games: int, particles: int, k: int, seed: int = 0) -> dict:
    """The three models on the positions where the filter is alive; also counts the positions dropped."""
    tallies = {"uniform": Tally(), "monte-carlo's model": Tally(), "exact posterior": Tally()}
    st = np.empty(S_SIZE, dtype=np.int64)
    rng = new_rng(seed + 7)
    true_dw: list[float] = []
    dropped = 0
    for view, true, post in first_hands(n_games, particles, seed):
        if post is None:
            dropped += 1
            continue
        known = int(opponent_known(view))
        unseen = int(ALL_CARDS) & ~int(view[V_HAND]) & ~int(pile_cards(view)) & ~known
        for name, model in (("uniform", UNIFORM), ("monte-carlo's model", BOT_MODEL)):
            guesses = []
            for _ in range(k):
                sample_state_weighted(view, rng, st, *model)
                guesses.append(int(st[S_HAND + 1]))
            tallies[name].add(guesses, true, known, unseen)
        tallies["exact posterior"].add([int(h) for h in post.guesses(k)], true, known, unseen)
        true_dw.append(deadwood(np.int64(true)))
    return {"tallies": tallies, "true_dw": float(np.mean(true_dw)) if true_dw else 0.0, "dropped": dropped}


#: monte-carlo with the opponent's type known (Simple knocks at once: no learning, its
#: quiet factor always on) and no work bound, so the two variants differ only in their guesses.
KNOWN_TYPE = {"learn": 0.0, "quiet_weight": 0.2, "work": 0.0}
GUESSES = 512  # hands drawn from the filter before each of monte-carlo's decisions


def play_game(job: tuple[int, int, bool, int]) -> tuple[int, int, int, int, int]:
    """One game of monte-carlo (seat ``me``) against simple; with ``exact``, its deals' hands come
    from the filter.  Returns (won, decisions served by the filter, decisions, hands the filter
    died in, hands)."""
    seed, me, exact, particles = job
    from bots import monte_carlo

    mc, simple = load_bot("monte-carlo"), load_bot("simple")
    params = mc.params.copy()
    names = list(monte_carlo.PARAMS)
    for key, value in KNOWN_TYPE.items():
        params[names.index(key)] = value
    bots = (mc, simple) if me == 0 else (simple, mc)
    pars = (params, simple.params) if me == 0 else (simple.params, params)
    size = [b.memory_size for b in bots]
    if exact:
        size[me] = monte_carlo.M_GUESSES + 1 + GUESSES
    mems = [np.zeros(max(1, n)) for n in size]
    rngs = [np.zeros(RNG_WORDS, dtype=np.uint64) for _ in range(2)]
    st, row = new_state(), np.zeros(G_SIZE, dtype=np.int64)
    begin_game(st, RULES, seed, rngs[0], rngs[1], mems[0], mems[1], row)
    post = SimplePosterior(particles, seed * 7 + 3, retry=8)
    track = Tracker(post, me)
    view = np.zeros(V_SIZE, dtype=np.int64)
    served = decisions = died = hands = 0
    while True:
        begin_hand(st, RULES, seed, np.zeros(RNG_WORDS, dtype=np.uint64))
        hands += 1
        if exact:
            track.deal(st)
        while st[S_PHASE] != PH_DONE:
            p, ph = int(st[S_CUR]), int(st[S_PHASE])
            build_view(st, RULES, p, view)
            if p == me and exact:
                decisions += 1
                slot = monte_carlo.M_GUESSES
                mems[me][slot] = 0
                if post.alive:
                    mems[me][slot + 1 : slot + 1 + GUESSES] = post.guesses(GUESSES).view(np.float64)
                    mems[me][slot] = GUESSES
                    served += 1
            a = int(bots[p].functions[ph](view, pars[p], mems[p], rngs[p]))
            top, mine = int(view[V_TOP]), int(st[S_HAND + me])
            apply_action(st, RULES, a)
            if exact:
                track.step(st, p, ph, a, top, mine)
        died += exact and not post.alive
        if end_hand(st, RULES, row):
            break
    return int(row[G_WINNER] == me), served, decisions, died, hands


def cmd_strength(a: argparse.Namespace) -> None:
    jobs = [(a.seed + i, me, exact, a.particles) for exact in (False, True) for i in range(a.pairs) for me in (0, 1)]
    with Pool(a.workers) as pool:
        res = np.array(pool.map(play_game, jobs, chunksize=4))
    wins = res[:, 0].reshape(2, a.pairs, 2).sum(axis=2) / 2  # [variant, pair]
    d = wins[1] - wins[0]
    se = d.std(ddof=1) / np.sqrt(a.pairs)
    exact = res[2 * a.pairs :]
    print(
        f"monte-carlo ({', '.join(f'{k} = {v:g}' for k, v in KNOWN_TYPE.items())}) against simple, eaai rules, "
        f"seed {a.seed}, {a.pairs} duplicate pairs"
    )
    print(f"  its own opponent model: {100 * wins[0].mean():.1f}%")
    print(
        f"  the exact posterior:    {100 * wins[1].mean():.1f}%  (the filter of {a.particles:,} hands served "
        f"{exact[:, 1].sum():,} of {exact[:, 2].sum():,} decisions; it died in {exact[:, 3].sum():,} of "
        f"{exact[:, 4].sum():,} hands)"
    )
    print(
        f"  difference, paired:     {100 * d.mean():+.1f} points [{100 * (d.mean() - 1.96 * se):+.1f}, "
        f"{100 * (d.mean() + 1.96 * se):+.1f}]"
    )


def cmd_model(a: argparse.Namespace) -> None:
    r = compare(a.games, a.particles, a.samples, a.seed)
    n = len(r["tallies"]["uniform"].loglik)
    print(
        f"{n:,} positions (gin-chasing's discards against simple, first hands of {a.games} games, seed {a.seed}), "
        f"{a.samples} guesses each; {r['dropped']} dropped where the filter of {a.particles:,} hands died"
    )
    print(f"{'model':22s} {'hidden cards hit':>17s} {'log-lik / position':>19s} {'deadwood guessed':>17s} {'true':>6s}")
    for name, t in r["tallies"].items():
        print(f"{name:22s} {np.mean(t.hits):17.3f} {np.mean(t.loglik):19.2f} {np.mean(t.dw):17.1f} {r['true_dw']:6.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("model", help="hidden cards hit and log-likelihood of each model's guesses")
    m.add_argument("--games", type=int, default=120, help="games (their first hands)")
    m.add_argument("--particles", type=int, default=1_000_000)
    m.add_argument("--samples", type=int, default=100, help="guessed hands per position and model")
    m.add_argument("--seed", type=int, default=0)
    g = sub.add_parser("strength", help="monte-carlo's win rate against simple with the exact posterior's guesses")
    g.add_argument("--pairs", type=int, default=500, help="duplicate pairs (each deal from both seats)")
    g.add_argument("--particles", type=int, default=100_000)
    g.add_argument("--seed", type=int, default=500_000)
    g.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    sizes = [a.particles] + ([a.games, a.samples] if a.cmd == "model" else [a.pairs, a.workers])
    if min(sizes) < 1 or (a.cmd == "strength" and a.pairs < 2):
        ap.error("sizes must be at least 1 (and --pairs at least 2)")
    {"model": cmd_model, "strength": cmd_strength}[a.cmd](a)


if __name__ == "__main__":
    main()
