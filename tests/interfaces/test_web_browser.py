"""The play and viewer pages in a real browser: Playwright for Python driving Debian's Chromium.

The browser is the ``browser`` fixture (tests/conftest.py, tests/browser.py:
what it needs, and how a missing one skips or fails).  Screenshots go to ``$ARENA_SCREENSHOTS`` when set,
else to the test's tmp folder.

Exact situations (a knock, a defence) are set up on the server: the test
deals a scripted hand into the live session (``tests/scripted.py``) and
reloads the page, which resumes the game by its session id, as a person's
reload does.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.engine.cards import mask_of, parse_card, parse_cards
from arena.engine.layout import S_DEADWOOD, S_KNOCK_RUNS, S_KNOCK_SETS, S_LAID_OFF, S_POINTS
from arena.engine.showdown import knocker_proposal
from arena.web.server import App, Server
from tests.scripted import encode, setup

SHOTS = Path(os.environ["ARENA_SCREENSHOTS"]) if os.environ.get("ARENA_SCREENSHOTS") else None
PHONE = {"width": 390, "height": 844}
DESK = {"width": 1200, "height": 860}

# One hand, seen from either side: the knocker ends with 7c 7d 7h | 2c 3c 4c | 8s 9s Ts and Ad (1 deadwood)
# after drawing Ad and discarding Kh; the defender can lay off 7s, the chain 5c 6c, and the chain Js Qs.
KNOCKER = "7c 7d 7h 2c 3c 4c 8s 9s Ts Kh"
DEFENDER = "7s 5c 6c Js Qs 2h 3h Kd Qd 4d"


@pytest.fixture
def shots(tmp_path):
    d = SHOTS or tmp_path
    d.mkdir(parents=True, exist_ok=True)
    return d


def _page(browser, viewport=DESK, locale="en-US", touch=False):
    ctx = browser.new_context(viewport=viewport, locale=locale, has_touch=touch, is_mobile=touch)
    return ctx, ctx.new_page()


@pytest.fixture
def srv():
    s = Server(App(bot="simple", seed=4), port=0).start()
    yield s
    s.stop()


def c(text):
    return parse_card(text)


def card(page, text, where="#you-hand"):
    return page.locator(f'{where} .card[data-id="{c(text)}"]')


def _start(page, srv, **select):
    page.goto(srv.url)
    page.wait_for_selector("#preset option", state="attached")
    for k, v in select.items():
        page.select_option(f"#{k}", v)
    page.click("#go")
    page.wait_for_selector("#table:not(.hidden)")


def install(srv, page, nondealer, dealer, dealer_seat, *actions, defend=False, scores=(0, 0), upcard="5h", reload=True):
    """Deal a scripted hand into the live session (the game's ``scores`` before it), play ``actions``, and
    reload the page (it resumes); or, ``reload=False``, have the page fetch the state as it does when the
    server refuses a move from a stale page (the page keeps what it holds in memory)."""
    s = srv.app.session
    st, _ = setup(s.rules_obj, nondealer, dealer, upcard, stock="Ad", dealer_seat=dealer_seat, scores=scores)
    with s.lock:
        s.st[:] = st
        s.done_st = s.st
        s.hand_over = False
        s.events, s.items = [], []
        for a in actions:  # through the session, so its log has them, in words
            s._apply(encode(a))
        s.stage = "defend" if defend else "play"
        ks, kr, _ = knocker_proposal(s.st)
        s.knock = {"sets": ks, "runs": kr, "laid": 0} if defend else {}
    if reload:
        page.reload()
    else:
        page.evaluate("async () => update(await (await fetch(q('/api/state'))).json())")
    page.wait_for_selector("#table:not(.hidden)")


def _win_the_game_by_a_knock(srv, page):
    """At 90-0, knock with the scripted hand (discarding Kh) and lay down: the game is over, its window up."""
    install(srv, page, KNOCKER, DEFENDER, 1, "pass", "pass", scores=(90, 0))
    page.click("#knock")
    card(page, "Kh").click()
    page.wait_for_selector("#arrange:not(.hidden)")
    page.click("#lay_down")
    page.wait_for_selector("#again")


def _until(page, expression, seconds=10.0):
    """Wait until ``expression`` is true in the page (``wait_for_function`` evaluates a string, which
    the page's content security policy forbids)."""
    import time

    end = time.monotonic() + seconds
    while not page.evaluate(expression):
        assert time.monotonic() < end, f"never true: {expression}"
        time.sleep(0.05)


def fits(page, width):
    return page.evaluate("document.scrollingElement.scrollWidth") <= width


def test_knock_from_the_discard_phase_and_lay_down_a_chosen_arrangement_that_wins_the_game(browser, srv, shots):
    ctx, page = _page(browser)
    try:
        _start(page, srv)
        install(srv, page, KNOCKER, DEFENDER, 1, "pass", "pass", scores=(90, 0))  # drew Ad: discard phase
        assert page.locator("#knock").is_enabled() and page.locator("#knock").inner_text() == "Knock"
        assert "best after a discard: 1" in page.locator("#deadwood").inner_text()
        assert "You draw" in page.locator("#events").inner_text()  # the log names the drawn card
        page.screenshot(path=str(shots / "knock-desktop.png"))
        page.click("#knock")
        assert "Choose the card" in page.locator("#status").inner_text()
        card(page, "Kh").click()
        page.wait_for_selector("#arrange:not(.hidden)")
        assert page.locator("#my-zones .zone").count() == 5  # three melds, the deadwood, a new-meld zone
        # Take the club run apart: its cards go to the deadwood (1 + 2 + 3 + 4 = 10, still a knock)
        card(page, "2c", "#my-zones").drag_to(page.locator("#my-zones .zone.deadwood"))  # by mouse
        for x in ("3c", "4c"):  # by tapping the card, then the group
            card(page, x, "#my-zones").click()
            page.locator("#my-zones .zone.deadwood").click()
        page.screenshot(path=str(shots / "lay-down-desktop.png"))
        page.click("#lay_down")
        page.wait_for_selector("#overlay:not(.hidden)")
        st = srv.app.session.done_st
        assert int(st[S_KNOCK_SETS]) == mask_of(parse_cards("7c 7d 7h"))
        assert int(st[S_KNOCK_RUNS]) == mask_of(parse_cards("8s 9s Ts"))
        assert st[S_DEADWOOD] == 10
        line = page.locator("#box .line").inner_text()  # the bot lays off 7s, Js and Qs and keeps 40 deadwood
        assert line == "You knocked: 40 − 10 deadwood = 30 points to you" and st[S_DEADWOOD + 1] == 40, line
        assert page.locator("#box h2").inner_text() == "Game over: you win 120–0"  # 90 + 30: the game is won
        assert page.locator("#status").inner_text() == "Game over: you win."
        page.screenshot(path=str(shots / "showdown-desktop.png"))
    finally:
        ctx.close()


def test_a_new_game_s_first_lay_down_shows_its_own_cards_not_the_last_game_s(browser, srv, shots):
    """The arrangement is rebuilt when stage:hand:laid changes; a game won in hand 1 by a lay-down, then New
    game and a knock in its hand 1, had the same key: the page showed the old game's cards, and Lay down
    was refused ("5c is not in the hand") until a reload."""
    ctx, page = _page(browser)
    try:
        _start(page, srv)
        _win_the_game_by_a_knock(srv, page)
        page.click("#again")
        page.click("#go")
        page.wait_for_selector("#table:not(.hidden)")
        assert srv.app.session.st[S_POINTS] == 0  # a new game
        mine = "8c 9c Tc 9h 9d 9s Jh Qh Kh 2s"  # draws Ad: 8-9-Tc, 9s, J-Q-Kh, and Ad 2s (3 deadwood)
        install(srv, page, mine, DEFENDER, 1, "pass", "pass", reload=False)  # a reload would hide it
        page.click("#knock")
        card(page, "2s").click()
        page.wait_for_selector("#arrange:not(.hidden)")
        shown = page.eval_on_selector_all("#my-zones .card", "els => els.map(e => Number(e.dataset.id))")
        assert sorted(shown) == sorted(c(x) for x in "8c 9c Tc 9h 9d 9s Jh Qh Kh Ad".split())
        page.screenshot(path=str(shots / "second-game-lay-down.png"))
        page.click("#lay_down")
        page.wait_for_selector("#overlay:not(.hidden)")
        assert page.locator("#error").is_hidden() or not page.locator("#error").inner_text().strip()
        assert srv.app.session.done_st[S_DEADWOOD] == 1  # Ad: the lay-down the page showed was taken
    finally:
        ctx.close()


def test_a_card_dragged_onto_knock_knocks_with_that_discard_and_a_bad_one_is_refused(browser, srv):
    ctx, page = _page(browser)
    try:
        _start(page, srv)
        install(srv, page, KNOCKER, DEFENDER, 1, "pass", "pass")
        before = srv.app.session.st.copy()
        card(page, "2c").drag_to(page.locator("#knock"))  # 2c leaves far more than 10
        page.wait_for_selector("#error:not(.hidden)")
        assert "cannot knock discarding 2♣" in page.locator("#error").inner_text()
        assert (srv.app.session.st == before).all()
        card(page, "Kh").drag_to(page.locator("#knock"))
        page.wait_for_selector("#arrange:not(.hidden)")
        assert srv.app.session.stage == "lay_down"
    finally:
        ctx.close()


def test_defend_with_a_chained_layoff_an_illegal_one_refused_then_pass(browser, srv, shots):
    """The pill shows the deadwood left after the layoffs; the defender finishes with Lay down while a remaining
    card melds (Js Qs Ks here) and with Pass once none does."""
    ctx, page = _page(browser)
    try:
        _start(page, srv)
        defender = "7s 5c 6c Js Qs Ks 2h 3h Kd 4d"
        install(srv, page, KNOCKER, defender, 0, "pass", "pass", "Kh", defend=True)  # the bot knocked
        page.wait_for_selector("#arrange:not(.hidden)")
        assert page.locator("#deadwood").inner_text() == "deadwood 37"
        assert page.locator("#lay_down").is_visible() and page.locator("#pass_defend").is_hidden()
        status = page.locator("#status").inner_text()
        assert status.endswith("Then press Lay down: your melds, as arranged below, are laid down."), status
        s = srv.app.session
        run = f'#opp-zones .zone:has(.card[data-id="{c("2c")}"])'
        before = s.st.copy()
        card(page, "6c", "#my-zones").click()  # 6c alone does not touch 2-3-4c
        page.locator(run).click()
        page.wait_for_selector("#error:not(.hidden)")
        assert "6♣ fits none of the knocker's melds" in page.locator("#error").inner_text()
        assert s.knock["laid"] == 0 and (s.st == before).all() and s.stage == "defend"  # nothing changed
        assert page.locator("#opp-zones .card.laid").count() == 0 and card(page, "6c", "#my-zones").count() == 1
        for x, on in (("5c", "2c"), ("6c", "2c"), ("7s", "7c"), ("Js", "8s")):  # 6c after 5c: a chain
            card(page, x, "#my-zones").click()
            page.locator(f'#opp-zones .zone:has(.card[data-id="{c(on)}"])').click()
            page.wait_for_selector(f'#opp-zones .card.laid[data-id="{c(x)}"]')
        assert s.knock["laid"] == mask_of(parse_cards("5c 6c 7s Js"))
        assert page.locator("#deadwood").inner_text() == f"deadwood {s.view()['arrange']['deadwood']}" == "deadwood 39"
        assert page.locator("#pass_defend").is_visible() and page.locator("#lay_down").is_hidden()
        assert page.locator("#status").inner_text().endswith("None of your remaining cards meld: press Pass.")
        zones = page.eval_on_selector_all("#my-zones .zone", "zs => zs.map(z => z.querySelectorAll('.card').length)")
        assert zones == [6, 0]  # Qs Ks left the broken run for the deadwood (then the new-meld zone)
        page.screenshot(path=str(shots / "defend-desktop.png"))
        page.click("#pass_defend")  # Qs stays in hand though it could chain on Js: layoffs are the person's choice
        page.wait_for_selector("#overlay:not(.hidden)")
        st = s.done_st
        assert int(st[S_LAID_OFF]) == mask_of(parse_cards("5c 6c 7s Js"))
        assert st[S_DEADWOOD] == 10 + 2 + 3 + 10 + 10 + 4 and st[S_POINTS + 1] == 39 - 1
        assert page.locator("#box .card.laid").count() == 4
    finally:
        ctx.close()


def test_the_deadwood_pill_shows_the_arrangement_on_screen_which_lay_down_scores(browser, srv, shots):
    """The pill showed the server's best arrangement whatever the person arranged: 6 while Lay down scored 7."""
    ctx, page = _page(browser)
    try:
        _start(page, srv)
        install(srv, page, "Ac 2c 3c 4c 7c 7d 7h 2d 3s Kh", DEFENDER, 1, "pass", "pass")  # drew Ad
        page.click("#knock")
        card(page, "Kh").click()
        page.wait_for_selector("#arrange:not(.hidden)")
        pill = page.locator("#deadwood")
        assert pill.inner_text() == "deadwood 6"  # Ac-4c, 7c 7d 7h; 2d 3s Ad
        card(page, "Ac", "#my-zones").drag_to(page.locator("#my-zones .zone.deadwood"))  # 2c 3c 4c is still a run
        assert pill.inner_text() == "deadwood 7"
        card(page, "7c", "#my-zones").click()  # 7d 7h is no meld: their 14 count until 7c is back
        page.locator("#my-zones .zone.deadwood").click()
        assert pill.inner_text() == "deadwood 28"
        card(page, "7c", "#my-zones").click()
        page.locator(f'#my-zones .zone:has(.card[data-id="{c("7d")}"])').click()
        assert pill.inner_text() == "deadwood 7"
        page.screenshot(path=str(shots / "lay-down-pill.png"))
        page.click("#lay_down")
        page.wait_for_selector("#overlay:not(.hidden)")
        assert srv.app.session.done_st[S_DEADWOOD] == 7
    finally:
        ctx.close()


def test_a_spade_upcard_s_score_line_doubles_the_whole_sum_and_one_point_is_a_point(browser, srv, shots):
    """Oklahoma: "(29 − 1 deadwood) × 2", not "29 − 1 deadwood × 2" (which reads as 27); "1 point to you"."""
    ctx, page = _page(browser)
    try:
        _start(page, srv, preset="oklahoma")
        for upcard, defender, line in (
            ("5s", DEFENDER, "You knocked: (29 − 1 deadwood) × 2 = 56 points to you"),
            ("5h", "2h 4d 5d 6d 9h 9d 9c Jd Qd Kd", "You knocked: 2 − 1 deadwood = 1 point to you"),
        ):
            install(srv, page, KNOCKER, defender, 1, "pass", "pass", upcard=upcard)  # knock limit 5: Kh leaves 1
            page.click("#knock")
            card(page, "Kh").click()
            page.wait_for_selector("#arrange:not(.hidden)")
            page.click("#lay_down")
            page.wait_for_selector("#overlay:not(.hidden)")
            assert page.locator("#box .line").inner_text() == line
            page.screenshot(path=str(shots / f"showdown-{upcard}.png"))
    finally:
        ctx.close()


def test_an_emptied_number_field_is_refused_by_name_not_dealt_as_0(browser, srv):
    """Number("") is 0: an emptied Knock limit dealt a gin-only game.  A value the rules refuse is refused with a
    line naming the setting, and so is an empty one; the field gets the focus."""
    ctx, page = _page(browser)
    try:
        page.goto(srv.url)
        page.wait_for_selector("#preset option", state="attached")
        page.click("#advanced summary")
        page.fill("#rule-knock_limit", "")
        page.click("#go")
        page.wait_for_selector("#start-msg.bad, #table:not(.hidden)")
        assert srv.app.session is None  # no game dealt
        msg = page.locator("#start-msg").inner_text()
        assert msg == "Knock limit: the field is empty; enter a number from 0 to 10", msg
        assert page.evaluate("document.activeElement.id") == "rule-knock_limit"
        # a fraction, or a number out of range: refused here, by the setting's name, in the page's language
        # (the server's refusal was English and named the key: "rules.knock_limit.int: Input should be ...")
        for bad in ("5.5", "11"):
            page.fill("#rule-knock_limit", bad)
            page.click("#go")
            msg = page.locator("#start-msg").inner_text()
            assert msg == f"Knock limit: {bad} is not allowed; enter a whole number from 0 to 10", msg
            assert srv.app.session is None
        page.select_option("#lang", "sl")
        page.click("#go")
        assert page.locator("#start-msg").inner_text().endswith("vpišite celo število od 0 do 10")
        page.select_option("#lang", "en")
        page.fill("#rule-knock_limit", "7")
        page.click("#go")
        page.wait_for_selector("#table:not(.hidden)")
        assert srv.app.session.rules_obj.knock_limit == 7
    finally:
        ctx.close()


def test_slovenian_page_knocks_with_trkam_lays_down_with_polagam_and_passes_with_naprej(browser, srv, shots):
    ctx, page = _page(browser, PHONE, locale="sl-SI")
    try:
        _start(page, srv)
        assert page.locator("#lang").input_value() == "sl"
        install(srv, page, KNOCKER, DEFENDER, 1, "pass", "pass")
        assert page.locator("#knock").inner_text() == "Trkam" and page.locator("#knock").is_enabled()
        page.screenshot(path=str(shots / "knock-phone-sl.png"))
        page.click("#knock")
        card(page, "2c").click()  # leaves 18: refused, in the page's language
        page.wait_for_selector("#error:not(.hidden)")
        assert (
            page.locator("#error").inner_text()
            == "z odlogom 2♣ ne morete trkati: ostane 18 točk, meja za trkanje je 10"
        )
        card(page, "Kh").click()
        page.wait_for_selector("#arrange:not(.hidden)")
        assert page.locator("#lay_down").inner_text() == "Polagam"
        assert fits(page, 390)
        # Now the other side: the bot (at 40) knocked and the person passes (Naprej), laying nothing down.
        install(srv, page, KNOCKER, DEFENDER, 0, "pass", "pass", "Kh", defend=True, scores=(0, 40))
        page.wait_for_selector("#arrange:not(.hidden)")
        assert page.locator("#pass_defend").inner_text() == "Naprej"
        assert page.locator("#take").is_hidden() and page.locator("#pass").is_hidden()  # the upcard's are not shown
        page.screenshot(path=str(shots / "defend-phone-sl.png"))
        assert fits(page, 390)
        page.click("#pass_defend")
        page.wait_for_selector("#overlay:not(.hidden)")
        st = srv.app.session.done_st
        assert st[S_DEADWOOD] == 67 and st[S_POINTS + 1] == 66 and int(st[S_LAID_OFF]) == 0
        assert page.locator("#box .line").inner_text() == "Trkanje (simple): ostale točke 67 − 1 = 66 točk za: simple"
        assert page.locator("#box h2").inner_text() == "Konec partije: zmaga simple 106–0"  # the winner's first
        page.screenshot(path=str(shots / "showdown-phone-sl.png"))
        assert fits(page, 390)
    finally:
        ctx.close()


def test_a_tab_left_behind_by_another_tab_s_move_catches_up_instead_of_moving(browser, srv):
    """Two tabs on one game; tab A draws and discards and the bot replies.  Tab B, still showing the old
    pile, clicked it: the server took the bot's newer discard, a card B never showed.  Now B's click is
    refused as stale, nothing moves, and B shows the game as it is, with no error line."""
    ctx, a = _page(browser)
    try:
        _start(a, srv)
        install(srv, a, KNOCKER, DEFENDER, 1, "pass", "pass")  # A (the person) drew Ad: discard phase
        b = ctx.new_page()
        b.goto(a.url)
        b.wait_for_selector("#table:not(.hidden)")
        card(a, "Kh").click()  # A discards; the bot plays its turn
        _until(a, "state && state.phase !== 'discard'")
        after = srv.app.session.st.copy()
        shown = b.evaluate("state.moves")
        b.click("#pile")  # B still offers to discard: its pile is the old one
        _until(b, f"state.moves !== {shown}")
        assert (srv.app.session.st == after).all()  # nothing moved
        assert b.evaluate("state.moves") == a.evaluate("state.moves")
        assert b.locator("#error").is_hidden()
    finally:
        ctx.close()


def test_the_showdown_names_a_big_gin_as_big_gin(browser, srv):
    """The showdown's header said "You (gin)" for a big gin, whose 31 points the line below gave."""
    ctx, page = _page(browser)
    try:
        _start(page, srv)
        mine = "2d 3d 4d 5h 6h 7h 8h 9s 9c 9d"  # draws Ad: Ad-4d, 5h-8h, three 9s: all eleven melded
        install(srv, page, mine, "7s 5c 6c Js Qs 2h 3h Kd Qd Kc", 1, "pass", "pass", upcard="Ks")
        page.click("#big_gin")
        page.wait_for_selector("#arrange:not(.hidden)")
        page.click("#lay_down")
        page.wait_for_selector("#overlay:not(.hidden)")
        assert "You (big gin)" in page.locator("#box").inner_text()
    finally:
        ctx.close()


def test_clicking_the_pile_takes_the_upcard_as_the_manual_says(browser, srv):
    """The manual: a player takes a card by clicking its pile.  At the upcard, a click on the pile was
    refused ("take or pass the upcard first"), in English on every page; only the Take button took it."""
    ctx, page = _page(browser)
    try:
        _start(page, srv)
        install(srv, page, KNOCKER, DEFENDER, 1)  # the person, non-dealer, is to take or pass the upcard 5h
        page.click("#pile")
        page.wait_for_selector("#take", state="hidden")
        assert page.locator("#you-hand .card").count() == 11 and card(page, "5h").count() == 1
        assert page.locator("#error").is_hidden() or not page.locator("#error").inner_text().strip()
    finally:
        ctx.close()


def test_touch_tap_selects_a_card_then_the_pile_discards_it_or_another_card_moves_it(browser, srv, shots):
    ctx, page = _page(browser, PHONE, touch=True)
    try:
        _start(page, srv)
        install(srv, page, KNOCKER, DEFENDER, 1, "pass", "pass")
        ids = page.eval_on_selector_all("#you-hand .card", "els => els.map(e => Number(e.dataset.id))")
        card(page, "Kh").tap()
        assert "selected" in card(page, "Kh").get_attribute("class")
        assert srv.app.session.view()["phase"] == "discard"  # a tap only selects
        card(page, "7c").tap()  # a second card: the selected one moves before it
        moved = page.eval_on_selector_all("#you-hand .card", "els => els.map(e => Number(e.dataset.id))")
        assert moved[0] == c("Kh") and sorted(moved) == sorted(ids) and srv.app.session.view()["phase"] == "discard"
        card(page, "Kh").tap()
        page.locator("#pile .slot").tap()
        page.wait_for_selector(f'#you-hand .card[data-id="{c("Kh")}"]', state="detached")
        assert "You discard K♥" in srv.app.session.events
        page.screenshot(path=str(shots / "touch-phone.png"))
    finally:
        ctx.close()


def _settled_hand(page, srv, before: list[str], timeout: float = 15.0) -> list[int]:
    """The person's hand once the server has taken the click (its allowed moves are no longer ``before``)
    and the page shows what the server holds, for two looks 0.3 s apart."""
    import time

    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        view = srv.app.session.view()
        server = sorted(c["id"] for c in view["you"]["cards"]) if view["allowed"] != before else None
        ids = page.eval_on_selector_all("#you-hand .card", "els => els.map(e => Number(e.dataset.id))")
        if server is not None and sorted(ids) == server and server == last:
            return page.eval_on_selector_all("#you-hand .card", "els => els.map(e => Number(e.dataset.id)).sort()")
        last = server if sorted(ids) == server else None
        page.wait_for_timeout(300)
    raise AssertionError(f"the page's hand never settled on the server's ({last})")


def test_a_reload_resumes_the_game(browser, srv):
    ctx, page = _page(browser)
    try:
        _start(page, srv)
        page.wait_for_function("() => !document.querySelector('#status').textContent.includes('thinking')")
        v = srv.app.session.view()
        if "pass" in v["allowed"]:
            page.click("#pass")
        elif "draw_stock" in v["allowed"]:
            page.click("#stock")
        shown = _settled_hand(page, srv, v["allowed"])  # not a fixed wait: a loaded machine had not drawn yet at 300 ms
        sid = srv.app.session.id
        assert f"s={sid}" in page.url
        page.reload()
        page.wait_for_selector("#you-hand .card")
        again = page.eval_on_selector_all("#you-hand .card", "els => els.map(e => Number(e.dataset.id)).sort()")
        assert again == shown and len(srv.app.sessions) == 1  # the same game, no new one
        page.goto(srv.url)  # without the id in the address: local storage still has it
        page.wait_for_selector("#you-hand .card")
        assert f"s={sid}" in page.url
    finally:
        ctx.close()


def test_a_reload_whose_state_request_fails_keeps_the_game_for_the_next_reload(browser, srv):
    """A reload while a proxy answers 502 (the server restarting, a network blip) says so and keeps the game's
    id: the next reload resumes the game.  Any failure forgot the game, though the server still had it; only
    a 404 (the server no longer has it) forgets."""
    ctx, page = _page(browser)
    try:
        _start(page, srv)
        sid = srv.app.session.id
        failing = [1]

        def proxy(route):
            if failing:
                failing.pop()
                route.fulfill(status=502, content_type="text/html", body="<html>bad gateway</html>")
            else:
                route.continue_()

        page.route("**/api/state*", proxy)
        page.reload()
        page.wait_for_selector("#start-msg:not(.hidden)")
        assert page.locator("#start-msg").inner_text().startswith("502")
        assert page.evaluate("localStorage.getItem('arena.session')") == sid
        page.reload()
        page.wait_for_selector("#you-hand .card")
        assert f"s={sid}" in page.url and len(srv.app.sessions) == 1  # the same game
    finally:
        ctx.close()


def test_a_stale_page_catches_up_a_game_gone_offers_new_game_and_deal_says_it_is_dealing(browser):
    """A refusal (409) may come from a page left behind by another tab of the game: the page shows the game as
    it is now.  A game the server no longer keeps (404) gets a New game button.  While a deal is on its way
    (a bot's first game compiles it) Deal is disabled and says so."""
    from arena.web.server import NewGame

    srv = Server(App(bot="simple", seed=4, max_sessions=1), port=0).start()
    ctx, page = _page(browser)
    try:
        _start(page, srv)
        install(srv, page, KNOCKER, DEFENDER, 1)  # the person, non-dealer, is to take or pass the upcard
        srv.app.session.act("pass")  # as from another tab: this page still offers Take and Pass
        page.click("#pass")
        page.wait_for_selector("#take", state="hidden")  # refused, and caught up: the upcard is decided
        assert page.locator("#error").is_hidden()  # refused as stale: the page caught up, no line needed
        assert page.locator("#restart").is_hidden()
        gone = srv.app.session.id
        srv.app.new_game(NewGame())  # a game elsewhere: the server keeps one, this page's is dropped
        page.click("#stock")
        page.wait_for_selector("#restart:visible")
        assert f"no game '{gone}'" in page.locator("#error").inner_text()
        page.click("#restart")
        page.wait_for_selector("#start:visible")
        assert page.evaluate("localStorage.getItem('arena.session')") is None  # the dropped game is forgotten
        held = []
        page.route("**/api/new", lambda route: held.append(route))
        page.click("#go")
        page.wait_for_selector("#go:disabled")
        assert page.locator("#start-msg").inner_text().startswith("Dealing… (the first game against a bot compiles")
        while not held:  # the page's request reaches the route
            page.wait_for_timeout(50)
        held[0].continue_()
        page.wait_for_selector("#table:not(.hidden)")
        assert page.locator("#go").is_enabled() and page.locator("#start-msg").is_hidden()
    finally:
        ctx.close()
        srv.stop()


def test_the_play_page_runs_whole_under_its_content_security_policy(browser, srv):
    """The page comes with a policy that allows only its own scripts and styles (the inline blocks by hash),
    and nothing it does trips it: the start screen, the advanced panel, a second language, a game's first
    moves and a reload (a violation would also leave the page dead: the tests above drive it throughout)."""
    ctx, page = _page(browser)
    ctx.add_init_script(
        "window.__csp = []; document.addEventListener('securitypolicyviolation', "
        "e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"
    )
    try:
        answer = page.goto(srv.url)
        csp = answer.headers["content-security-policy"]
        assert "script-src 'self' 'sha256-" in csp and "unsafe-inline" not in csp
        page.wait_for_selector("#preset option", state="attached")
        page.click("#advanced summary")
        page.select_option("#lang", "sl")
        page.wait_for_function("() => document.documentElement.lang === 'sl'")
        page.click("#go")
        page.wait_for_selector("#table:not(.hidden)")
        page.wait_for_selector("#you-hand .card")
        page.reload()
        page.wait_for_selector("#you-hand .card")
        assert page.evaluate("window.__csp") == []
    finally:
        ctx.close()


def test_rules_from_a_file_are_the_default_variant(browser, tmp_path):
    f = tmp_path / "seed003.toml"
    f.write_text('preset = "oklahoma"\nundercut_bonus = 20\nundercut_on_tie = false\n')
    srv = Server(App(bot="simple", preset=str(f), seed=4), port=0).start()
    ctx, page = _page(browser)
    try:
        page.goto(srv.url)
        page.wait_for_selector("#preset option", state="attached")
        names = page.eval_on_selector_all("#preset option", "els => els.map(e => e.textContent)")
        assert names[:3] == ["seed003.toml", "Gin", "Oklahoma gin"]
        assert page.locator("#preset").input_value() == "seed003.toml"
        page.click("#advanced summary")
        assert page.locator("#rule-undercut_bonus").input_value() == "20"
        assert page.locator("#rule-knock_limit").get_attribute("max") == "10"
        page.click("#go")
        page.wait_for_selector("#table:not(.hidden)")
        v = srv.app.session.view()
        assert v["preset"] == "seed003.toml" and v["rules"]["undercut_bonus"] == 20 and v["rules"]["oklahoma"]
        assert page.locator("#rules-info").inner_text().startswith("seed003.toml")
    finally:
        ctx.close()
        srv.stop()


def test_the_advanced_panel_sets_the_rules_of_the_game(browser, srv):
    ctx, page = _page(browser)
    try:
        page.goto(srv.url)
        page.wait_for_selector("#preset option", state="attached")
        page.click("#advanced summary")
        page.fill("#rule-undercut_bonus", "20")
        page.fill("#rule-knock_limit", "7")
        page.click("#go")
        page.wait_for_selector("#table:not(.hidden)")
        r = srv.app.session.rules_obj
        assert r.undercut_bonus == 20 and r.knock_limit == 7 and r.gin_bonus == 25
        live = srv.app.session.id
        page.goto(srv.url.rstrip("/") + "/?s=gone")  # a stale id: the start screen again
        page.wait_for_url(srv.url)  # the stale id has left the address
        assert page.locator("#start").is_visible()
        assert page.evaluate("localStorage.getItem('arena.session')") == live  # the live game is still remembered
    finally:
        ctx.close()


def test_the_table_fits_a_phone_and_a_desktop(browser, srv, shots):
    for name, vp in (("phone", PHONE), ("desktop", DESK), ("narrow", {"width": 360, "height": 740})):
        ctx, page = _page(browser, vp)
        try:
            page.goto(srv.url)
            page.wait_for_selector("#preset option", state="attached")
            assert fits(page, vp["width"])
            page.screenshot(path=str(shots / f"start-{name}.png"))
            _start(page, srv)
            install(srv, page, KNOCKER, DEFENDER, 1, "pass", "pass")
            page.wait_for_selector("#you-hand .card")
            assert fits(page, vp["width"]), name
            boxes = [page.locator("#you-hand .card").nth(i).bounding_box() for i in range(11)]
            assert all(b["x"] >= 0 and b["x"] + b["width"] <= vp["width"] for b in boxes)  # every card on screen
            page.screenshot(path=str(shots / f"table-{name}.png"))
        finally:
            ctx.close()


def test_a_bot_name_with_braces_is_shown_as_written_in_the_log(browser, tmp_path):
    """The log's lines filled their placeholders one after another, so a bot named ``x{card}{n}`` had the
    card of the line drawn into its name and ``{n}`` dropped."""
    bot = tmp_path / "braces.py"
    bot.write_text((Path(__file__).resolve().parents[2] / "bots" / "simple.py").read_text() + '\nNAME = "x{card}{n}"\n')
    srv = Server(App(bot=str(bot), seed=4), port=0).start()
    ctx, page = _page(browser)
    try:
        _start(page, srv)
        install(srv, page, KNOCKER, DEFENDER, 1, "pass", "pass")  # the log: each passes the upcard 5h
        log = page.locator("#events").inner_text()
        assert "x{card}{n} passes the upcard" in log, log
    finally:
        ctx.close()
        srv.stop()


def test_a_long_bot_name_fits_a_narrow_phone(browser, shots, tmp_path):
    """The bot's name is one word (a file's stem): at 360 px it pushed the table sideways."""
    bot = tmp_path / "a_rather_long_opponent_bot_name_for_layout_testing.py"
    bot.write_text((Path(__file__).resolve().parents[2] / "bots" / "simple.py").read_text())
    srv = Server(App(bot=str(bot), seed=4), port=0).start()
    ctx, page = _page(browser, {"width": 360, "height": 740})
    try:
        page.goto(srv.url)
        page.wait_for_selector("#preset option", state="attached")
        assert fits(page, 360)
        _start(page, srv)
        assert page.locator("#bot-name").inner_text().startswith("a_rather_long_opponent_bot_name_for_layout_testing")
        assert fits(page, 360)
        page.screenshot(path=str(shots / "long-name-table.png"))
        install(srv, page, KNOCKER, DEFENDER, 0, "pass", "pass", "Kh", defend=True)  # the bot knocked
        page.wait_for_selector("#arrange:not(.hidden)")
        assert fits(page, 360)
        page.screenshot(path=str(shots / "long-name-defend.png"))
        page.click("#pass_defend")
        page.wait_for_selector("#overlay:not(.hidden)")
        assert fits(page, 360)
        page.screenshot(path=str(shots / "long-name-showdown.png"))
    finally:
        ctx.close()
        srv.stop()


def _recorded(tmp_path, seed: int = 3, rules: str = "standard"):
    """The folder of a recorded run of simple against random (two games)."""
    from arena.run import run_tournament
    from arena.run.schedule import Inline
    from arena.settings.config import TournamentConfig

    cfg = TournamentConfig(
        name="v",
        bots=("simple", "random"),
        games_per_pair=2,
        chunk_size=2,
        seed=seed,
        rules=rules,
        results_dir=str(tmp_path),
    )
    run_tournament(cfg, progress=False, schedule=Inline())
    return tmp_path / "v"


def test_the_viewer_steps_with_the_keys_but_not_inside_the_dropdown_and_fits_a_phone(browser, shots, tmp_path):
    from arena.web.viewer import recorded_game

    data = recorded_game(_recorded(tmp_path), 1)
    assert data["ok"]
    srv = Server(App(recorded=data), port=0).start()
    try:
        for name, vp in (("desktop", DESK), ("phone", PHONE)):
            ctx, page = _page(browser, vp)
            page.goto(srv.url + "view")
            page.wait_for_selector("#h0 .card")
            assert "step 1 of" in page.locator("#pos").inner_text()
            first = page.locator("#text").inner_text()
            for _ in range(5):
                page.keyboard.press("ArrowRight")
            assert "step 6 of" in page.locator("#pos").inner_text()
            assert page.locator("#text").inner_text() == data["steps"][5]["text"]
            page.keyboard.press("ArrowLeft")
            assert "step 5 of" in page.locator("#pos").inner_text()
            page.keyboard.press("Home")
            assert page.locator("#text").inner_text() == first
            page.focus("#who")
            page.keyboard.press("ArrowDown")  # the dropdown's key: the step stays
            assert "step 1 of" in page.locator("#pos").inner_text()
            page.select_option("#who", "both")
            page.locator("#title").click()
            page.keyboard.press("End")
            last = data["steps"][-1]
            if "showdown" in last:  # the score pills agree with the showdown's line
                after = last["showdown"]["scores_after"]
                assert page.locator("#p0 .score").inner_text() == str(after[0])
                assert page.locator("#p1 .score").inner_text() == str(after[1])
            assert page.locator("#first svg").count() == 1 and page.locator("#last svg").count() == 1
            assert fits(page, vp["width"]), name
            page.screenshot(path=str(shots / f"viewer-{name}.png"))
            ctx.close()
    finally:
        srv.stop()


def test_the_viewer_shows_each_hands_knock_limit_and_multiplier(browser, tmp_path):
    """Nothing on the viewer said a hand's knock limit: under Oklahoma rules each hand's upcard sets it (an
    ace: gin only) and a spade doubles the hand, so a knock at 7 or a score of 2 x 31 looked wrong."""
    from arena.web.viewer import recorded_game

    data = recorded_game(_recorded(tmp_path, seed=11, rules="oklahoma"), 0)
    deals = [j for j, s in enumerate(data["steps"]) if s["seat"] == -1 and "dealt" in s["text"]]
    assert len({(data["steps"][j]["knock_limit"], data["steps"][j]["mult"]) for j in deals}) > 1  # hands differ
    srv = Server(App(recorded=data), port=0).start()
    try:
        ctx, page = _page(browser, DESK)
        page.goto(srv.url + "view")
        page.wait_for_selector("#h0 .card")
        for j in deals:
            s = data["steps"][j]
            page.evaluate(f"go({j})")
            want = "gin only" if s["knock_limit"] == 0 else f"knock at {s['knock_limit']} or less"
            want += f", points \u00d7{s['mult']}" if s["mult"] > 1 else ""
            assert page.locator("#limit").inner_text() == want, (j, s["knock_limit"], s["mult"])
        ctx.close()
    finally:
        srv.stop()


def test_the_viewer_opens_the_game_and_step_of_a_report_link(browser, tmp_path):
    """arena report links to http://127.0.0.1:8766/view?game=G#step=S (S counted from 0; the page shows S + 1),
    served by `arena view RUN`; ?step=S works as well, and a new #step=S on the open page moves to it."""
    from arena.web.viewer import Games, recorded_game

    run = _recorded(tmp_path)
    srv = Server(App(recorded=recorded_game(run, 0), games=Games(run_dir=run, default=0)), port=0).start()
    try:
        other = recorded_game(run, 1)
        for url, step in (
            (f"view?game=1#step={len(other['steps']) - 3}", len(other["steps"]) - 3),
            ("view?game=1&step=4", 4),
        ):
            ctx, page = _page(browser)
            page.goto(srv.url + url)
            page.wait_for_selector("#h0 .card")
            assert page.locator("#title").inner_text().startswith("v: game 1 ")
            assert page.locator("#pos").inner_text() == f"step {step + 1} of {len(other['steps'])}"
            assert page.locator("#text").inner_text() == other["steps"][step]["text"]
            if "#" in url:  # a new #step on the open page (only the hash changes: no reload) goes there too
                page.goto(srv.url + "view?game=1#step=2")
                page.locator("#pos", has_text=f"step 3 of {len(other['steps'])}").wait_for()
            ctx.close()
        ctx, page = _page(browser)
        page.goto(srv.url + "view?game=99")
        # (a selector wait, not wait_for_function: the viewer's CSP allows no eval, Playwright's included)
        page.locator("#text", has_text="no game 99").wait_for()  # the one-line error, on the page
        ctx.close()
    finally:
        srv.stop()


def test_the_html_report_fits_a_phone(browser, shots, tmp_path):
    from arena.analysis.report import write_report

    run = _recorded(tmp_path)
    write_report(run)
    ctx, page = _page(browser, PHONE)
    try:
        page.goto((run / "report.html").as_uri())
        assert fits(page, 390)
        page.screenshot(path=str(shots / "report-phone.png"))
    finally:
        ctx.close()


# --- the keyboard, accessible names, a lost game, odd answers -------------------------------------------------

SNAP = (
    "JSON.stringify(state && [state.phase, state.stage, state.hand_over, state.hand_no, state.log.length,"
    " state.you.cards.length])"
)


def tab_to(page, selector, most=120):
    """Press Tab until the focus is on an element matching ``selector`` (the keyboard's way to a control)."""
    for _ in range(most):
        if page.evaluate("s => !!document.activeElement && document.activeElement.matches(s)", selector):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {selector}")


def press(page, selector, key="Enter"):
    """Tab to ``selector``, press ``key``, and wait for the game to move on."""
    before = page.evaluate(SNAP)
    tab_to(page, selector)
    page.keyboard.press(key)
    for _ in range(400):
        if page.evaluate(SNAP) != before:
            return
        page.wait_for_timeout(25)
    raise AssertionError(f"{key} on {selector} changed nothing")


def test_a_whole_hand_can_be_played_with_the_keyboard_only(browser, srv, shots):
    ctx, page = _page(browser)
    try:
        page.goto(srv.url)
        page.wait_for_selector("#preset option", state="attached")
        tab_to(page, "#go")
        page.keyboard.press("Enter")
        page.wait_for_selector("#table:not(.hidden)")
        assert page.evaluate("state.hand_no") == 1
        keys = iter(["Enter", " "] * 200)  # both keys press a card, the stock, a button
        for _ in range(200):
            s = page.evaluate("state")
            if s["hand_over"]:
                break
            allowed = s["allowed"]
            if "pass" in allowed and s["stage"] == "play":
                press(page, "#pass", next(keys))
            elif "draw_stock" in allowed:
                press(page, "#stock", next(keys))
            elif "no_big_gin" in allowed:
                press(page, "#no_big_gin", next(keys))
            elif "discard" in allowed:
                press(page, "#you-hand .card", next(keys))  # the first card of the hand: discard it
            elif s["stage"] == "defend":
                press(page, "#lay_down:not(.hidden), #pass_defend:not(.hidden)", next(keys))
            else:
                raise AssertionError(f"nothing to do from the keyboard: {s['phase']} {s['stage']} {allowed}")
            if s["stage"] == "play" and "discard" in allowed:
                page.screenshot(path=str(shots / "keyboard-discard.png"))
        page.wait_for_selector("#overlay:not(.hidden)")
        assert page.evaluate("document.activeElement.id") == "next"  # the showdown takes the focus
        page.screenshot(path=str(shots / "keyboard-showdown.png"))
        page.keyboard.press("Enter")
        page.wait_for_function("() => state.hand_no === 2 && !state.hand_over")
        assert page.locator("#overlay").is_hidden()
    finally:
        ctx.close()


def test_cards_piles_and_hands_have_accessible_names_and_the_status_and_errors_are_live(browser, srv, shots):
    ctx, page = _page(browser)
    try:
        _start(page, srv)
        install(srv, page, KNOCKER, DEFENDER, 1, "pass", "pass", scores=(90, 0))  # drew Ad: discard phase
        hand = page.locator("#you-hand")
        assert hand.get_by_role("button", name="king of hearts", exact=True).count() == 1
        assert hand.get_by_role("button", name="ace of diamonds", exact=True).count() == 1
        assert page.get_by_role("button", name="stock: 30").is_visible()  # 52 - 21 dealt - the drawn Ad
        assert page.get_by_role("button", name="discard pile: five of hearts").is_visible()
        assert page.locator("#bot-hand").get_attribute("aria-label") == "simple's hand: 10 cards"
        assert page.locator("#status").get_attribute("aria-live") == "polite"
        assert page.locator("#error").get_attribute("role") == "alert"
        assert page.locator("#error").get_attribute("aria-live") == "assertive"
        page.click("#knock")
        card(page, "Kh").click()
        page.wait_for_selector("#arrange:not(.hidden)")
        page.click("#lay_down")
        dialog = page.get_by_role("dialog", name="Game over: you win")
        dialog.wait_for()
        assert page.evaluate("document.activeElement.id") == "again"  # the dialog takes the focus
        page.screenshot(path=str(shots / "a11y-game-over.png"))
    finally:
        ctx.close()


def test_the_game_over_score_stays_on_one_line_on_a_narrow_phone(browser, srv, shots):
    ctx, page = _page(browser, {"width": 375, "height": 740})
    try:
        _start(page, srv)
        _win_the_game_by_a_knock(srv, page)
        # a long name, the bot winning: the title needs two lines
        page.evaluate("() => { state.names[1] = 'a-bot-with-a-long-name'; state.winner_seat = 1; render(); }")
        page.evaluate("() => { state.scores = [0, 120]; render(); }")
        title = page.locator("#box h2")
        assert title.inner_text() == "Game over: a-bot-with-a-long-name wins 120–0"
        assert page.evaluate("document.querySelector('#box h2 .nowrap').getClientRects().length") == 1
        assert page.locator("#box h2 .nowrap").inner_text() == "120–0"
        page.screenshot(path=str(shots / "phone-game-over-title.png"))
    finally:
        ctx.close()


def test_the_game_over_window_of_a_long_game_opens_at_its_title_on_a_phone(browser, srv, shots):
    """The window takes the focus on its New game button, below a table of every hand: focusing it
    scrolled the window to the button, and the title ("Game over: ... wins") out of view."""
    ctx, page = _page(browser, {"width": 375, "height": 740})
    try:
        _start(page, srv)
        install(srv, page, KNOCKER, DEFENDER, 1, "pass", "pass", scores=(90, 0))
        srv.app.session.history = [{"hand_no": i, "outcome": "knock", "points": [6, 0]} for i in range(1, 16)]
        page.click("#knock")
        card(page, "Kh").click()
        page.wait_for_selector("#arrange:not(.hidden)")
        page.click("#lay_down")
        page.wait_for_selector("#again")
        assert page.evaluate("$('box').scrollHeight > $('box').clientHeight")  # the window scrolls
        top = page.locator("#box h2").bounding_box()
        assert top is not None and 0 <= top["y"] < 740, top
        assert page.evaluate("document.activeElement.id") == "again"
        page.screenshot(path=str(shots / "phone-long-game-over.png"))
    finally:
        ctx.close()


def test_a_game_gone_from_the_server_disables_the_table_and_says_so(browser, srv, shots):
    ctx, page = _page(browser)
    try:
        _start(page, srv)
        install(srv, page, KNOCKER, DEFENDER, 1)  # the person is to take or pass the upcard
        assert page.locator("#take").is_enabled()
        srv.app.sessions.games.clear()  # evicted, expired, the server restarted
        page.click("#pass")
        page.wait_for_selector("#restart:visible")
        assert page.locator("#take").is_disabled() and page.locator("#pass").is_disabled()
        assert "no longer on the server" in page.locator("#status").inner_text()
        assert "Take the upcard" not in page.locator("#status").inner_text()
        assert "clickable" not in page.locator("#stock").get_attribute("class")
        page.screenshot(path=str(shots / "game-gone.png"))
    finally:
        ctx.close()


def test_a_reload_of_a_game_gone_from_the_server_says_so_on_the_start_page(browser, srv):
    """A reload of a game the server no longer has (restarted, expired) showed the start page without a
    word of the game the address named."""
    ctx, page = _page(browser)
    try:
        _start(page, srv)
        srv.app.sessions.games.clear()  # the server restarted
        page.reload()
        page.wait_for_selector("#start-msg.bad")  # the start page shows at once; the line once the server answered
        assert page.locator("#start").is_visible()
        assert "no longer on the server" in page.locator("#start-msg").inner_text()
        assert page.locator("#start-msg").is_visible()
    finally:
        ctx.close()


def test_an_answer_that_is_not_json_shows_its_status_without_an_unhandled_rejection(browser, srv):
    ctx, page = _page(browser)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        _start(page, srv)
        install(srv, page, KNOCKER, DEFENDER, 1)
        page.route("**/api/act*", lambda route: route.fulfill(status=502, body="<html>bad gateway</html>"))
        page.click("#pass")
        page.wait_for_selector("#error:not(.hidden)")
        assert page.locator("#error").inner_text().startswith("502")
        page.wait_for_timeout(300)
        assert not errors, errors
    finally:
        ctx.close()


def test_the_viewer_s_error_page_shows_only_the_message(browser, shots, tmp_path):
    from arena.web.viewer import Games, recorded_game

    run = _recorded(tmp_path)
    srv = Server(App(recorded=recorded_game(run, 1), games=Games(run_dir=run, default=1)), port=0).start()
    ctx, page = _page(browser, PHONE)
    try:
        page.goto(srv.url + "view?game=abc")
        page.wait_for_function("() => document.querySelector('#text').textContent.length > 0")
        assert page.locator("#text").is_visible()
        for hidden in ("#stockcard", "#pile", "#p0", "#p1", "#controls", "#slider", "header"):
            assert page.locator(hidden).is_hidden(), hidden
        page.screenshot(path=str(shots / "view-error.png"))
    finally:
        ctx.close()
        srv.stop()
