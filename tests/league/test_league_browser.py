"""The league in a real browser: Playwright for Python driving Debian's Chromium.

Log in with a token, submit a bot through the page (file input), watch it
checked and then rated on the user page and the live leaderboard, open its
page and follow one of its recent games to the viewer (the one web app serves
both): the viewer shows the game the link names, a game of this bot.  The browser is the
``browser`` fixture (tests/conftest.py, tests/browser.py).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from tests.league.server import SIMPLE_COPY, Server, add_user, make_league


def _watched_page(browser) -> tuple[Any, list[str]]:
    """A new page, and the list its script errors go to."""
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    return page, errors


def _login(page, server: Server, token: str, user: str) -> None:
    from playwright.sync_api import expect

    page.goto(server.url + "/league/login")
    page.fill("#token", token)
    page.click("#login")
    expect(page).to_have_url(re.compile(rf"/league/user/{user}$"))


@pytest.mark.slow
def test_login_submit_checked_rated_and_game_link(tmp_path, browser):
    from playwright.sync_api import expect

    from arena.run.store import RunStore

    folder = make_league(tmp_path / "lg", games_per_pairing=20, chunk_size=10, check_games=2, extra_rounds=0)
    token = add_user(folder, "alice")
    bot_file = tmp_path / "pagebot.py"
    bot_file.write_text(SIMPLE_COPY)
    server = Server(folder, play=True, workers=1)
    try:
        page, errors = _watched_page(browser)
        _login(page, server, token, "alice")
        cookies = {c["name"]: c for c in page.context.cookies()}
        assert cookies["league_session"]["httpOnly"] and cookies["league_session"]["sameSite"] == "Strict"

        page.goto(server.url + "/league/submit")
        page.set_input_files("#file", str(bot_file))
        expect(page.locator("#name")).to_have_value("pagebot")  # filled from the file's name
        expect(page.locator("#source")).to_have_value("")  # the file goes as a file, not pasted
        page.click("#send")
        expect(page).to_have_url(re.compile(r"/league/user/alice$"))
        status = page.locator("#versions td.status").first
        expect(status).to_have_text(re.compile("checking|playing|rated"))
        expect(status).to_have_text(re.compile("playing|rated"), timeout=420_000)  # checked
        expect(status).to_have_text("rated", timeout=420_000)  # every pairing of round 0 played

        page.goto(server.url + "/league/")
        row = page.locator("#board tbody tr", has_text="pagebot")
        expect(row).to_have_count(1)
        expect(row.locator("td").nth(6)).to_have_text("40", timeout=60_000)  # 20 games x 2 house bots
        row.locator("a").first.click()
        expect(page).to_have_url(re.compile(r"/league/bot/pagebot$"))
        link = page.locator("a.game").first
        href = link.get_attribute("href")
        q = parse_qs(urlparse(href).query)
        assert urlparse(href).path == "/view" and re.fullmatch(r"r\d{3}", q["run"][0])
        game_id = int(q["game"][0])
        store = RunStore(folder / "runs" / q["run"][0])
        g = store.game(game_id)
        assert "pagebot-v1" in (g["bot_a"], g["bot_b"])
        link.click()  # the viewer opens on that game
        expect(page).to_have_url(re.compile(r"/view\?run=r\d{3}&game=\d+$"))
        # The server's first replay loads the replay kernels (seconds on a loaded machine): more than the default 5 s.
        expect(page.locator("#title")).to_have_text(re.compile(rf"^{q['run'][0]}: game {game_id} "), timeout=30_000)
        expect(page.locator("#title")).to_contain_text("pagebot-v1")
        expect(page.locator("#check")).to_contain_text("the replay reproduces")
        expect(page.locator("#h0 .card").first).to_be_visible()
        page.keyboard.press("End")
        expect(page.locator("#pos")).to_have_text(re.compile(r"step (\d+) of \1$"))
        assert not errors, errors
    finally:
        server.stop()


@pytest.mark.slow
def test_a_policy_and_a_bot_uploaded_as_files_through_the_page_pass_their_checks_with_or_without_script(
    tmp_path, browser
):
    from playwright.sync_api import expect

    from arena.engine.actions import NUM_ACTIONS, OBS_SIZE
    from arena.engine.mlp import random_mlp, save_mlp

    folder = make_league(tmp_path / "lg", games_per_pairing=4, chunk_size=2, check_games=2, extra_rounds=0)
    token = add_user(folder, "pat")
    server = Server(folder, play=True, workers=1)
    try:
        weights, bot_file = tmp_path / "mlp-weights.npz", tmp_path / "filebot.py"
        save_mlp(weights, random_mlp(OBS_SIZE, NUM_ACTIONS, (16,), seed=7))
        bot_file.write_text(SIMPLE_COPY)
        page, errors = _watched_page(browser)
        _login(page, server, token, "pat")
        for path, name in ((weights, "mlp-weights"), (bot_file, "filebot")):
            page.goto(server.url + "/league/submit")
            if name == "mlp-weights":
                page.screenshot(path=str(tmp_path / "submit.png"), full_page=True)
            page.set_input_files("#file", str(path))
            expect(page.locator("#name")).to_have_value(name)  # the script fills it from the file's name
            page.click("#send")
            expect(page).to_have_url(re.compile(r"/league/user/pat$"))
            expect(page.locator("#versions tr", has_text=name)).to_have_count(1)
        for name in ("mlp-weights", "filebot"):
            status = page.locator("#versions tr", has_text=name).locator("td.status")
            expect(status).to_have_text(re.compile("playing|rated"), timeout=420_000)  # checked
        page.goto(server.url + "/league/bot/mlp-weights")
        expect(page.locator("main h1")).to_have_text("mlp-weights")
        expect(page.locator("main")).to_contain_text("owner pat")
        assert not errors, errors

        # Without the page's script: the same form, the name typed, the file posted as a file.
        bare = browser.new_context(java_script_enabled=False)
        nojs = bare.new_page()
        _login(nojs, server, token, "pat")
        nojs.goto(server.url + "/league/submit")
        nojs.fill("#name", "bare-bot")
        nojs.set_input_files("#file", str(bot_file))
        nojs.click("#send")
        expect(nojs).to_have_url(re.compile(r"/league/user/pat$"))
        expect(nojs.locator("#versions tr", has_text="bare-bot")).to_have_count(1)
        nojs.goto(server.url + "/league/bot/bare-bot")
        expect(nojs.locator("main h1")).to_have_text("bare-bot")
        # a refusal comes back as the page again, its one line on top
        nojs.goto(server.url + "/league/submit")
        nojs.fill("#name", "bad-npz")
        bad = tmp_path / "bad.npz"
        bad.write_bytes(b"not a zip")
        nojs.set_input_files("#file", str(bad))
        nojs.click("#send")
        expect(nojs.locator("#error")).to_contain_text("npz")
        expect(nojs.locator("#name")).to_have_value("bad-npz")
        bare.close()
    finally:
        server.stop()
