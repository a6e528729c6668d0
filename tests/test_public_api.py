"""The public Python API (``import arena``): every name resolves, and the notebook workflow works end to end."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import matplotlib
import pandas as pd
import pytest

import arena

matplotlib.use("Agg")


@pytest.mark.parametrize("name", arena.__all__)
def test_every_public_name_imports_from_arena(name):
    ns: dict = {}
    exec(f"from arena import {name}", ns)  # the import statement a user writes, not getattr
    assert ns[name] is getattr(arena, name)
    if name != "__version__":
        module, attr = arena._LAZY[name]
        assert ns[name] is getattr(importlib.import_module(module), attr)


def test_an_unknown_name_is_an_attribute_error_and_dir_lists_the_api():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        arena.nope  # noqa: B018
    assert set(arena.__all__) <= set(dir(arena))


def test_load_bot_loads_a_builtin_and_a_file_and_names_a_bad_spec(tmp_path):
    from arena.botkit.bot import BotError

    bot = arena.load_bot("simple")
    assert bot.name == "simple" and bot.ref is not None and bot.ref.kind == "builtin"
    src = Path(arena.__file__).resolve().parents[1] / "bots" / "TEMPLATE.py"
    mine = tmp_path / "my_bot.py"
    mine.write_text(src.read_text())
    assert arena.load_bot(str(mine)).ref.kind == "file"
    with pytest.raises(BotError, match="no-such-bot"):
        arena.load_bot("no-such-bot")


def _no_empty_field(value, where="manifest") -> list[str]:
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            if k == "current":  # matchup -> SPRT limit: None means every chunk counts (data, not a field)
                continue
            if v is None or v == "" or (isinstance(v, (list, dict)) and not v):
                out.append(f"{where}.{k}")
            out += _no_empty_field(v, f"{where}.{k}")
        return out
    if isinstance(value, list):
        return [e for i, v in enumerate(value) for e in _no_empty_field(v, f"{where}[{i}]")]
    return []


def test_the_notebook_workflow_gives_dataframes_and_figures(tmp_path):
    """Load a config, run it, get the tables as DataFrames and the plots as figures (the docs' how-to)."""
    from matplotlib.figure import Figure

    conf = tmp_path / "mine.toml"
    conf.write_text(
        'name = "nb"\nbots = ["random", "simple"]\ngames_per_pair = 16\nchunk_size = 8\nseed = 3\n'
        f'workers = 1\nresults_dir = "{tmp_path / "results"}"\n'
    )
    cfg = arena.load_config(conf)
    assert isinstance(cfg, arena.TournamentConfig)
    run = arena.run_tournament(cfg, progress=False)
    assert run.status == "complete"
    games = run.games
    assert isinstance(games, pd.DataFrame) and len(games) == 16

    res = arena.results(run)
    assert isinstance(res, arena.Results)
    again = arena.results(tmp_path / "results" / "nb")  # a folder path works the same
    lb = res.leaderboard()
    pd.testing.assert_frame_equal(lb, again.leaderboard())
    assert list(lb["rank"]) == [1, 2] and set(lb["bot"]) == {"random", "simple"}
    assert lb.set_index("bot").loc["simple", "games"] == 16  # every game counted, self-play none
    assert lb.iloc[0]["bot"] == "simple"  # simple beats random at these seeds by a wide margin
    wins = games["winner"].astype(str).value_counts()
    pairs = res.pairs()
    assert int(pairs["games"].sum()) == 16 and int(wins.get("simple", 0)) >= 12
    wm = res.win_matrix()
    assert wm.loc["simple", "random"] == pytest.approx(1 - wm.loc["random", "simple"])
    assert isinstance(res.bots(), pd.DataFrame) and isinstance(res.outcomes(), pd.DataFrame)
    import matplotlib.pyplot as plt

    for kind in ("heatmap", "ratings", "scores"):
        fig = res.figure(kind)
        assert isinstance(fig, Figure) and fig.axes
        plt.close(fig)
    with pytest.raises(ValueError, match="unknown plot 'pie'"):
        res.figure("pie")

    manifest = json.loads((run.run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["games"] == 16
    assert _no_empty_field(manifest) == []
    assert "params" not in manifest["bots"]["simple"]  # no parameter overrides: the empty field is left out
    assert list(manifest["current"].values()) == [None]  # ... but None as data (every chunk counts) stays


def test_results_of_a_folder_that_is_not_a_run_is_one_line(tmp_path):
    from arena.run.store import StoreError

    with pytest.raises(StoreError, match="no run folder"):
        arena.results(tmp_path / "nothing")
    # Not a path at all: one line saying what it takes (a TypeError from Path() before).
    with pytest.raises(StoreError, match=r"results\(\) takes a run folder's path .* not 5"):
        arena.results(5)
    from arena.settings.config import ConfigError

    with pytest.raises(ConfigError, match="config must be a TournamentConfig, a path .* not 42"):
        arena.run_tournament(42)


def test_play_batch_takes_the_public_rules_a_preset_name_or_the_kernel_array():
    # The debugging recipe passes arena.load_rules(...): play_batch took only the kernel's array
    # and failed with "int() argument must be ... not 'Rules'".
    import numpy as np

    import arena
    from arena.engine.rules_array import rules_array

    a, b = arena.load_bot("simple"), arena.load_bot("random")
    seeds = np.arange(6)
    want = arena.play_batch(a, b, rules_array(arena.load_rules("oklahoma")), seeds).games
    assert (arena.play_batch(a, b, arena.load_rules("oklahoma"), seeds).games == want).all()
    assert (arena.play_batch(a, b, "oklahoma", seeds).games == want).all()
    assert not (arena.play_batch(a, b, "standard", seeds).games == want).all()
