"""Figures of a tournament run (matplotlib, Agg backend, PNG).

One entry point for a run, :func:`plot`, dispatches on the kind:

* ``heatmap``     - win rate of each bot (row) against each other bot (column),
                    values written in the cells, with their pair-clustered 95% interval;
* ``ratings``     - Bradley-Terry Elo of every bot with its 95% interval;
* ``outcomes``    - how each bot's hands ended (stacked shares of hands played);
* ``scores``      - points per hand won and lost per bot (needs hands data) and
                    final game margins per bot;
* ``lengths``     - turns per hand per bot (per hand with hands data, else the
                    per-game average);
* ``convergence`` - running win rate of each matchup with its 95% band as pairs
                    are played.

Every figure is titled and labelled; where the hands table is needed and
missing, the panel says so instead of being silently empty.

A parameter sweep's figures (:mod:`arena.analysis.sweep`) come from
:func:`sweep_figures`: response curves per rules value and opponent, the
field win rate with the best value and its equals, and a heatmap per rules
value for a two-parameter grid.
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from arena.analysis import stats as st  # noqa: E402
from arena.analysis.render import write_file  # noqa: E402
from arena.analysis.summary import TPH_SCALE, Summary  # noqa: E402

if TYPE_CHECKING:
    from arena.analysis.sweep.spec import SweepSpec

KINDS = ("heatmap", "ratings", "outcomes", "scores", "lengths", "convergence")
DPI = 110

__all__ = ["KINDS", "axis_spans", "plot", "sweep_figures"]

_F = TypeVar("_F", bound=Callable)


def _plain_text(draw: _F) -> _F:
    """Draw with matplotlib's mathtext off: a figure's text holds bot names, and matplotlib reads
    ``$...$`` as math, so a bot named ``$\\nope{x}$`` raised from every figure (no plot, no report) and
    ``a$b`` next to ``c$d`` set the text between them as a formula.  Each text keeps the setting it was
    made with, so a figure drawn later (a notebook) stays plain; no figure here uses mathtext."""

    @functools.wraps(draw)
    def plain(*args, **kwargs):
        with plt.rc_context({"text.parse_math": False}):
            return draw(*args, **kwargs)

    return plain  # type: ignore[return-value]


def _plain_log_axis(axis) -> None:
    """Tick labels of a log axis as plain numbers (10, 100, 1,000; 1, 2, 4).  The default formatter writes
    them as mathtext (``$\\mathdefault{10^{4}}$``), which :func:`_plain_text` turns off, so the report's
    convergence plot showed that source text, run together under each panel."""
    axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _pos: f"{v:,.0f}" if v >= 1 else f"{v:g}"))


# Outcome mix: column of stats.outcome_mix -> (label, colour)
_OUTCOME_STYLE = {
    "won_knock": ("won: knock", "#2b8a3e"),
    "won_undercut": ("won: undercut", "#69db7c"),
    "won_gin": ("won: gin", "#1c7ed6"),
    "won_big_gin": ("won: big gin", "#5f3dc4"),
    "lost_knock": ("lost: opp. knock", "#e8590c"),
    "lost_undercut": ("lost: undercut", "#ffa94d"),
    "lost_gin": ("lost: opp. gin", "#c92a2a"),
    "lost_big_gin": ("lost: opp. big gin", "#862e9c"),
    "dead": ("dead hand", "#adb5bd"),
    "capped": ("turn cap", "#495057"),
    "forfeit": ("forfeit", "#000000"),
}


@_plain_text
def plot(
    kind: str,
    games: pd.DataFrame | Summary,
    hands: pd.DataFrame | None,
    path: str | Path,
    *,
    anchor: str | None = None,
    title: str | None = None,
) -> Path:
    """Draw one figure of the run and save it as a PNG at ``path``; return the path.

    ``kind``: heatmap | ratings | outcomes | scores | lengths | convergence.
    ``games``: a :class:`~arena.analysis.summary.Summary` of the run, or its
    games table; ``hands``: with a table, the hands table or None (a Summary
    carries its own).  ``anchor``: the rating anchor bot (None: mean 0).
    ``title`` prefixes the figure title (e.g. the run name).  The box plots
    are drawn from the Summary's histograms, so no figure needs the games.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown plot '{kind}' (kinds: {', '.join(KINDS)})")
    p = st.summarize(games, hands)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = _DRAW[kind](p, anchor=anchor)
    if title:
        base = fig.get_suptitle()
        fig.suptitle(f"{title}: {base}" if base else title, fontsize=13, fontweight="bold")
    try:
        _save_png(fig, path, dpi=DPI, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path


@_plain_text
def figure(kind: str, games: pd.DataFrame | Summary, hands: pd.DataFrame | None = None, *, anchor: str | None = None):
    """One figure of the run as a matplotlib ``Figure``, unsaved (for a notebook: it shows itself).

    The same drawing as :func:`plot`, which saves it; close it with
    ``matplotlib.pyplot.close(fig)`` when done.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown plot '{kind}' (kinds: {', '.join(KINDS)})")
    return _DRAW[kind](st.summarize(games, hands), anchor=anchor)


def _order(p: Summary, anchor: str | None = None) -> list[str]:
    """Bots best first (by rating, then win rate)."""
    bt = st.bradley_terry(p, anchor=anchor)
    return bt.sort_values("elo", ascending=False, kind="stable")["bot"].tolist()


def _note(ax, text: str) -> None:
    ax.text(
        0.5,
        0.5,
        text,
        ha="center",
        va="center",
        transform=ax.transAxes,
        fontsize=11,
        color="#495057",
        wrap=True,
        bbox=dict(boxstyle="round", fc="#f1f3f5", ec="#ced4da"),
    )
    ax.set_xticks([])
    ax.set_yticks([])


# --- heatmap ----------------------------------------------------------------------


def _heatmap(p: Summary, anchor=None):
    order = _order(p, anchor)
    wr = st.win_matrix(p, "win_rate").loc[order, order]
    lo = st.win_matrix(p, "ci_low").loc[order, order]
    hi = st.win_matrix(p, "ci_high").loc[order, order]
    ng = st.win_matrix(p, "games").loc[order, order]
    n = len(order)
    size = max(5.0, 0.9 * n + 2.5)
    fig, ax = plt.subplots(figsize=(size + 1.5, size))
    cmap = plt.get_cmap("RdBu").with_extremes(bad="#e9ecef")
    im = ax.imshow(np.ma.masked_invalid(wr.to_numpy()), cmap=cmap, vmin=0.0, vmax=1.0)
    fs = max(6, min(11, 110 // max(n, 1)))
    for i in range(n):
        for j in range(n):
            v = wr.iat[i, j]
            if i == j:
                ax.text(j, i, "-", ha="center", va="center", color="#868e96", fontsize=fs)
                continue
            if not np.isfinite(v):
                ax.text(j, i, "n/a", ha="center", va="center", color="#868e96", fontsize=fs)
                continue
            a, b = lo.iat[i, j], hi.iat[i, j]  # lopsided near 0% and 100%, so both ends, not a "±"
            colour = "white" if abs(v - 0.5) > 0.3 else "black"
            if np.isfinite(a) and np.isfinite(b) and n <= 12:  # the interval under the rate, smaller
                ax.text(j, i - 0.13, f"{100 * v:.1f}%", ha="center", va="center", color=colour, fontsize=fs)
                ends = f"[{100 * a:.1f}, {100 * b:.1f}]"
                ax.text(j, i + 0.2, ends, ha="center", va="center", color=colour, fontsize=max(5, 0.72 * fs))
            else:
                ax.text(j, i, f"{100 * v:.1f}%", ha="center", va="center", color=colour, fontsize=fs)
    ax.set_xticks(range(n), order, rotation=40, ha="right")
    ax.set_yticks(range(n), order)
    ax.set_xlabel("opponent")
    ax.set_ylabel("bot")
    total = int(np.nansum(ng.to_numpy()) / 2)
    ax.set_title(
        f"Win rate of row bot vs column bot (draws count half; [ ] = 95% interval, pair-clustered)\n{total:,} games",
        fontsize=10,
    )
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="win rate")
    fig.suptitle("Win-rate matrix", fontsize=13, fontweight="bold")
    fig.tight_layout()
    return fig


# --- ratings ----------------------------------------------------------------------


#: A gap between bots' rating intervals wider than this share of the whole range breaks the axis there.
BREAK_SHARE = 0.3
#: A panel of a broken axis takes at least this share of the width.
MIN_PANEL_SHARE = 0.18


def axis_spans(lo: np.ndarray, hi: np.ndarray, max_panels: int = 3) -> list[tuple[float, float]]:
    """The x ranges of a broken axis for intervals ``lo..hi``: one range when nothing stands apart.

    One weak bot far below the field (random at -1,645 when the others lie within 600 Elo of each
    other) would squash the others into a sliver of a single axis.  The intervals are sorted and the
    axis is broken at the widest gaps between them (at most ``max_panels - 1``) that are wider than
    :data:`BREAK_SHARE` of the whole range; each panel spans its own bots with a margin.
    """
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    ok = np.isfinite(lo) & np.isfinite(hi)
    if not ok.any():
        return [(-100.0, 100.0)]
    order = np.argsort(lo[ok] + hi[ok], kind="stable")
    lo, hi = lo[ok][order], hi[ok][order]
    reach = np.maximum.accumulate(hi)  # the right end of everything up to here
    gaps = lo[1:] - reach[:-1]
    whole = float(reach[-1] - lo.min())
    cuts = sorted(
        (i for i in np.argsort(-gaps, kind="stable")[: max_panels - 1] if whole > 0 and gaps[i] > BREAK_SHARE * whole),
    )
    spans = []
    start = 0
    for i in [*cuts, len(lo) - 1]:
        a, b = float(lo[start : i + 1].min()), float(reach[i])
        pad = max(0.08 * (b - a), 15.0)
        spans.append((a - pad, b + pad))
        start = i + 1
    return spans


def _ratings(p: Summary, anchor=None):
    bt = st.bradley_terry(p, anchor=anchor).sort_values("elo")
    n = len(bt)
    spans = axis_spans(bt["elo_ci_low"].to_numpy(), bt["elo_ci_high"].to_numpy())
    widths = np.array([b - a for a, b in spans])
    shares = np.maximum(widths / widths.sum(), MIN_PANEL_SHARE)
    fig, axes = plt.subplots(
        1,
        len(spans),
        sharey=True,
        squeeze=False,
        figsize=(8, max(3.0, 0.45 * n + 1.8)),
        gridspec_kw={"width_ratios": shares},
        layout="constrained" if len(spans) > 1 else None,
    )
    axs = list(axes[0])
    y = np.arange(n)
    err = np.vstack([bt["elo"] - bt["elo_ci_low"], bt["elo_ci_high"] - bt["elo"]])
    for k, (ax, (a, b)) in enumerate(zip(axs, spans)):
        ax.errorbar(bt["elo"], y, xerr=err, fmt="o", color="#1c7ed6", ecolor="#495057", capsize=4, ms=7)
        for yi, (e, s) in enumerate(zip(bt["elo"], bt["elo_se"])):
            if a <= e <= b:
                ax.annotate(
                    f"{e:+,.0f} ± {1.96 * s:,.0f}",
                    (e, yi),
                    textcoords="offset points",
                    xytext=(0, 9),
                    ha="center",
                    fontsize=9,
                )
        if a <= 0.0 <= b:
            ax.axvline(0.0, color="#adb5bd", lw=1, ls="--")
        ax.set_xlim(a, b)
        ax.margins(y=0.15)
        ax.grid(axis="x", alpha=0.3)
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(max(2, int(8 * shares[k])), steps=[1, 2, 2.5, 5, 10]))
        if k > 0:  # the break: no spine between two panels, a pair of slashes on each side of it
            ax.spines["left"].set_visible(False)
            ax.tick_params(axis="y", left=False)
        if k < len(axs) - 1:
            ax.spines["right"].set_visible(False)
        slash = dict(marker=[(-0.5, -1), (0.5, 1)], markersize=10, linestyle="none", color="#495057", clip_on=False)
        if k > 0:
            ax.plot([0, 0], [0, 1], transform=ax.transAxes, **slash)
        if k < len(axs) - 1:
            ax.plot([1, 1], [0, 1], transform=ax.transAxes, **slash)
    axs[0].set_yticks(y, bt["bot"])
    anchor_txt = f"anchor: {anchor} = 0" if anchor else "anchor: mean of all bots = 0"
    label = f"Elo (Bradley-Terry MLE; {anchor_txt})"
    intervals = (
        "95% intervals: deal-clustered sandwich SE"
        if anchor
        else "95% comparison intervals: quasi SE of the deal-clustered sandwich"
    )
    fig.suptitle("Ratings", fontsize=13, fontweight="bold")
    if len(axs) == 1:
        axs[0].set_xlabel(label)
        axs[0].set_title(intervals, fontsize=10)
        fig.tight_layout()
    else:
        fig.get_layout_engine().set(wspace=0.02)  # type: ignore[union-attr,call-arg]  # constrained, set above
        fig.supxlabel(f"{label}\n{intervals}; the axis is broken (//) where bots lie far apart", fontsize=10)
    return fig


# --- outcomes ---------------------------------------------------------------------


def _outcomes(p: Summary, anchor=None):
    mix = st.outcome_mix(p).set_index("bot")
    order = [b for b in _order(p, anchor) if b in mix.index]
    mix = mix.loc[order]
    n = len(mix)
    fig, ax = plt.subplots(figsize=(10, max(3.0, 0.5 * n + 1.8)))
    left = np.zeros(n)
    y = np.arange(n)
    for col, (label, colour) in _OUTCOME_STYLE.items():
        vals = mix[col].fillna(0.0).to_numpy()
        if not np.any(vals > 0):
            continue
        ax.barh(y, vals, left=left, color=colour, label=label, edgecolor="white", linewidth=0.5)
        for yi, (l0, v) in enumerate(zip(left, vals)):
            if v >= 0.06:
                ax.text(
                    l0 + v / 2,
                    yi,
                    f"{100 * v:.0f}%",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if colour not in ("#69db7c", "#ffa94d", "#adb5bd") else "black",
                )
        left += vals
    ax.set_yticks(y, [f"{b}\n({h:,} hands)" for b, h in zip(mix.index, mix["hands"])])
    ax.invert_yaxis()
    ax.set_xlim(0, max(1.0, float(left.max()) if n else 1.0))
    ax.set_xlabel("share of the hands the bot played")
    ax.xaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
    if n == 0 or not np.any(left > 0):
        _note(ax, "No hand outcomes: the games have no hands / per-seat win columns\n(or only self-play games)")
    else:
        # below the axis label, in figure space, so the two never overlap
        fig.legend(*ax.get_legend_handles_labels(), loc="lower center", ncol=4, fontsize=8, frameon=False)
    ax.set_title("How each bot's hands ended (from the game records)", fontsize=10)
    fig.suptitle("Outcome mix per bot", fontsize=13, fontweight="bold")
    legend_height = 0.85 / fig.get_figheight()  # three rows of legend, in figure fractions
    fig.tight_layout(rect=(0, legend_height, 1, 1))
    return fig


# --- box plots from the summary's histograms -------------------------------------------


def _box_stats(p: Summary, kind: str, order: list[str], scale: float = 1.0) -> list[dict]:
    """Box-plot statistics per bot (quartiles, 1.5 IQR whiskers clipped to the data, mean)
    from the bots' histograms of ``kind``, in ``order``."""
    return [p.hist(bot, kind).box(bot, scale) for bot in order]


# bxp's ``vert`` became ``orientation`` in matplotlib 3.10 (``vert`` warns from 3.11)
_HORIZONTAL = (
    {"orientation": "horizontal"}
    if tuple(int(x) for x in matplotlib.__version__.split(".")[:2]) >= (3, 10)
    else {"vert": False}
)


def _bxp(ax, stats_: list[dict], colour: str) -> None:
    ok = [s for s in stats_ if np.isfinite(s["med"])]
    pos = [i for i, s in enumerate(stats_) if np.isfinite(s["med"])]
    if ok:
        ax.bxp(
            ok,
            positions=pos,
            **_HORIZONTAL,
            showmeans=True,
            showfliers=False,
            patch_artist=True,
            boxprops=dict(facecolor=colour, alpha=0.55),
            meanprops=dict(marker="D", markerfacecolor="white", markeredgecolor="black", markersize=5),
            medianprops=dict(color="black"),
        )
    ax.set_yticks(range(len(stats_)), [s["label"] for s in stats_])
    ax.set_ylim(-0.6, len(stats_) - 0.4)
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3)


