"""The legal-action query and the observation's no-leak test on many more random games than the suite plays.

Runs the tests of ``tests/engine/test_legal_actions.py`` (the query against
the rules reference at every decision, every answer tried against
``apply_action``, the observation field by field, and hidden cards dealt again
without changing the observation or the mask) with ``--scale`` times their
games, under every preset they cover.  Prints the positions checked per test
and exits non-zero on the first disagreement.

Run: ``python scripts/check_legal_actions.py [--scale 100]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.engine import test_legal_actions as t  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=100, help="times the suite's games per test")
    args = ap.parse_args()
    for key in t.GAMES:
        t.GAMES[key] *= args.scale
    runs = [
        *[(t.test_legal_actions_match_the_rules_reference_at_every_decision, (p, c)) for p, c in t.VARIANTS],
        *[(t.test_apply_action_accepts_exactly_the_legal_answers, (p,)) for p in t.PRESETS],
        *[(t.test_observation_holds_the_documented_fields, (p,)) for p in ("standard", "oklahoma")],
        *[(t.test_observation_and_mask_do_not_change_when_hidden_cards_are_dealt_again, (p,)) for p in t.PRESETS],
    ]
    for fn, params in runs:
        start = time.perf_counter()
        fn(*params)
        print(f"ok  {fn.__name__}{params}  {time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
