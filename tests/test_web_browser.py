"""The play and viewer pages in a real browser: Playwright for Python driving Debian's Chromium.

Needs ``/usr/bin/chromium`` (``apt-get install chromium``) and the Python
package ``playwright`` (in the ``[test]`` extra; never ``playwright install``).
Where ``CI=true`` a missing browser fails the test; elsewhere it skips and
says how to install it.  Screenshots go to ``tests/screenshots/`` (git-ignored
by the tmp path when run elsewhere: see ``SHOTS``).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from arena.web.server import App, ArenaServer

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
SHOTS = Path(os.environ.get("ARENA_SCREENSHOTS", "")) if os.environ.get("ARENA_SCREENSHOTS") else None


def _need_browser():
    missing = []
    if not Path(CHROMIUM).exists():
        missing.append(f"{CHROMIUM} (apt-get update && apt-get install -y chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the playwright Python package (pip install -e '.[test]'; never `playwright install`)")
    if missing:
        msg = "browser tests need " + " and ".join(missing)
        if os.environ.get("CI") == "true":
            pytest.fail(msg + " (CI=true: the browser must be there)")
        pytest.skip(msg)


@pytest.fixture(scope="module")
def browser():
    _need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _serve(app: App):
    srv = ArenaServer(app, port=0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


@pytest.fixture
def shots(tmp_path):
    d = SHOTS or tmp_path
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1200, "height": 860})
    pg = ctx.new_page()
    yield pg
    ctx.close()


def _state(srv):
    return srv.app.session.view()


def _start(page, srv, preset="standard", target="50"):
    page.goto(srv.url)
    page.select_option("#preset", preset)
    page.select_option("#target", target)
    page.select_option("#bot", "simple")
    page.click("#go")
    page.wait_for_selector("#you-hand .card")


def _wait_turn(page, srv):
    page.wait_for_function("() => !document.querySelector('#status').textContent.includes('thinking')")


def test_play_a_hand_by_clicks_through_to_the_showdown(page, shots):
    """Draw by clicking a pile, discard by click and by drag, Knock disabled above the limit and
    enabled within it, and the showdown; hands go on until the person could knock once."""
    srv = _serve(App(bot="simple", seed=4))
    try:
        _start(page, srv, target="200")
        page.screenshot(path=str(shots / "table.png"))
        assert page.locator("#you-hand .card").count() in (10, 11)
        assert page.locator("#bot-hand .card.back").count() in (10, 11)
        knock_disabled = knock_enabled = dragged = showdown = False
        for _ in range(600):
            _wait_turn(page, srv)
            v = _state(srv)
            if v["hand_over"]:
                page.wait_for_selector("#overlay:not(.hidden)")
                if v["showdown"]["knocker"] >= 0:
                    assert page.locator("#box .line").inner_text().strip() == v["showdown"]["line"]
                    assert page.locator("#box .group").count() >= 2  # hands laid out as melds and deadwood
                    if not showdown:
                        page.screenshot(path=str(shots / "showdown.png"))
                    showdown = True
                if (showdown and knock_enabled) or v["game_over"]:
                    break
                page.click("#next")
                page.wait_for_selector("#overlay", state="hidden")
                continue
            if v["phase"] == "upcard":
                page.click("#pass")
            elif v["phase"] == "draw":
                page.click("#stock")
            elif v["phase"] == "discard":
                hand = v["you"]
                if hand["deadwood"] > 10:
                    assert page.locator("#knock").is_disabled()
                    knock_disabled = True
                worst = max(hand["deadwood_cards"] or [c["id"] for c in hand["cards"]], key=lambda c: c % 13)
                if worst == v["just_taken"]:
                    worst = next(c["id"] for c in hand["cards"] if c["id"] != worst)
                card = page.locator(f'#you-hand .card[data-id="{worst}"]')
                if not dragged:
                    card.drag_to(page.locator("#pile .slot"))
                    dragged = True
                else:
                    card.click()
            elif v["phase"] == "knock":
                assert page.locator("#knock").is_enabled() and v["you"]["deadwood"] <= v["knock_limit"]
                knock_enabled = True
                page.screenshot(path=str(shots / "knock.png"))
                page.click("#knock")
            elif v["phase"] == "big_gin":
                page.click("#big_gin")
            page.wait_for_timeout(30)
        assert knock_disabled and knock_enabled and dragged and showdown
    finally:
        srv.shutdown()
        srv.server_close()


def test_pass_the_upcard_and_a_forbidden_action_shows_an_error_and_changes_nothing(page, shots):
    for seed in range(40):  # a deal where the person is asked about the upcard first
        srv = _serve(App(bot="simple", seed=seed))
        _start(page, srv)
        if _state(srv)["phase"] == "upcard" and _state(srv)["your_turn"]:
            break
        srv.shutdown()
        srv.server_close()
    else:
        pytest.fail("no deal in 40 seeds asked the person about the upcard")
    try:
        assert page.locator("#take").is_visible() and page.locator("#pass").is_enabled()
        before = srv.app.session.st.copy()
        page.click("#stock")  # drawing now is not allowed: the upcard comes first
        page.wait_for_selector("#error:not(.hidden)")
        assert "cannot draw stock now: take or pass the upcard first" in page.locator("#error").inner_text()
        assert (srv.app.session.st == before).all()
        page.screenshot(path=str(shots / "error.png"))
        # drag a card onto another to rearrange the hand: the page's order changes, the game does not
        ids = page.eval_on_selector_all("#you-hand .card", "els => els.map(e => Number(e.dataset.id))")
        page.locator(f'#you-hand .card[data-id="{ids[0]}"]').drag_to(
            page.locator(f'#you-hand .card[data-id="{ids[-1]}"]'), target_position={"x": 70, "y": 50}
        )
        moved = page.eval_on_selector_all("#you-hand .card", "els => els.map(e => Number(e.dataset.id))")
        assert moved == ids[1:] + ids[:1] and (srv.app.session.st == before).all()
        page.click("#pass")
        _wait_turn(page, srv)
        v = _state(srv)
        assert v["upcard"]["id"] not in [c["id"] for c in v["you"]["cards"]]
        assert any(e.startswith("You pass the upcard") for e in v["events"]), v["events"]
        # The server has the pass already; the page hides the error once it has the answer.
        page.wait_for_selector("#error", state="hidden", timeout=10_000)
    finally:
        srv.shutdown()
        srv.server_close()


def test_the_viewer_steps_forward_and_back_with_the_arrow_keys(page, shots, tmp_path):
    from arena.run import run_tournament
    from arena.run.schedule import Inline
    from arena.settings.config import TournamentConfig
    from arena.web.viewer import recorded_game

    cfg = TournamentConfig(
        name="v", bots=("simple", "random"), games_per_pair=2, chunk_size=2, seed=3, results_dir=str(tmp_path)
    )
    run_tournament(cfg, progress=False, schedule=Inline())
    data = recorded_game(tmp_path / "v", 1)
    assert data["ok"]
    srv = _serve(App(recorded=data))
    try:
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
        page.select_option("#who", "0")
        assert page.locator("#h1 .card.back").count() == len(data["steps"][0]["hands"]["1"]["cards"])
        assert page.locator("#h0 .card.back").count() == 0
        page.select_option("#who", "both")
        page.keyboard.press("End")
        page.keyboard.press("PageUp")  # back to the last deal, then forward to its showdown
        page.keyboard.press("End")
        assert "game" in page.locator("#title").inner_text() and page.locator("#check").inner_text().startswith("check")
        page.screenshot(path=str(shots / "viewer.png"))
    finally:
        srv.shutdown()
        srv.server_close()