def _scores(p: Summary, anchor=None):
    order = _order(p, anchor)
    fig, axes = plt.subplots(1, 3, figsize=(15, max(3.2, 0.45 * len(order) + 2.0)), sharey=False)
    if p.has_hands:
        _bxp(axes[0], _box_stats(p, "won_points", order), "#69db7c")
        axes[0].set_xlabel("points scored in a hand it won")
        axes[0].set_title("Points per hand won", fontsize=10)
        _bxp(axes[1], _box_stats(p, "lost_points", order), "#ffa94d")
        axes[1].set_xlabel("points conceded in a hand it lost")
        axes[1].set_title("Points per hand lost", fontsize=10)
    else:
        for ax, what in ((axes[0], "won"), (axes[1], "lost")):
            _note(ax, f"Points per hand {what}:\nno hands data\n(the run recorded no hands)")
            ax.set_title(f"Points per hand {what}", fontsize=10)
    _bxp(axes[2], _box_stats(p, "margin", order), "#74c0fc")
    axes[2].axvline(0.0, color="#868e96", lw=1, ls="--")
    axes[2].set_xlabel("final score minus opponent's, per game")
    axes[2].set_title("Final game margin", fontsize=10)
    fig.suptitle("Score distributions (box: quartiles, whiskers 1.5 IQR, ◇ mean)", fontsize=13, fontweight="bold")
    fig.tight_layout()
    return fig


