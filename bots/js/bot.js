#!/usr/bin/env node
// A Shanghai Rummy bot for arena, in plain Node (18+, no npm packages).
//
// Protocol: docs/PROTOCOL.md (one JSON object per line on stdin/stdout).
// Strategy, kept simple and always legal:
//   draw  - take the upcard if it is wild or helps (pairs with a card in hand,
//           or is near a card of its suit when the contract has runs), or,
//           once down, if it can be laid off; otherwise the stock.
//   buy   - rarely: a wild or helpful upcard, and only when the contract
//           needs more cards than a hand holds (12 cards and more).
//   play  - go down when a small search finds the contract (sets and runs,
//           wilds filling gaps within the wild limit); lay off natural cards
//           that fit at a set or a run end; discard the costliest card that is
//           not wild and does not help (see draw).
// If anything goes wrong while deciding, it falls back to a plain move
// (stock / no buy / discard a card from hand) and logs the error to stderr.
'use strict';

const readline = require('readline');

const NAME = 'js-bot';
const RANK_OF = { A: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 9, 10: 10, J: 11, Q: 12, K: 13 };
const RANK_TEXT = ['JK', 'A', '2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K'];
const SUITS = ['C', 'D', 'H', 'S'];
const SEARCH_LIMIT = 20000; // nodes of the contract search per decision

let wildDeuces = true;

// ---------------------------------------------------------------- cards
function rankOf(card) { return card === 'JK' ? 0 : RANK_OF[card.slice(0, -1)]; }
function suitOf(card) { return card === 'JK' ? '' : card.slice(-1); }
function cardText(rank, suit) { return RANK_TEXT[rank] + suit; }
function isWild(card) { const r = rankOf(card); return r === 0 || (wildDeuces && r === 2); }
function penalty(card) {
  const r = rankOf(card);
  if (r === 0) return 25;
  if (r === 2) return 20;
  if (r === 1) return 15;
  return r >= 10 ? 10 : 5;
}
// Run positions are values 1..14: 1 is the low ace, 14 the high ace.
function valueCard(value, suit) { return cardText(value === 14 ? 1 : value, suit); }

function countCards(cards) {
  const counts = new Map();
  for (const c of cards) counts.set(c, (counts.get(c) || 0) + 1);
  return counts;
}
function take(counts, card) {
  const n = counts.get(card) || 0;
  if (n <= 0) return false;
  if (n === 1) counts.delete(card); else counts.set(card, n - 1);
  return true;
}
function put(counts, card) { counts.set(card, (counts.get(card) || 0) + 1); }
function listCards(counts) {
  const out = [];
  for (const [c, n] of counts) for (let i = 0; i < n; i++) out.push(c);
  return out;
}

// -------------------------------------------------------------- contract
// "2S3+R4" -> [{kind: 'run', len: 4}, {kind: 'set', len: 3}, {kind: 'set', len: 3}]
function parseContract(text) {
  const specs = [];
  for (const term of text.split('+')) {
    const m = /^\s*(\d*)\s*([SR])\s*(\d+)\s*$/i.exec(term);
    if (!m) throw new Error('cannot read contract ' + text);
    const count = m[1] ? parseInt(m[1], 10) : 1;
    for (let i = 0; i < count; i++) {
      specs.push({ kind: m[2].toUpperCase() === 'S' ? 'set' : 'run', len: parseInt(m[3], 10) });
    }
  }
  // Runs first (they are the constrained part), longest first.
  specs.sort((a, b) => (a.kind === b.kind ? b.len - a.len : (a.kind === 'run' ? -1 : 1)));
  return specs;
}

function takeWilds(counts, n) {
  // Cheapest wilds first (2s before jokers): all of them leave the hand anyway.
  const got = [];
  const wilds = listCards(counts).filter(isWild).sort((a, b) => penalty(a) - penalty(b));
  for (const w of wilds) {
    if (got.length === n) break;
    take(counts, w);
    got.push(w);
  }
  return got;
}

function wildCount(counts) { let n = 0; for (const [c, k] of counts) if (isWild(c)) n += k; return n; }

// Candidate melds for one spec on the cards left; each is {kind, cards, rank?}.
function candidates(spec, counts, usedRanks) {
  const wilds = wildCount(counts);
  const out = [];
  if (spec.kind === 'set') {
    for (let rank = 1; rank <= 13; rank++) {
      if (usedRanks.has(rank)) continue;
      const naturals = [];
      for (const s of SUITS) {
        const c = cardText(rank, s);
        if (isWild(c)) continue;
        for (let i = 0; i < (counts.get(c) || 0); i++) naturals.push(c);
      }
      const need = Math.max(0, spec.len - naturals.length);
      if (naturals.length === 0 || need > naturals.length || need > wilds) continue;
      out.push({ kind: 'set', rank, naturals, wilds: need });
    }
  } else {
    for (const suit of SUITS) {
      for (let lo = 1; lo + spec.len - 1 <= 14; lo++) {
        const naturals = []; // [position, card]
        for (let i = 0; i < spec.len; i++) {
          const c = valueCard(lo + i, suit);
          if (!isWild(c) && counts.get(c)) naturals.push([i, c]);
        }
        const need = spec.len - naturals.length;
        if (naturals.length < need || need > wilds) continue;
        out.push({ kind: 'run', suit, lo, naturals, wilds: need });
      }
    }
  }
  out.sort((a, b) => a.wilds - b.wilds || b.naturals.length - a.naturals.length);
  return out;
}

