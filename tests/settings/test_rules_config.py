"""Rules settings: presets, the rules array, validation messages, loading files."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from arena.engine import layout
from arena.engine.rules_array import rules_array, rules_from_array
from arena.settings.rules import (
    PRESETS_DIR,
    RULE_KEYS,
    Rules,
    RulesError,
    available_presets,
    load_rules,
    parse_overrides,
)

DEFAULTS = {
    "knock_limit": 10,
    "gin_bonus": 25,
    "big_gin": True,
    "big_gin_bonus": 31,
    "undercut_bonus": 25,
    "undercut_on_tie": True,
    "target": 100,
    "next_dealer": "alternate",
    "no_retake": True,
    "oklahoma": False,
    "turn_cap": 200,
    "hand_cap": 1000,
}

# --- presets ---------------------------------------------------------------------


def test_defaults_are_the_standard_game():
    assert Rules().to_dict() == DEFAULTS
    assert tuple(DEFAULTS) == RULE_KEYS


def test_presets_shipped():
    import arena

    assert available_presets() == ["eaai", "oklahoma", "standard"]
    # Inside the package (package data), so a wheel install carries them.
    assert PRESETS_DIR.is_dir() and PRESETS_DIR.parent == Path(arena.__file__).resolve().parent


def test_presets_load_from_any_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_rules("eaai").big_gin is False


@pytest.mark.parametrize(
    ("name", "changed"),
    [
        ("standard", {}),
        ("eaai", {"big_gin": False}),
        ("oklahoma", {"oklahoma": True}),
    ],
)
def test_preset_values(name, changed):
    assert load_rules(name).to_dict() == {**DEFAULTS, **changed}


def test_standard_file_spells_out_every_key():
    import tomllib

    with open(PRESETS_DIR / "standard.toml", "rb") as fh:
        assert tomllib.load(fh) == DEFAULTS


# --- rules array -------------------------------------------------------------------


def test_rules_array_slots():
    r = Rules(
        knock_limit=7,
        gin_bonus=20,
        big_gin=False,
        big_gin_bonus=30,
        undercut_bonus=10,
        undercut_on_tie=False,
        target=50,
        next_dealer="winner",
        no_retake=False,
        oklahoma=True,
        turn_cap=300,
        hand_cap=500,
    )
    a = rules_array(r)
    assert a.dtype == np.int64 and a.shape == (layout.R_SIZE,)
    assert a[layout.R_KNOCK_LIMIT] == 7
    assert a[layout.R_GIN_BONUS] == 20
    assert a[layout.R_BIG_GIN] == 0
    assert a[layout.R_BIG_GIN_BONUS] == 30
    assert a[layout.R_UNDERCUT_BONUS] == 10
    assert a[layout.R_UNDERCUT_ON_TIE] == 0
    assert a[layout.R_TARGET] == 50
    assert a[layout.R_NEXT_DEALER] == layout.NEXT_DEALER_WINNER
    assert a[layout.R_NO_RETAKE] == 0
    assert a[layout.R_OKLAHOMA] == 1
    assert a[layout.R_TURN_CAP] == 300
    assert a[layout.R_HAND_CAP] == 500
    assert rules_from_array(a) == r


def test_rules_array_defaults():
    a = rules_array(Rules())
    assert a[layout.R_BIG_GIN] == 1
    assert a[layout.R_UNDERCUT_ON_TIE] == 1
    assert a[layout.R_NO_RETAKE] == 1
    assert a[layout.R_OKLAHOMA] == 0
    assert a[layout.R_NEXT_DEALER] == layout.NEXT_DEALER_ALTERNATE


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("alternate", layout.NEXT_DEALER_ALTERNATE),
        ("winner", layout.NEXT_DEALER_WINNER),
        ("loser", layout.NEXT_DEALER_LOSER),
    ],
)
def test_next_dealer_codes(name, code):
    assert rules_array(Rules(next_dealer=name))[layout.R_NEXT_DEALER] == code


# --- validation ----------------------------------------------------------------------

OUT_OF_RANGE = [
    ("knock_limit", -1),
    ("knock_limit", 11),
    ("gin_bonus", -1),
    ("gin_bonus", 1001),
    ("gin_bonus", 2**63 - 1),  # would wrap in the int64 rules array if accepted
    ("big_gin_bonus", -1),
    ("big_gin_bonus", 1001),
    ("undercut_bonus", -5),
    ("undercut_bonus", 1001),
    ("undercut_bonus", 99999999999999999999),  # does not fit int64 at all
    ("target", 0),
    ("target", -100),
    ("target", 10_001),
    ("next_dealer", "winer"),
    ("next_dealer", ""),
    ("turn_cap", 9),
    ("turn_cap", 10_001),
    ("hand_cap", 0),
    ("hand_cap", 100_001),
]

WRONG_TYPE = [
    ("knock_limit", True),
    ("knock_limit", 5.0),
    ("knock_limit", "5"),
    ("gin_bonus", False),
    ("gin_bonus", 2.5),
    ("big_gin", 1),
    ("big_gin", "true"),
    ("big_gin_bonus", True),
    ("big_gin_bonus", None),
    ("undercut_bonus", "25"),
    ("undercut_on_tie", 0),
    ("undercut_on_tie", None),
    ("target", 100.0),
    ("target", True),
    ("next_dealer", 0),
    ("next_dealer", True),
    ("no_retake", 1),
    ("no_retake", "false"),
    ("oklahoma", "yes"),
    ("oklahoma", 0),
    ("turn_cap", 200.0),
    ("turn_cap", False),
    ("hand_cap", "1000"),
    ("hand_cap", True),
]


def test_every_key_has_bad_values():
    assert {k for k, _ in OUT_OF_RANGE} | {k for k, _ in WRONG_TYPE} == set(RULE_KEYS)
    assert {k for k, _ in WRONG_TYPE} == set(RULE_KEYS)


def test_every_integer_setting_is_bounded_on_both_sides_within_int32():
    # Scores, bonuses and counters travel through int64 kernels into int16/int32
    # columns; an unbounded setting is an overflow or a silent wrap waiting.
    for f in dataclasses.fields(Rules):
        if f.metadata["kind"] == "int":
            lo, hi = f.metadata["lo"], f.metadata["hi"]
            assert hi is not None and 0 <= lo < hi < 2**31, f.name
            assert f"{lo}..{hi}" in f.metadata["allowed"], f.name
            assert any(k == f.name and v > hi for k, v in OUT_OF_RANGE), f"no too-big value tested for {f.name}"


@pytest.mark.parametrize(
    ("item", "key", "shown"),
    [
        ("undercut_bonus=99999999999999999999", "undercut_bonus", "99999999999999999999"),
        ("gin_bonus=9223372036854775807", "gin_bonus", "9223372036854775807"),
        ("target=1e400", "target", "inf"),
    ],
)
def test_huge_override_is_one_line_error_not_overflow(item, key, shown):
    # The command line's --set path: parse, then apply; no OverflowError, no wrap.
    with pytest.raises(RulesError) as info:
        load_rules("standard", parse_overrides([item]))
    message = str(info.value)
    assert "\n" not in message and info.value.key == key
    assert message.startswith(f"rules (overrides): {key} = {shown}")


@pytest.mark.parametrize(("key", "value"), OUT_OF_RANGE)
def test_out_of_range_raises(key, value):
    with pytest.raises(RulesError) as info:
        Rules(**{key: value})
    message = str(info.value)
    assert message.startswith(f"rules: {key} = ")
    assert "allowed:" in message
    assert "\n" not in message
    assert info.value.key == key


@pytest.mark.parametrize(("key", "value"), WRONG_TYPE)
def test_wrong_type_raises(key, value):
    with pytest.raises(RulesError) as info:
        Rules.from_dict({key: value})
    message = str(info.value)
    assert message.startswith(f"rules: {key} = ")
    assert "wrong type" in message and "allowed:" in message
    assert "\n" not in message
    assert info.value.key == key


def test_error_message_format():
    with pytest.raises(RulesError, match=r"^rules: knock_limit = 12 is out of range \(allowed: integer 0\.\.10\)$"):
        Rules(knock_limit=12)
    with pytest.raises(RulesError, match=r"^rules: big_gin = 1 has the wrong type \(allowed: true or false\)$"):
        Rules(big_gin=1)


def test_rules_error_is_value_error():
    assert issubclass(RulesError, ValueError)


@pytest.mark.parametrize(
    "changes",
    [
        {"knock_limit": 0},
        {"knock_limit": 10},
        {"gin_bonus": 0},
        {"gin_bonus": 1000, "big_gin_bonus": 1000, "undercut_bonus": 1000},
        {"target": 1},
        {"target": 10_000},
        {"turn_cap": 10},
        {"turn_cap": 10_000},
        {"hand_cap": 1},
        {"hand_cap": 100_000},
        {"next_dealer": "loser"},
    ],
)
def test_boundaries_accepted(changes):
    assert Rules.from_dict(changes).to_dict() == {**DEFAULTS, **changes}


def test_numpy_ints_are_normalised():
    r = Rules(knock_limit=np.int64(5), big_gin=np.bool_(False))
    assert type(r.knock_limit) is int and type(r.big_gin) is bool


def test_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Rules().knock_limit = 5  # type: ignore[misc]


def test_replace_is_validated():
    with pytest.raises(RulesError, match="knock_limit"):
        dataclasses.replace(Rules(), knock_limit=99)


def test_unknown_key_suggests_close_match():
    with pytest.raises(RulesError) as info:
        Rules.from_dict({"knok_limit": 5})
    message = str(info.value)
    assert "unknown key 'knok_limit'" in message
    assert "did you mean 'knock_limit'?" in message
    assert "known keys: knock_limit, gin_bonus" in message
    assert "\n" not in message


def test_unknown_key_without_close_match():
    with pytest.raises(RulesError) as info:
        Rules.from_dict({"zzz": 1})
    assert "did you mean" not in str(info.value)
    assert "known keys:" in str(info.value)


def test_bad_choice_suggests_close_match():
    with pytest.raises(RulesError, match="did you mean 'winner'"):
        Rules(next_dealer="winer")


# --- loading -----------------------------------------------------------------------


def test_unknown_preset_lists_presets():
    with pytest.raises(RulesError) as info:
        load_rules("standrd")
    message = str(info.value)
    assert "unknown preset 'standrd'" in message
    assert "did you mean 'standard'?" in message
    assert "available presets: eaai, oklahoma, standard" in message


def test_preset_with_overrides():
    r = load_rules("eaai", {"knock_limit": 5, "target": 50})
    assert r.to_dict() == {**DEFAULTS, "big_gin": False, "knock_limit": 5, "target": 50}


def test_bad_override_names_source():
    with pytest.raises(RulesError, match=r"^rules \(overrides\): knock_limit = 11 is out of range"):
        load_rules("standard", {"knock_limit": 11})
    with pytest.raises(RulesError, match="did you mean 'target'"):
        load_rules("standard", {"traget": 50})


def test_file_path(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('knock_limit = 8\nnext_dealer = "loser"\n')
    r = load_rules(path)
    assert r.to_dict() == {**DEFAULTS, "knock_limit": 8, "next_dealer": "loser"}
    assert load_rules(str(path)) == r


def test_file_with_rules_table(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text('[rules]\npreset = "oklahoma"\ntarget = 200\n\n[tournament]\ngames = 10\n')
    assert load_rules(path).to_dict() == {**DEFAULTS, "oklahoma": True, "target": 200}


def test_file_loose_key_beside_rules_table(tmp_path):
    path = tmp_path / "loose.toml"
    path.write_text("target = 50\n[rules]\nknock_limit = 5\n")
    with pytest.raises(RulesError, match="'target' is outside the \\[rules\\] table"):
        load_rules(path)


def test_file_inherits_preset_then_overrides(tmp_path):
    path = tmp_path / "inherit.toml"
    path.write_text('preset = "eaai"\nknock_limit = 5\n')
    r = load_rules(path, {"undercut_bonus": 10})
    assert r.to_dict() == {**DEFAULTS, "big_gin": False, "knock_limit": 5, "undercut_bonus": 10}


def test_file_inherits_relative_file(tmp_path):
    (tmp_path / "base.toml").write_text('preset = "oklahoma"\ngin_bonus = 20\n')
    (tmp_path / "child.toml").write_text('preset = "base.toml"\ntarget = 50\n')
    r = load_rules(tmp_path / "child.toml")
    assert r.to_dict() == {**DEFAULTS, "oklahoma": True, "gin_bonus": 20, "target": 50}


def test_file_preset_cycle(tmp_path):
    (tmp_path / "a.toml").write_text('preset = "b.toml"\n')
    (tmp_path / "b.toml").write_text('preset = "a.toml"\n')
    with pytest.raises(RulesError, match="cycle"):
        load_rules(tmp_path / "a.toml")


def test_file_errors_name_the_file(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("knok_limit = 5\n")
    with pytest.raises(RulesError) as info:
        load_rules(path)
    assert str(path) in str(info.value)
    assert "did you mean 'knock_limit'?" in str(info.value)

    path.write_text('preset = "nope"\n')
    with pytest.raises(RulesError, match="unknown preset 'nope'"):
        load_rules(path)


def test_file_missing_or_invalid(tmp_path):
    with pytest.raises(RulesError, match="does not exist"):
        load_rules(tmp_path / "missing.toml")
    path = tmp_path / "broken.toml"
    path.write_text("knock_limit = = 5\n")
    with pytest.raises(RulesError, match="not valid TOML"):
        load_rules(path)


def test_from_dict_with_preset():
    r = Rules.from_dict({"preset": "eaai", "target": 50}, source="test")
    assert r.to_dict() == {**DEFAULTS, "big_gin": False, "target": 50}


def test_parse_overrides():
    assert parse_overrides(["knock_limit=5", "big_gin=false", "next_dealer=winner"]) == {
        "knock_limit": 5,
        "big_gin": False,
        "next_dealer": "winner",  # a bare word: taken as text
    }
    assert parse_overrides(['next_dealer="loser"']) == {"next_dealer": "loser"}  # TOML's own string
    with pytest.raises(RulesError, match="key=value"):
        parse_overrides(["knock_limit"])
    with pytest.raises(RulesError, match="did you mean 'knock_limit'"):
        parse_overrides(["knok_limit=5"])


# --- display -----------------------------------------------------------------------


def test_describe_lists_every_setting_and_marks_changes():
    text = load_rules("eaai").describe()
    lines = text.splitlines()
    for key in RULE_KEYS:
        assert any(line.lstrip("* ").startswith(key) for line in lines), key
    assert any(line.startswith("*big_gin ") and "false" in line for line in lines)
    assert not any(line.startswith("*knock_limit") for line in lines)


# --- tournament configs: bad values are one-line errors -----------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("rules = 5", "rules = 5 is not allowed (allowed: a preset name, a .toml path, or a [rules] table)"),
        ("results_dir = 5", "results_dir = 5 is not allowed (allowed: a folder path, as text)"),
        ("rules = true", "rules = true is not allowed"),
        (
            'rules = { preset = "standard", gin_bonus = 9223372036854775807 }',
            "gin_bonus = 9223372036854775807 is out of range",
        ),
    ],
)
def test_config_with_a_bad_value_is_a_one_line_config_error(tmp_path, line, message):
    from arena.settings.config import ConfigError, load_config

    path = tmp_path / "c.toml"
    path.write_text(f'bots = ["random", "simple"]\n{line}\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    text = str(info.value)
    assert message in text and text.startswith(str(path)) and "\n" not in text


@pytest.mark.parametrize("body", ["", "# only a comment\n", 'name = "x"\nseed = 3\n'])
def test_a_config_without_bots_is_refused_saying_what_is_missing(tmp_path, body):
    # An empty file is refused rather than run with defaults it never named.
    from arena.settings.config import ConfigError, load_config

    path = tmp_path / "c.toml"
    path.write_text(body)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    text = str(info.value)
    assert "\n" not in text and "bots = [" in text
    assert ("the file is empty" in text) == (body.strip() == "" or body.startswith("#"))


def test_shipped_example_configs_load_by_name_from_any_folder(tmp_path, monkeypatch):
    from importlib.resources import files

    from arena.settings.config import ConfigError, load_config

    monkeypatch.chdir(tmp_path)  # no configs/ folder here
    shipped = sorted(p.name for p in files("arena").joinpath("configs").iterdir() if p.name.endswith(".toml"))
    assert {"default.toml", "quick.toml"} <= set(shipped)  # (sweep-*.toml are sweep files, for `arena sweep`)
    quick = load_config("quick")
    assert quick.name == "quick" and quick.bots == ("random", "simple")
    assert load_config("default").name == "default"
    with pytest.raises(
        ConfigError, match=r"nosuch: no such config file, nor a shipped example \(the examples: default, "
    ):
        load_config("nosuch")
    # A file of that name in the working folder wins over the example.
    (tmp_path / "quick").write_text('name = "mine"\nbots = ["simple", "random"]\n')
    assert load_config("quick").name == "mine"


def test_checkout_configs_are_the_shipped_examples():
    # configs/*.toml in a checkout are links to arena/configs/, one copy of each.
    root = Path(__file__).resolve().parents[2]
    for name in ("default.toml", "quick.toml"):
        link = root / "configs" / name
        assert link.resolve() == (root / "arena" / "configs" / name).resolve()
    assert not (root / "configs" / "rules").exists()  # presets moved to arena/presets/


def test_a_rules_file_beside_a_config_is_read_from_there_and_saved_absolute(tmp_path, monkeypatch):
    """Like its bot files, a config's rules file is read from the config's folder, from any working
    folder; the run's saved config names it absolutely, so ``arena submit`` from elsewhere reads the
    same rules (before, both looked in the working folder: "file myrules.toml does not exist")."""
    from arena.run.runner import run_tournament
    from arena.run.store import RunStore
    from arena.settings.config import load_config

    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "myrules.toml").write_text('preset = "standard"\nknock_limit = 5\n')
    common = 'bots = ["random", "simple"]\ngames_per_pair = 2\nchunk_size = 2\nworkers = 1\n'
    (project / "r.toml").write_text(common + 'rules = "myrules.toml"\n')
    (project / "t.toml").write_text(common + '[rules]\npreset = "myrules.toml"\ngin_bonus = 30\n')
    monkeypatch.chdir(elsewhere)
    cfg = load_config(project / "r.toml")
    assert cfg.rules == str(project / "myrules.toml") and cfg.resolved_rules().knock_limit == 5
    table = load_config(project / "t.toml").resolved_rules()
    assert (table.knock_limit, table.gin_bonus) == (5, 30)
    assert load_config(project / "r.toml", rules="standard").resolved_rules().knock_limit == 10  # --rules wins
    # A preset's name stays a preset, and a file that is not beside the config is read as written.
    (project / "p.toml").write_text(common + 'rules = "eaai"\n')
    assert load_config(project / "p.toml").rules == "eaai"
    (project / "m.toml").write_text(common + 'rules = "nowhere.toml"\n')
    with pytest.raises(ValueError, match="nowhere.toml"):
        load_config(project / "m.toml")
    folder = run_tournament(project / "r.toml", progress=False).store.dir.resolve()
    monkeypatch.chdir(tmp_path)
    assert RunStore(folder).config().resolved_rules().knock_limit == 5
    # The file changed since: a bot submitted now would play by other rules than the games stored.
    from arena.run.runner import TournamentError

    (project / "myrules.toml").write_text('preset = "standard"\nknock_limit = 7\n')
    cfg = RunStore(folder).config()
    with pytest.raises(TournamentError, match=r"different rules \(knock_limit = 5 there, 7 now\)"):
        run_tournament(cfg.replace(bots=(*cfg.bots, "gin-chasing")), progress=False)


def test_settings_files_saved_with_a_byte_order_mark_read_as_without_it(tmp_path):
    """Windows Notepad saves UTF-8 with a byte-order mark, which TOML does not allow: every settings file was
    "not valid TOML: Invalid statement (at line 1, column 1)", which named nothing a user could see."""
    from arena.analysis.sweep.spec import load_sweep
    from arena.league.config import load_league_config
    from arena.settings.analysis import load_settings
    from arena.settings.config import load_config

    bom = b"\xef\xbb\xbf"
    (tmp_path / "house.toml").write_bytes(bom + b'[rules]\npreset = "standard"\nknock_limit = 7\n')
    (tmp_path / "t.toml").write_bytes(bom + b'bots = ["random", "simple"]\nrules = "house.toml"\n')
    assert load_config(tmp_path / "t.toml").resolved_rules().knock_limit == 7  # and the rules file it names
    (tmp_path / "a.toml").write_bytes(bom + b"[analysis]\nsamples = 8\n")
    assert load_settings(tmp_path / "a.toml").samples == 8
    (tmp_path / "league.toml").write_bytes(bom + b"games_per_pairing = 4\n")
    assert load_league_config(tmp_path / "league.toml").games_per_pairing == 4
    (tmp_path / "s.toml").write_bytes(
        bom + b'name = "s"\nbot = "early-knock"\nopponents = ["simple"]\n[grid]\nknock_at = [2, 8]\n'
    )
    assert load_sweep(tmp_path / "s.toml").bot == "early-knock"