def _lengths(p: Summary, anchor=None):
    order = _order(p, anchor)
    fig, axes = plt.subplots(1, 2, figsize=(13, max(3.2, 0.45 * len(order) + 2.0)))
    if p.has_hands:
        _bxp(axes[0], _box_stats(p, "hand_turns", order), "#b197fc")
        axes[0].set_xlabel("turns (discards by both players) per hand")
        axes[0].set_title("Turns per hand (every hand it played)", fontsize=10)
    else:
        _bxp(axes[0], _box_stats(p, "tph", order, TPH_SCALE), "#b197fc")
        axes[0].set_xlabel("turns per hand, averaged within each game")
        axes[0].set_title("Turns per hand (per-game average; no hands data)", fontsize=10)
    _bxp(axes[1], _box_stats(p, "hands", order), "#ffd43b")
    axes[1].set_xlabel("hands per game")
    axes[1].set_title("Game length in hands", fontsize=10)
    fig.suptitle("Lengths (box: quartiles, whiskers 1.5 IQR, ◇ mean)", fontsize=13, fontweight="bold")
    fig.tight_layout()
    return fig


# --- convergence ----------------------------------------------------------------------

MAX_PANELS = 48


def _convergence(p: Summary, anchor=None):
    cv = st.convergence(p, points=80)
    ps = st.pair_stats(p).sort_values("games", ascending=False)
    names = ps["matchup"].tolist()
    shown = names[:MAX_PANELS]
    k = len(shown)
    ncol = min(6, max(1, math.ceil(math.sqrt(k))))
    nrow = max(1, math.ceil(k / ncol))
    w, h = 3.4 * ncol, 2.5 * nrow + 1.0
    # no sharex/sharey: with dozens of panels matplotlib's axis sharing is slow; set limits per panel
    fig, axes = plt.subplots(nrow, ncol, figsize=(w, h), squeeze=False)
    # fixed margins (inches) instead of tight_layout, which is slow with many panels
    fig.subplots_adjust(
        left=0.9 / w, right=1 - 0.2 / w, bottom=0.75 / h, top=1 - 1.05 / h, wspace=0.08, hspace=0.55 * 2.5 / 2.5
    )
    pct = matplotlib.ticker.PercentFormatter(1.0, decimals=0)
    groups = dict(tuple(cv.groupby("matchup", sort=False)))
    for ax, name in zip(axes.flat, shown):
        d = groups.get(name)
        if d is not None:
            ax.fill_between(d["games"], d["ci_low"], d["ci_high"], color="#74c0fc", alpha=0.5, lw=0)
            ax.plot(d["games"], d["win_rate"], color="#1864ab", lw=1.4)
        ax.axhline(0.5, color="#868e96", lw=0.8, ls="--")
        row = ps[ps["matchup"] == name].iloc[0]
        ax.set_title(
            f"{name}\n{100 * row['win_rate_a']:.1f}% [{100 * row['win_rate_ci_low']:.1f}, "
            f"{100 * row['win_rate_ci_high']:.1f}] after {int(row['games']):,}",
            fontsize=8,
        )
        ax.grid(alpha=0.3)
    xmax = float(cv["games"].max()) * 1.3 if len(cv) else 10.0
    for ax in axes.flat[:k]:
        ax.set_xscale("log")
        ax.set_xlim(1.5, xmax)
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        _plain_log_axis(ax.xaxis)
        ax.set_ylim(-0.03, 1.03)
        ax.yaxis.set_major_locator(matplotlib.ticker.FixedLocator([0, 0.25, 0.5, 0.75, 1.0]))
        ax.yaxis.set_major_formatter(pct)
    for ax in list(axes.flat)[k:]:
        ax.set_visible(False)
    for ax in axes.flat:
        ax.tick_params(labelsize=8)
    for i in range(nrow):
        for j in range(ncol):
            ax = axes[i, j]
            last = i == nrow - 1 or (i + 1) * ncol + j >= k
            ax.tick_params(labelbottom=last, labelleft=j == 0)
            if last and ax.get_visible():
                ax.set_xlabel("games played (log)", fontsize=8)
        axes[i, 0].set_ylabel("win rate, first bot", fontsize=8)
    more = f" (the {k} matchups with most games of {len(names)})" if len(names) > k else ""
    fig.suptitle(
        f"Convergence: running win rate of the first-named bot, 95% pair-clustered band{more}",
        fontsize=12,
        fontweight="bold",
    )
    return fig