// Lay out a candidate with real cards, taking them from counts.
function build(cand, spec, counts) {
  if (cand.kind === 'set') {
    for (const c of cand.naturals) take(counts, c);
    return { kind: 'set', cards: cand.naturals.concat(takeWilds(counts, cand.wilds)), rank: cand.rank };
  }
  const cards = new Array(spec.len).fill(null);
  for (const [i, c] of cand.naturals) { take(counts, c); cards[i] = c; }
  const wilds = takeWilds(counts, cand.wilds);
  for (let i = 0; i < cards.length; i++) if (cards[i] === null) cards[i] = wilds.pop();
  return { kind: 'run', cards, suit: cand.suit, low: cand.lo, high: cand.lo + spec.len - 1 };
}

// Melds for the whole contract, or null.
function findContract(hand, contractText) {
  const specs = parseContract(contractText);
  const counts = countCards(hand);
  const chosen = [];
  const usedRanks = new Set();
  let nodes = 0;
  function dfs(k) {
    if (k === specs.length) return true;
    if (++nodes > SEARCH_LIMIT) return false;
    const spec = specs[k];
    for (const cand of candidates(spec, counts, usedRanks)) {
      const saved = new Map(counts);
      const meld = build(cand, spec, counts);
      chosen.push(meld);
      if (meld.kind === 'set') usedRanks.add(meld.rank);
      if (dfs(k + 1)) return true;
      chosen.pop();
      if (meld.kind === 'set') usedRanks.delete(meld.rank);
      counts.clear();
      for (const [c, n] of saved) counts.set(c, n);
    }
    return false;
  }
  if (!dfs(0)) return null;
  return { melds: chosen, rest: listCards(counts) };
}

// ---------------------------------------------------------------- lay-offs
// A table meld from the view, as a small mutable record.
function tableMeld(m) {
  if (m.kind === 'set') return { id: m.id, kind: 'set', rank: RANK_OF[m.stands_for[0]] };
  const first = m.stands_for[0];
  const last = m.stands_for[m.stands_for.length - 1];
  return {
    id: m.id,
    kind: 'run',
    suit: suitOf(first),
    low: rankOf(first), // an ace at the start is low (1)
    high: rankOf(last) === 1 ? 14 : rankOf(last), // an ace at the end is high (14)
  };
}

// Where a natural card fits: null, or the lay-off object.
function fit(meld, card) {
  if (isWild(card)) return null; // wilds are kept (simple cases only)
  const rank = rankOf(card);
  if (meld.kind === 'set') return rank === meld.rank ? { meld: meld.id, card } : null;
  if (suitOf(card) !== meld.suit) return null;
  const len = meld.high - meld.low + 1;
  if (len >= 13) return null;
  if (meld.low > 1 && rank === (meld.low - 1 === 1 ? 1 : meld.low - 1) && !(meld.low - 1 === 1 && meld.high === 14)) {
    return { meld: meld.id, card, end: 'low' };
  }
  if (meld.high < 14 && rank === (meld.high + 1 === 14 ? 1 : meld.high + 1) && !(meld.high + 1 === 14 && meld.low === 1)) {
    return { meld: meld.id, card, end: 'high' };
  }
  return null;
}

function applyFit(meld, f) {
  if (meld.kind === 'run') {
    if (f.end === 'low') meld.low -= 1; else meld.high += 1;
  }
}

// Lay off as many cards of `hand` (an array, changed in place) as fit.
function layOffAll(hand, melds) {
  const steps = [];
  let progress = true;
  while (progress) {
    progress = false;
    for (const card of hand.slice()) {
      for (const meld of melds) {
        const f = fit(meld, card);
        if (f) {
          applyFit(meld, f);
          hand.splice(hand.indexOf(card), 1);
          steps.push(f);
          progress = true;
          break;
        }
      }
    }
  }
  return steps;
}

