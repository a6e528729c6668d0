"""Rules are resolved and validated once per run, not in every layer they pass.

The config validates its rules when it is made and hands the validated
:class:`Rules` down: the plan puts it in every chunk task and the worker only
packs it into the kernels' array.  A resume validates once more, for the
stored config it compares against.
"""

from __future__ import annotations

import pytest

from arena.run.runner import run_tournament
from arena.run.schedule import Inline
from arena.settings.config import load_config
from arena.settings.rules import Rules


@pytest.fixture
def validations(monkeypatch):
    """Counts every construction (and so validation) of a Rules."""
    count = {"n": 0}
    original = Rules.__post_init__

    def counted(self):
        count["n"] += 1
        original(self)

    monkeypatch.setattr(Rules, "__post_init__", counted)
    return count


def _config(tmp_path, **rules_args):
    path = tmp_path / "t.toml"
    path.write_text('bots = ["random", "simple"]\ngames_per_pair = 40\nchunk_size = 20\nrules = "eaai"\n')
    return load_config(path, {"results_dir": str(tmp_path / "results"), "name": "once"}, **rules_args)


def test_a_run_validates_its_rules_once_and_a_resume_once_more(tmp_path, validations):
    cfg = _config(tmp_path)
    assert validations["n"] == 1
    run_tournament(cfg, progress=False, schedule=Inline())
    assert validations["n"] == 1, "the runner, plan or worker validated the rules again"
    run_tournament(cfg, progress=False, schedule=Inline())  # resume: reads the stored config.toml
    assert validations["n"] == 2


def test_rules_and_sets_from_the_command_line_are_one_validation(tmp_path, validations):
    cfg = _config(tmp_path, rules="oklahoma", rule_sets={"gin_bonus": 30})
    assert cfg.resolved_rules().oklahoma and cfg.resolved_rules().gin_bonus == 30
    assert validations["n"] == 1  # the preset and the --set merged first, then validated once
    before = validations["n"]
    cfg.replace(workers=1).with_absolute_paths()
    assert validations["n"] == before, "replacing other keys re-validated the rules"


def test_a_chunk_task_carries_the_validated_rules(tmp_path):
    from arena.loading.load import load_bots
    from arena.run.plan import BotSpec, plan_matchup

    cfg = _config(tmp_path, rule_sets={"knock_limit": 5})
    specs = [BotSpec.of(b) for b in load_bots(cfg).values()]
    _, tasks = plan_matchup(
        *specs,
        matchup_no=0,
        rules=cfg.resolved_rules(),
        seed=1,
        games=40,
        duplicate=True,
        chunk_size=20,
        record_hands=True,
        per_game_seconds=1.0,
        chunk_floor_seconds=10.0,
    )
    assert {t.rules for t in tasks} == {cfg.resolved_rules()}
    assert tasks[0].rules.knock_limit == 5 and tasks[0].rules.undercut_bonus == Rules(undercut_bonus=25).undercut_bonus