_DRAW = {
    "heatmap": _heatmap,
    "ratings": _ratings,
    "outcomes": _outcomes,
    "scores": _scores,
    "lengths": _lengths,
    "convergence": _convergence,
}


# --- decision analysis (arena analyze): not in KINDS, they read an analysis table, not a Summary ---


@_plain_text
def decision_errors(rates: pd.DataFrame, path: Path, title: str = "") -> Path:
    """Error rate x1000 per bot and decision kind, with its 95% interval (from
    :func:`arena.analysis.decisions.error_rates`); bots in the order of their overall rate."""
    kinds = [k for k in ("upcard", "draw", "discard", "knock", "big_gin", "all") if k in set(rates["kind"])]
    overall = rates[rates["kind"] == "all"].sort_values("error_rate", ascending=False)
    bots = overall["bot"].tolist() or sorted(set(rates["bot"]))
    fig, ax = plt.subplots(figsize=(min(12.0, 2.0 + 1.6 * len(kinds)), 4.6))
    width = 0.8 / max(1, len(bots))
    colours = plt.get_cmap("tab10")
    for j, bot in enumerate(bots):
        d = rates[rates["bot"] == bot].set_index("kind")
        xs, ys, lo, hi = [], [], [], []
        for i, k in enumerate(kinds):
            if k in d.index:
                r = d.loc[k]
                xs.append(i + (j - (len(bots) - 1) / 2) * width)
                ys.append(float(r["error_rate"]))
                lo.append(max(0.0, float(r["error_rate"]) - float(r["ci_low"])) if np.isfinite(r["ci_low"]) else 0.0)
                hi.append(max(0.0, float(r["ci_high"]) - float(r["error_rate"])) if np.isfinite(r["ci_high"]) else 0.0)
        ax.bar(xs, ys, width=width, color=colours(j % 10), label=bot, yerr=[lo, hi], capsize=2, ecolor="#343a40")
    ax.set_xticks(range(len(kinds)))
    ax.set_xticklabels([k.replace("_", " ") for k in kinds])
    ax.set_ylabel("error rate: mean loss per decision\n(thousandths of a game)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=min(3, len(bots)))
    ax.set_title(title or "Error rate per decision kind, 95% interval (game-clustered)", fontsize=11, fontweight="bold")
    fig.tight_layout()
    _save_png(fig, path, dpi=DPI)
    plt.close(fig)
    return path


@_plain_text
def decision_convergence(curve: pd.DataFrame, path: Path) -> Path:
    """Error rate (x1000, all decisions) of each bot against the samples per decision, with its 95% band.

    ``curve``: columns ``samples``, ``bot``, ``error_rate``, ``ci_low``, ``ci_high`` (one row per bot and
    sample count; ``scripts/bench_analyze.py convergence`` writes it).
    """
    fig, ax = plt.subplots(figsize=(7.0, 4.4))
    colours = plt.get_cmap("tab10")
    for j, (bot, d) in enumerate(curve.sort_values("samples").groupby("bot", sort=False)):
        c = colours(j % 10)
        ax.fill_between(d["samples"], d["ci_low"], d["ci_high"], color=c, alpha=0.2, lw=0)
        ax.plot(d["samples"], d["error_rate"], color=c, marker="o", lw=1.5, label=bot)
    ax.set_xscale("log", base=2)
    _plain_log_axis(ax.xaxis)
    ax.set_xlabel("deals sampled per decision (log)")
    ax.set_ylabel("error rate x1000 (all decisions)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Convergence: error rates as the samples per decision grow", fontsize=11, fontweight="bold")
    fig.tight_layout()
    _save_png(fig, path, dpi=DPI)
    plt.close(fig)
    return path


@_plain_text
def equity_curve(rows: pd.DataFrame, names: tuple[str, str], path: Path) -> Path:
    """One game's equity curve: seat 0's chance of winning the game after each graded decision."""
    fig, ax = plt.subplots(figsize=(8.0, 3.2))
    d = rows.sort_values("step")
    eq0 = np.where(d["seat"].to_numpy() == 0, d["eq_chosen"].to_numpy(), 1.0 - d["eq_chosen"].to_numpy())
    ax.plot(d["step"], eq0, color="#1864ab", lw=1.3)
    ax.axhline(0.5, color="#868e96", lw=0.8, ls="--")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("decision (place in the game's log)")
    ax.set_ylabel(f"{names[0]}: chance to win")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    _save_png(fig, path, dpi=DPI)
    plt.close(fig)
    return path


# --- parameter sweeps ------------------------------------------------------------------------

SWEEP_DPI = 90

#: The response-curve panels: (column, title, interval low, interval high).
_SWEEP_PANELS = (
    ("win_rate", "win rate", "win_rate_ci_low", "win_rate_ci_high"),
    ("points_per_hand", "points per hand", "points_per_hand_ci_low", "points_per_hand_ci_high"),
    (
        "undercut_suffered_rate",
        "undercut suffered per hand",
        "undercut_suffered_rate_ci_low",
        "undercut_suffered_rate_ci_high",
    ),
    ("gin_rate", "gin per hand", "gin_rate_ci_low", "gin_rate_ci_high"),
)


@_plain_text
def sweep_figures(spec: SweepSpec, table: pd.DataFrame, best: pd.DataFrame, out_dir: Path) -> dict[str, Path]:
    """Draw a sweep's figures into ``out_dir``; returns ``{key: path}``.

    ``table`` is the sweep's per grid point and opponent table, ``best`` its
    field table (:func:`arena.analysis.sweep.analyse_sweep`).  Keys:
    ``plot_curves`` (always), ``plot_field`` (a one-parameter grid with a
    field table) and ``plot_heatmap_<rules label>`` (a two-parameter grid).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {"plot_curves": _save(_sweep_curves(spec, table), out_dir / "curves.png")}
    two = len(spec.param_names) > 1
    if len(best) and not two:
        files["plot_field"] = _save(_sweep_field(spec, best), out_dir / "field.png")
    if two and len(best):
        for label, g in best.groupby("rules", sort=False):
            files[f"plot_heatmap_{label}"] = _save(
                _sweep_heatmap(spec, str(label), g), out_dir / f"heatmap-{label}.png"
            )
    return files


def _save(fig: Figure, path: Path) -> Path:
    _save_png(fig, path, dpi=SWEEP_DPI)
    plt.close(fig)
    return path


def _save_png(fig: Figure, path: Path, **options) -> None:
    """Save a figure as PNG through :func:`~arena.analysis.render.write_file` (whole, never through a link)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", **options)
    write_file(path, buf.getvalue())


def _sweep_curves(spec: SweepSpec, t: pd.DataFrame) -> Figure:
    """Win rate, points per hand, undercuts suffered and gins against the first parameter, 95% bands."""
    x = spec.param_names[0]
    second = spec.param_names[1] if len(spec.param_names) > 1 else None
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = ["-", "--", ":", "-."]
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    groups = list(t.groupby(["rules", "opponent"] + ([second] if second else []), sort=False))
    rules_order = [lab for lab, _ in spec.rules]
    for k, (key, g) in enumerate(groups):
        g = g.sort_values(x)
        lab = " / ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in key)
        ri = rules_order.index(key[0]) if key[0] in rules_order else 0
        oi = spec.opponents.index(key[1]) if key[1] in spec.opponents else k
        c = colours[(oi if not second else k) % len(colours)]
        ls = styles[ri % len(styles)]
        for ax, (col, title, lo, hi) in zip(axes.flat, _SWEEP_PANELS):
            xs = g[x].to_numpy()
            ax.plot(xs, g[col], ls, color=c, marker="o", ms=3, label=lab)
            ax.fill_between(xs, g[lo], g[hi], color=c, alpha=0.2, lw=0)
            ax.set_title(title)
            ax.set_xlabel(x)
    axes.flat[0].axhline(0.5, color="grey", lw=0.8)
    axes.flat[0].legend(fontsize=8, title="rules / opponent" + (f" / {second}" if second else ""))
    fig.suptitle(f"{spec.bot}: response to {x} (95% bands)")
    fig.tight_layout()
    return fig


def _sweep_field(spec: SweepSpec, b: pd.DataFrame) -> Figure:
    """Field win rate (adjusted and raw) per rules value; star: the best, squares: its equals.

    A rules value whose points had too few pairs to adjust (``field_adjusted`` false) gets its raw line
    alone, labelled so."""
    x = spec.param_names[0]
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for ri, (label, g) in enumerate(b.groupby("rules", sort=False)):
        g = g.sort_values(x)
        c = colours[ri % len(colours)]
        adjusted = bool(g["field_adjusted"].all()) if "field_adjusted" in g else True
        if adjusted:
            ax.plot(g[x], g["field_win_rate_adj"], "-o", color=c, ms=3, label=f"{label}: adjusted")
            ax.fill_between(g[x], g["field_win_rate_adj_ci_low"], g["field_win_rate_adj_ci_high"], color=c, alpha=0.25)
            ax.plot(g[x], g["field_win_rate"], ":", color=c, lw=1, label=f"{label}: raw")
        else:  # too few pairs to adjust: an "adjusted" line would be the raw one under another name
            ax.plot(g[x], g["field_win_rate"], "-o", color=c, ms=3, label=f"{label}: raw (too few pairs to adjust)")
            ax.fill_between(g[x], g["field_win_rate_ci_low"], g["field_win_rate_ci_high"], color=c, alpha=0.25)
        tied = g[g["tied_with_best"]]
        ax.plot(tied[x], tied["field_win_rate_adj"], "s", color=c, mfc="none", ms=9)
        bb = g[g["best"]]
        ax.plot(bb[x], bb["field_win_rate_adj"], "*", color=c, ms=14)
    ax.set_xlabel(x)
    ax.set_ylabel("win rate against the field")
    ax.set_title("field win rate (95% bands); star: best, squares: can't be told apart from it")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _sweep_heatmap(spec: SweepSpec, label: str, g: pd.DataFrame) -> Figure:
    """Adjusted field win rate over a two-parameter grid, one rules value; colours centred on 0.5."""
    x, second = spec.param_names[0], spec.param_names[1]
    m = g.pivot_table(index=second, columns=x, values="field_win_rate_adj")
    v = m.to_numpy()
    spread = np.nanmax(np.abs(v - 0.5))
    fig, ax = plt.subplots(figsize=(1.0 + 0.7 * m.shape[1], 1.2 + 0.5 * m.shape[0]))
    im = ax.imshow(v, cmap="RdBu", vmin=0.5 - spread, vmax=0.5 + spread, aspect="auto", origin="lower")
    ax.set_xticks(range(m.shape[1]), [f"{c:g}" for c in m.columns])
    ax.set_yticks(range(m.shape[0]), [f"{r:g}" for r in m.index])
    for (i, j), cell in np.ndenumerate(v):
        ax.text(j, i, f"{cell:.3f}", ha="center", va="center", fontsize=7)
    ax.set_xlabel(x)
    ax.set_ylabel(second)
    adjusted = bool(g["field_adjusted"].all()) if "field_adjusted" in g else True
    ax.set_title(f"{label}: field win rate ({'adjusted' if adjusted else 'raw: too few pairs to adjust'})")
    fig.colorbar(im, ax=ax)
    fig.tight_layout()
    return fig
