"""The runs of state slots that arena.engine.step resets and copies in loops, not slot by slot."""

from __future__ import annotations

import numpy as np

from arena.engine import layout as L
from arena.engine.rules_array import rules_array
from arena.engine.step import _ROW_COPIES, deal_from_deck, new_state
from arena.settings.rules import load_rules


def test_deal_from_deck_resets_exactly_the_per_hand_slots_it_names() -> None:
    """deal_from_deck zeroes S_TAKEN..S_PASSED+1, S_DEADWOOD..S_ERROR and S_NDISCARDS, sets the
    upcard taker and knocker to -1 and the outcome to OUT_NONE: the loops cover these slots only."""
    assert L.S_PASSED + 2 == L.S_SCORE  # taken, discarded, passed end where the scores begin
    assert L.S_KNOCKER == L.S_UPCARD_TAKER + 1
    assert [L.S_DEADWOOD, L.S_POINTS, L.S_PICKUPS, L.S_LAID_OFF, L.S_ERROR] == [
        L.S_DEADWOOD,
        L.S_DEADWOOD + 2,
        L.S_DEADWOOD + 4,
        L.S_DEADWOOD + 6,
        L.S_DEADWOOD + 11,
    ]
    st = new_state()
    st[:] = 77
    st[L.S_DECK : L.S_DECK + 52] = np.arange(52)
    st[L.S_DEALER] = 1
    deal_from_deck(st, rules_array(load_rules("standard")))
    zeroed = [*range(L.S_TAKEN, L.S_PASSED + 2), *range(L.S_DEADWOOD, L.S_ERROR + 1), L.S_NDISCARDS, L.S_NDISCARDS + 1]
    assert (st[zeroed] == 0).all()
    assert st[L.S_UPCARD_TAKER] == st[L.S_KNOCKER] == -1
    assert st[L.S_OUTCOME] == L.OUT_NONE
    # Game-level slots are kept: the scores and the hand number.
    assert st[L.S_SCORE] == st[L.S_SCORE + 1] == st[L.S_HAND_NO] == 77
    # Seat 0 is the non-dealer: cards 0-9; the dealer gets 10-19.
    assert st[L.S_HAND] == (1 << 10) - 1 and st[L.S_HAND + 1] == (1 << 20) - (1 << 10)


def test_hand_row_copies_name_every_copied_slot_once() -> None:
    rows, slots = _ROW_COPIES[:, 0], _ROW_COPIES[:, 1]
    assert len(set(rows.tolist())) == len(rows) and rows.max() < L.H_SIZE and slots.max() < L.S_SIZE
    assert {L.H_GAME, L.H_STOCK_LEFT, L.H_LOG_START, L.H_LOG_LEN, L.H_SCORE, L.H_SCORE + 1}.isdisjoint(rows.tolist())
    assert len(rows) + 6 == L.H_SIZE  # with the six slots write_hand_row computes, every slot is written
