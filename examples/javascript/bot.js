#!/usr/bin/env node
// Starter bot for the Shanghai Rummy arena, in plain Node (18+, no packages).
//
// The arena starts this program and talks to it with one JSON object per
// line: it writes messages to our stdin, we answer on stdout. Anything we
// write on stderr goes to a log file, so debug output belongs there.
// The full protocol is docs/PROTOCOL.md.
//
// What this bot does:
//   draw : takes the upcard if it makes a pair with a card in hand, else the stock
//   buy  : never
//   play : goes down when the contract is only sets and the hand holds them
//          with natural cards; once down, lays off cards on sets of the same
//          rank; discards its costliest card that is not wild and not in a pair.
//
// Run:  arena play "node examples/javascript/bot.js" greedy random
'use strict';

const readline = require('readline');

let wildDeuces = true; // replaced by the match's rule when "start" arrives

// '7H' -> 7, '10S' -> 10, 'QC' -> 12, 'AD' -> 1, 'JK' (joker) -> 0
function rank(card) {
  if (card === 'JK') return 0;
  const text = card.slice(0, -1);
  return { A: 1, J: 11, Q: 12, K: 13 }[text] || parseInt(text, 10);
}
const isWild = (card) => card === 'JK' || (wildDeuces && rank(card) === 2);
function penalty(card) {
  const r = rank(card);
  return r === 0 ? 25 : r === 2 ? 20 : r === 1 ? 15 : r >= 10 ? 10 : 5;
}

// '2S3' -> [3, 3]; null if the contract has a run (this bot only does sets)
function setLengths(contract) {
  const lengths = [];
  for (const term of contract.split('+')) {
    const [, count, kind, length] = /^(\d*)([SR])(\d+)$/.exec(term);
    if (kind === 'R') return null;
    for (let i = 0; i < (count ? +count : 1); i++) lengths.push(+length);
  }
  return lengths.sort((a, b) => b - a);
}

// Natural sets for the whole contract (different ranks), or null.
function findSets(cards, contract) {
  const lengths = setLengths(contract);
  if (!lengths) return null;
  const byRank = {};
  for (const c of cards) if (!isWild(c)) (byRank[rank(c)] = byRank[rank(c)] || []).push(c);
  const groups = Object.values(byRank).sort((a, b) => b.length - a.length).slice(0, lengths.length);
  if (groups.length < lengths.length || groups.some((g, i) => g.length < lengths[i])) return null;
  return groups; // each group is all our cards of one rank: longer sets are fine
}

// The costliest card that is not wild and not part of a pair.
function chooseDiscard(cards) {
  let pool = cards.filter((c) => !isWild(c));
  if (!pool.length) pool = cards;
  const single = pool.filter((c) => pool.filter((o) => rank(o) === rank(c)).length === 1);
  if (single.length) pool = single;
  return pool.reduce((best, c) => (penalty(c) > penalty(best) ? c : best));
}

function draw(request) {
  const view = request.view;
  const up = view.upcard;
  if (request.options.includes('upcard') && up && !isWild(up)
      && view.cards.some((c) => !isWild(c) && rank(c) === rank(up))) {
    return { draw: 'upcard' };
  }
  return { draw: 'stock' };
}

function play(request) {
  const view = request.view;
  const cards = view.cards.slice();
  if (!view.down[view.seat]) {
    const sets = findSets(cards, view.contract);
    if (sets) {
      const rest = cards.slice();
      for (const group of sets) for (const c of group) rest.splice(rest.indexOf(c), 1);
      if (rest.length === 0) return { go_down: sets, discard: null }; // we go out
      if (rest.length >= 2) return { go_down: sets, discard: chooseDiscard(rest) };
      // one card left: it could not be discarded, so wait a turn
    }
    return { discard: chooseDiscard(cards) };
  }
  // Already down: lay off cards on sets of their rank (ours or anyone's).
  const layOff = [];
  for (const meld of view.melds) {
    if (meld.kind !== 'set') continue;
    for (const c of cards.slice()) {
      if (!isWild(c) && c.slice(0, -1) === meld.stands_for[0]) {
        layOff.push({ meld: meld.id, card: c });
        cards.splice(cards.indexOf(c), 1);
      }
    }
  }
  if (cards.length === 1) cards.push(layOff.pop().card); // keep two cards to discard one
  if (cards.length === 0) return { lay_off: layOff, discard: null }; // hand empty: out
  return { lay_off: layOff, discard: chooseDiscard(cards) };
}

function send(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (msg.type === 'start') {
    wildDeuces = msg.rules.wild_deuces;
    // Protocol 2: requests carry no history (the events come as notices).
    send({ type: 'ready', name: 'starter-js', protocol: 2 });
  } else if (msg.type === 'request') {
    let body;
    try {
      body = msg.kind === 'draw' ? draw(msg) : msg.kind === 'buy' ? { buy: false } : play(msg);
    } catch (err) { // a bug must not cost a strike: play safe
      console.error('bot error:', err);
      body = msg.kind === 'draw' ? { draw: 'stock' } : msg.kind === 'buy' ? { buy: false }
        : { discard: msg.view.cards[0] };
    }
    send({ id: msg.id, ...body });
  } else if (msg.type === 'error') {
    console.error(`arena refused request ${msg.id}: ${msg.reason}`);
  } else if (msg.type === 'quit') {
    process.exit(0);
  }
  // "event" and "end" need no answer; after "end" another "start" may come.
});
rl.on('close', () => process.exit(0));
