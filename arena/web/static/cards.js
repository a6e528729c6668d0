"use strict";
// Cards drawn with inline SVG suits: nothing depends on the fonts installed.
const SUIT_PATHS = {
  d: '<path d="M50 4 L90 50 L50 96 L10 50Z"/>',
  h: '<path d="M50 92 C20 66 4 50 4 30 C4 14 16 5 29 5 C39 5 46 11 50 20 C54 11 61 5 71 5 C84 5 96 14 96 30 C96 50 80 66 50 92Z"/>',
  s: '<path d="M50 4 C36 24 6 40 6 62 C6 76 18 84 29 84 C37 84 43 80 46 75 C45 85 41 91 33 96 L67 96 C59 91 55 85 54 75 C57 80 63 84 71 84 C82 84 94 76 94 62 C94 40 64 24 50 4Z"/>',
  c: '<circle cx="50" cy="27" r="19"/><circle cx="27" cy="60" r="19"/><circle cx="73" cy="60" r="19"/>' +
     '<path d="M45 50 C45 74 41 88 32 96 L68 96 C59 88 55 74 55 50Z"/>',
};
const RANKS = "A23456789TJQK", SUITS = "cdhs";
function suitOf(id) { return SUITS[Math.floor(id / 13)]; }
function rankText(id) { const r = RANKS[id % 13]; return r === "T" ? "10" : r; }
function cardText(id) { return rankText(id) + {c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660"}[suitOf(id)]; }
// Each card's accessible name ("queen of hearts"): English words unless a page sets others (the play page's
// language, from its catalog: CARD_WORDS.ranks and .suits in RANKS and SUITS order, .name with {rank} and {suit}).
let CARD_WORDS = {ranks: ["ace", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "jack", "queen", "king"],
                  suits: ["clubs", "diamonds", "hearts", "spades"], name: "{rank} of {suit}"};
function cardName(id) {
  return CARD_WORDS.name.split("{rank}").join(CARD_WORDS.ranks[id % 13]).split("{suit}").join(CARD_WORDS.suits[Math.floor(id / 13)]);
}
function suitSvg(s) { return `<svg viewBox="0 0 100 100" aria-hidden="true" fill="currentColor">${SUIT_PATHS[s]}</svg>`; }
function cardEl(id, extra) {
  const s = suitOf(id), el = document.createElement("div");
  el.className = "card" + ("dh".includes(s) ? " red" : "") + (extra ? " " + extra : "");
  el.dataset.id = id;
  el.innerHTML = `<div class="r">${rankText(id)}<span>${suitSvg(s)}</span></div><div class="c">${suitSvg(s)}</div>`;
  el.title = cardText(id);
  el.setAttribute("role", "img"); el.setAttribute("aria-label", cardName(id));
  return el;
}
function backEl() { const el = document.createElement("div"); el.className = "card back"; el.setAttribute("aria-hidden", "true"); return el; }