// ---------------------------------------------------------------- discard
// Whether a card of `hand` (which includes it) helps towards the contract:
// part of a pair (set contracts), or within two ranks of another card of its
// suit (run contracts).
function useful(card, hand, contractText) {
  if (isWild(card)) return true;
  const v = rankOf(card);
  const sameRank = hand.filter((o) => !isWild(o) && rankOf(o) === v).length;
  if (/S/i.test(contractText) && sameRank >= 2) return true;
  if (/R/i.test(contractText)) {
    return hand.some((o) => !isWild(o) && suitOf(o) === suitOf(card)
      && Math.abs(rankOf(o) - v) >= 1 && Math.abs(rankOf(o) - v) <= 2);
  }
  return false;
}

function chooseDiscard(hand, down, contractText) {
  const byCost = (a, b) => penalty(b) - penalty(a) || rankOf(b) - rankOf(a);
  const naturals = hand.filter((c) => !isWild(c)).sort(byCost);
  const loose = down ? naturals : naturals.filter((c) => !useful(c, hand, contractText));
  if (loose.length) return loose[0];
  if (naturals.length) return naturals[0];
  return hand.slice().sort(byCost)[hand.length - 1];
}

// ---------------------------------------------------------------- decisions
function decideDraw(req) {
  const view = req.view;
  const up = view.upcard;
  if (!req.options.includes('upcard') || !up) return { draw: 'stock' };
  if (view.down[view.seat]) {
    const melds = view.melds.map(tableMeld);
    return { draw: melds.some((m) => fit(m, up)) ? 'upcard' : 'stock' };
  }
  return { draw: isWild(up) || useful(up, view.cards.concat([up]), view.contract) ? 'upcard' : 'stock' };
}

// Buy rarely: only a wild or a useful card, and only when the contract needs
// more cards than a hand holds after its draw (12-card and longer contracts).
function decideBuy(req) {
  const view = req.view;
  const up = view.upcard;
  const size = parseContract(view.contract).reduce((n, spec) => n + spec.len, 0);
  const wanted = up && (isWild(up) || useful(up, view.cards.concat([up]), view.contract));
  return { buy: Boolean(wanted) && view.cards.length < size + 1 };
}

function decidePlay(req) {
  const view = req.view;
  const hand = view.cards.slice();
  const table = view.melds.map(tableMeld);
  if (!view.down[view.seat]) {
    const found = findContract(hand, view.contract);
    if (found) {
      const mine = found.melds.map((m, i) => ({ ...m, id: view.melds.length + i }));
      const rest = found.rest.slice();
      const steps = [{ go_down: found.melds.map((m) => ({ cards: m.cards, kind: m.kind })) }];
      const lays = layOffAll(rest, table.concat(mine));
      if (rest.length === 1 && lays.length) { rest.push(lays.pop().card); } // never keep exactly one card
      if (rest.length === 0) {
        return { steps: steps.concat(lays.map((l) => ({ lay_off: l }))), discard: null }; // going out
      }
      if (rest.length >= 2) {
        return {
          steps: steps.concat(lays.map((l) => ({ lay_off: l }))),
          discard: chooseDiscard(rest, true, view.contract),
        };
      }
      // Going down would leave one card, which may not be discarded: wait.
    }
    return { discard: chooseDiscard(hand, false, view.contract) };
  }
  const lays = layOffAll(hand, table);
  if (hand.length === 1 && lays.length) hand.push(lays.pop().card);
  if (hand.length === 0) return { lay_off: lays, discard: null };
  return { lay_off: lays, discard: chooseDiscard(hand, true, view.contract) };
}

function safeReply(req) {
  if (req.kind === 'draw') return { draw: 'stock' };
  if (req.kind === 'buy') return { buy: false };
  return { discard: req.view.cards[0] }; // a plain discard after a draw is always legal
}

function decide(req) {
  try {
    if (req.kind === 'draw') return decideDraw(req);
    if (req.kind === 'buy') return decideBuy(req);
    return decidePlay(req);
  } catch (err) {
    process.stderr.write(`js-bot: ${req.kind} decision failed, playing safe: ${err && err.stack}\n`);
    return safeReply(req);
  }
}

// ---------------------------------------------------------------- protocol loop
function send(obj) {
  // Writes to a pipe are synchronous in Node on Linux: the line is out at once.
  process.stdout.write(JSON.stringify(obj) + '\n');
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on('line', (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (err) {
    process.stderr.write(`js-bot: not JSON: ${line.slice(0, 200)}\n`);
    return;
  }
  switch (msg.type) {
    case 'start':
      wildDeuces = !msg.rules || msg.rules.wild_deuces !== false;
      send({ type: 'ready', name: NAME, protocol: 2 }); // no history in requests
      break;
    case 'request':
      send({ id: msg.id, ...decide(msg) });
      break;
    case 'error':
      process.stderr.write(`arena refused request ${msg.id} (${msg.fault}): ${msg.reason}\n`);
      break;
    case 'quit':
      process.exit(0);
      break;
    default: // event, end, and anything newer: nothing to do
      break;
  }
});
rl.on('close', () => process.exit(0));
