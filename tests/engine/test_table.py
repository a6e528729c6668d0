"""Table, the named reading of a state (arena replay's and the viewer's source of truth)."""

from __future__ import annotations

import pytest

from arena.engine.cards import mask_of, parse_cards
from arena.engine.layout import S_HAND
from arena.engine.table import Table
from arena.settings.rules import load_rules
from tests.scripted import setup

NONDEALER = "Ac 2c 3c 4c 5c 6c 7c 8c 9c Tc"
DEALER = "Ad 2d 3d 4d 5d 6d 7d 8d 9d Td"


@pytest.mark.parametrize("dealer_seat", [0, 1])
def test_dealt_names_each_seat_its_own_ten_cards(dealer_seat: int) -> None:
    """The non-dealer is dealt the deck's first ten cards, the dealer the next ten, whichever seat deals
    (arena replay's 'dealt' lines read this: swapped, they showed each player the other's hand)."""
    st, _ = setup(load_rules("standard"), NONDEALER, DEALER, "Ah", dealer_seat=dealer_seat)
    dealt = Table(st).dealt
    nondealer = 1 - dealer_seat
    assert dealt[nondealer] == mask_of(parse_cards(NONDEALER))
    assert dealt[dealer_seat] == mask_of(parse_cards(DEALER))
    assert dealt == (int(st[S_HAND]), int(st[S_HAND + 1]))  # before any play, what each seat holds
