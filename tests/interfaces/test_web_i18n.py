"""The page's languages: one catalog per language, none missing a key the page or the server uses."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from arena.engine.layout import OUTCOME_NAMES
from arena.settings.rules import available_presets
from arena.web.session import _KEYS, ADVANCED, REFUSALS

STATIC = resources.files("arena.web") / "static"
LANGS = ("en", "sl", "pl", "tr", "et")


def catalog(lang: str) -> dict[str, str]:
    return json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))


def used_keys() -> set[str]:
    """Every key the play page asks for: in its markup, in t("...") calls, and built from the server's names."""
    html = (STATIC / "play.html").read_text(encoding="utf-8")
    keys = set(re.findall(r'data-i18n="([^"]+)"', html))
    keys |= set(re.findall(r'\b(?:t|plural)\("([a-z_.]*[a-z_])"\s*[,)]', html))  # t("st.draw"), not t("line." + ...)
    events = {k for pair in _KEYS.values() for k in pair} | {"deal", "lay_off"}
    keys |= {f"ev.{e}.{who}" for e in events for who in ("you", "other")} | {"ev.take_back.you"}  # bots never take back
    keys -= {"ev.no_knock.other", "ev.no_big_gin.other"}  # the bot's declines are never shown (they tell its hand)
    keys |= {"ev.forfeit.other"}  # a failing bot forfeits; the person never does
    keys |= {f"out.{o}" for o in OUTCOME_NAMES if o not in ("none", "forfeit")}
    keys |= {f"line.{o}" for o in ("knock", "gin", "big_gin", "undercut", "dead", "capped")}
    keys |= {f"err.{code}" for code in REFUSALS}  # the refusals the page says in its own words
    keys |= {f"rule.{k}" for k in ADVANCED} | {f"preset.{p}" for p in available_presets()}
    return keys


def test_english_has_every_key_the_page_uses():
    missing = sorted(used_keys() - set(catalog("en")))
    assert not missing, f"en.json lacks {missing}"


@pytest.mark.parametrize("lang", LANGS[1:])
def test_every_language_has_exactly_the_english_keys_and_placeholders(lang):
    en, other = catalog("en"), catalog(lang)
    assert not sorted(set(en) - set(other)), f"{lang}.json lacks {sorted(set(en) - set(other))}"
    assert not sorted(set(other) - set(en)), f"{lang}.json has keys en.json lacks: {sorted(set(other) - set(en))}"
    for key, text in en.items():
        want = set(re.findall(r"\{(\w+)\}", text))
        got = set(re.findall(r"\{(\w+)\}", other[key]))
        assert got == want, f"{lang}.json {key}: placeholders {sorted(got)}, English has {sorted(want)}"
        assert other[key].strip(), f"{lang}.json {key} is empty"


def test_slovenian_uses_the_manual_s_own_words():
    sl = catalog("sl")
    assert (sl["btn.knock"], sl["btn.lay_down"], sl["btn.pass"], sl["btn.pass_defend"]) == (
        "Trkam",
        "Polagam",
        "Naprej",
        "Naprej",
    )
