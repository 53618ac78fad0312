// The replay viewer: steps through the events of a match (data made by
// arena/report/replay.py). Every state is rebuilt from the steps' deltas once,
// at load; drawing a step only reads them.
// The data comes gzipped and base64-encoded (arena/report/html.py: a match's
// data is 10-20 times smaller so); the browser's own DecompressionStream
// unpacks it. document.body.dataset.ready is set once the first step is drawn.
"use strict";
async function readReplayData(node) {
  const bytes = Uint8Array.from(atob(node.textContent.trim()), c => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}
(async function () {
  const R = await readReplayData(document.getElementById("replay-data"));
  const N = R.steps.length;
  const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };

  // -- states, hands, decisions and faults per step --------------------------
  const states = [];
  let cur = null;
  for (const st of R.steps) {
    const next = Object.assign({}, cur || {}, st.s);
    if (cur && st.s.hands) {
      next.hands = cur.hands.slice();
      for (const [seat, cards] of Object.entries(st.s.hands)) next.hands[Number(seat)] = cards;
    }
    states.push(next);
    cur = next;
  }
  const handStart = [];          // [hand number, first step]
  R.steps.forEach((st, i) => { if (st.e.type === "deal") handStart.push([st.e.hand, i]); });
  const firstOfAction = new Map();
  R.steps.forEach((st, i) => { if (st.a !== null && !firstOfAction.has(st.a)) firstOfAction.set(st.a, i); });
  const decisionsAt = Array.from({ length: N }, () => []);
  for (const d of R.decisions) {
    // A decision shows with the first event it caused; one that caused none
    // (a buy declined) with the next event of the match.
    const at = firstOfAction.has(d.k) ? firstOfAction.get(d.k) : Math.min(d.step + 1, N - 1);
    d.at = at;
    decisionsAt[at].push(d);
  }
  const faultsAt = Array.from({ length: N }, () => []);
  for (const f of R.faults) faultsAt[Math.max(0, Math.min(f.step, N - 1))].push(f);
  const faultByDecision = new Map(R.faults.filter(f => f.decision !== null).map(f => [f.decision + ":" + f.seat, f]));

  let step = 0;
  let viewSeat = null;           // null: the full table

  // -- drawing helpers --------------------------------------------------------
  // Names, details, stderr and replies are anyone's text: textContent keeps
  // them from being HTML, and visible() writes what a page would not show
  // as it is as escapes ("\u202e", "\x1b"), the way the report and the
  // terminal show them (arena/report/html.py, Python's isprintable): bidi
  // controls (U+202E would reverse the rest of the line), other controls and
  // format characters, separators but the space.  Newlines and tabs stay.
  const HIDDEN = /(?![\n\t ])[\p{C}\p{Z}]/gu;
  const escape = c => {
    const n = c.codePointAt(0);
    return c === "\r" ? "\\r" : n < 0x100 ? "\\x" + n.toString(16).padStart(2, "0")
      : n < 0x10000 ? "\\u" + n.toString(16).padStart(4, "0") : "\\U" + n.toString(16).padStart(8, "0");
  };
  const visible = text => String(text).replace(HIDDEN, escape);
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined) continue;
      if (k === "class") node.className = v; else if (k === "text") node.textContent = visible(v); else node.setAttribute(k, visible(v));
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(typeof c === "string" ? visible(c) : c);
    return node;
  }
  function card(text) {
    if (text === "JK") return el("span", { class: "card joker", "data-card": "JK", title: "joker" },
      el("span", { class: "rank", text: "\u2605" }), el("span", { class: "suit", text: "JK" }));
    const suit = text.slice(-1), rank = text.slice(0, -1);
    const red = suit === "H" || suit === "D";
    return el("span", { class: "card" + (red ? " red" : ""), "data-card": text, title: text },
      el("span", { class: "rank", text: rank }), el("span", { class: "suit", text: SUITS[suit] || suit }));
  }
  function back() { return el("span", { class: "card back", "data-card": "?" }); }
  const who = s => (s === null || s === undefined) ? "nobody" : `seat ${s} (${R.names[s]})`;
  const cards = list => list.join(" ");

  function describe(e) {
    const w = who(e.seat);
    switch (e.type) {
      case "match_start": return `Match of ${e.players} players begins`;
      case "deal": return `Hand ${e.hand}: ${R.contracts[e.hand - 1] || e.contract}; dealer ${who(e.dealer)}; ${e.deal_size} cards each; upcard ${e.upcard}`;
      case "draw": return e.source === "upcard" ? `${w} takes the upcard ${e.card}` :
        ("card" in e ? `${w} draws ${e.card} from the stock` : `${w} draws from the stock`);
      case "decline": return `${w} passes on ${e.card}`;
      case "buy": return `${w} buys ${e.card} (+${e.penalty} from the stock${e.penalty_cards ? ": " + cards(e.penalty_cards) : ""}; ${e.buys_left} buys left)`;
      case "go_down": return `${w} goes down: ` + e.melds.map(m => `${m.kind} ${cards(m.cards)}`).join("; ");
      case "lay_off": return `${w} lays off ${e.card} on meld ${e.meld}` + (e.end ? ` (${e.end} end)` : "");
      case "swap": return `${w} swaps ${e.card} into meld ${e.meld} and takes ${e.took}`;
      case "discard": return `${w} discards ${e.card}`;
      case "go_out": return `${w} goes out`;
      case "reshuffle": return `The stock is empty: ${e.cards} discards are shuffled into a new stock`;
      case "hand_end": return `Hand ${e.hand} ends: ` + ({ out: `${w} went out`, stock: "the stock ran out", turn_cap: "the turn cap was reached" }[e.reason] || e.reason) +
        "; scores " + e.scores.map((s, i) => `${R.names[i]} ${s}`).join(", ");
      case "match_end": return "Match over: totals " + e.totals.map((t, i) => `${R.names[i]} ${t}`).join(", ");
      default: return JSON.stringify(e);
    }
  }

  // The CPU a seat's bot was caught using between its turns in this match
  // (arena/match/runner.py, rounded to ms). 0 is a kept process caught
  // before this match and stopped between its turns throughout it: it used
  // none here, and "used 0.000 s" would say nothing.
  function offTurn(s) {
    const cpu = R.off_turn ? R.off_turn[s] : null;
    if (cpu === null || cpu === undefined) return "";
    return cpu > 0 ? ` \u00b7 used ${cpu.toFixed(3)} s of CPU between its turns (measured)`
      : " \u00b7 stopped between its turns (its process was caught using CPU between them before this match)";
  }

  // -- one step -----------------------------------------------------------------
  function drawSeats(st, e) {
    const box = document.getElementById("seats");
    box.replaceChildren();
    for (let s = 0; s < R.players; s++) {
      const open = viewSeat === null || viewSeat === s;
      const hand = st.hands[s];
      const div = el("div", { class: "seat" + (e.seat === s ? " actor" : "") + (viewSeat === s ? " viewer" : ""),
        "data-seat": s, "data-total": st.totals[s], "data-count": hand.length });
      const meta = `seat ${s} \u00b7 total ${st.totals[s]} \u00b7 ${hand.length} cards` +
        (st.down[s] ? " \u00b7 down" : "") + ` \u00b7 ${st.buys_left[s]} buys left` + (st.dealer === s ? " \u00b7 dealer" : "") +
        offTurn(s);
      div.append(el("div", { class: "head" }, el("span", { class: "name", text: R.names[s] }), el("span", { class: "meta", text: meta })));
      const row = el("div", { class: "cards" + (open ? "" : " hidden") });
      for (const c of hand) row.append(open ? card(c) : back());
      div.append(row);
      box.append(div);
    }
  }

  function drawCenter(st) {
    document.getElementById("stock").textContent = st.stock;
    const pile = document.getElementById("pile");
    pile.replaceChildren(st.pile_top ? card(st.pile_top) : el("span", { class: "note", text: "empty" }));
    document.getElementById("pilesize").textContent = st.pile_size;
    const melds = document.getElementById("melds");
    melds.replaceChildren();
    for (const m of st.melds) {
      const sf = m.stands_for;
      // stands_for is known at every step (arena/report/replay.py); a page of
      // an older arena may lack it between the events of one play.
      const label = !sf ? m.kind : m.kind === "set" ? `set of ${sf[0]}s` : `run ${sf[0]}\u2013${sf[sf.length - 1]}`;
      const div = el("div", { class: "meld", "data-meld-id": m.id, "data-owner": m.owner },
        el("div", { class: "label", text: `[${m.id}] ${label} \u00b7 ${R.names[m.owner]}` }));
      for (const c of m.cards) div.append(card(c));
      melds.append(div);
    }
    if (!st.melds.length) melds.append(el("span", { class: "note", text: "no melds on the table" }));
  }

  // The scores of the hands ended by this event, and the totals; before the
  // first hand ends there are none (the heading says so, the table is hidden).
  function drawScores() {
    const tbody = document.querySelector("#scores tbody");
    tbody.replaceChildren();
    let last = null;
    for (let i = 0; i <= step; i++) {
      const e = R.steps[i].e;
      if (e.type !== "hand_end") continue;
      const tr = el("tr", { "data-hand": e.hand }, el("td", { text: `hand ${e.hand}` }));
      e.scores.forEach((s, seat) => tr.append(el("td", { "data-seat": seat, class: e.seat === seat && e.reason === "out" ? "win" : null, text: s })));
      tbody.append(tr);
      last = e.hand;
    }
    const st = states[step];
    const tr = el("tr", { class: "totals" }, el("td", { text: "total" }));
    st.totals.forEach((t, seat) => tr.append(el("td", { "data-seat": seat, text: t })));
    tbody.append(tr);
    document.getElementById("scoresdone").textContent = last === null ? "(none yet: no hand has ended)"
      : `(after hand ${last} of ${R.contracts.length})`;
    document.getElementById("scores").hidden = last === null;
  }

  function pre(text) { return el("pre", { text }); }

  function faultBox(f) {
    const box = el("div", { class: "fault", "data-seat": f.seat, "data-kind": f.kind },
      el("div", {}, el("span", { class: "kind", text: f.kind }), ` by ${who(f.seat)} ` +
        (f.decision === null ? "in the handshake" : (f.request_id === null || f.request_id === undefined
          ? `at decision ${f.decision} (${f.decision_kind}), hand ${f.hand}`
          : `at request id ${f.request_id} (${f.decision_kind}; decision ${f.decision}), hand ${f.hand}`)) +
        (f.forfeit ? " \u2014 seat forfeited" : (f.strike ? ` \u2014 strike ${f.strike}` : ""))),
      el("div", { text: f.detail || "" }));
    if (f.reply) box.append(el("div", { class: "note", text: "the reply:" }), pre(f.reply));
    const when = f.decision === null ? "as it started" : "during this decision";
    box.append(el("div", { class: "note", text: f.stderr ? `stderr ${when}:` : `no stderr ${when}` }));
    if (f.stderr) box.append(pre(f.stderr));
    return box;
  }

  function decisionBox(d) {
    const ms = d.ms === null ? "" : ` in ${d.ms.toFixed(1)} ms`;
    const asked = d.asked ? "" : " (not asked: forfeited, the arena played the fallback)";
    const box = el("div", { class: "decision", "data-k": d.k, "data-seat": d.seat },
      el("div", { text: `${who(d.seat)}, ${d.kind}${ms}${asked}: ` }), pre(JSON.stringify(d.reply)));
    if (d.stderr && !faultByDecision.has(d.k + ":" + d.seat)) box.append(el("div", { class: "note", text: "stderr:" }), pre(d.stderr));
    return box;
  }

  function drawSide() {
    const ds = decisionsAt[step].filter(d => viewSeat === null || d.seat === viewSeat);
    const dbox = document.getElementById("decisions");
    dbox.replaceChildren(...(ds.length ? ds.map(decisionBox) : [el("span", { class: "note", text: "no decision at this event" })]));
    const fs = faultsAt[step].filter(f => viewSeat === null || f.seat === viewSeat);
    const fbox = document.getElementById("faults");
    fbox.replaceChildren(...fs.map(faultBox));
    fbox.hidden = fs.length === 0;
    const sent = document.getElementById("sent");
    sent.hidden = viewSeat === null;
    if (viewSeat === null) return;
    // The last request this seat was sent, at or before this event.
    let last = null;
    for (const d of R.decisions) {
      if (d.seat === viewSeat && d.at <= step && d.request !== null) last = d;
      if (d.at > step) break;
    }
    const body = document.getElementById("sentbody");
    if (last === null) {
      body.replaceChildren(el("span", { class: "note", text: "nothing sent to this seat yet" }));
      return;
    }
    const notices = [];
    const [from, to] = last.notices;
    for (let i = Math.max(from, 0); i < to; i++) {
      const s = R.steps[i];
      if (!s.nn) notices.push(JSON.stringify({ type: "event", event: s.p || s.e }));
    }
    const what = last.builtin ? "the view given to this built-in player (in protocol form)" : "the lines sent, as sent";
    const nodes = [el("div", { class: "note", text: `decision ${last.k} (${last.kind}), ${what}; ${notices.length} notices before the request:` })];
    if (notices.length) nodes.push(pre(notices.join("\n")));
    nodes.push(el("div", { class: "note", text: "request:" }), el("pre", { id: "request", text: last.request }));
    nodes.push(el("div", { class: "note", text: "reply (as played):" }), pre(JSON.stringify(last.reply)));
    if (last.stderr) nodes.push(el("div", { class: "note", text: "stderr during this decision:" }), pre(last.stderr));
    body.replaceChildren(...nodes);
  }

  function show(i) {
    step = Math.max(0, Math.min(N - 1, i));
    const st = states[step];
    const s = R.steps[step];
    const e = viewSeat === null ? s.e : (s.p || s.e);
    drawSeats(st, e);
    drawCenter(st);
    drawScores();
    const ev = document.getElementById("event");
    ev.dataset.type = e.type;
    ev.replaceChildren(el("span", { class: "type", text: e.type.replace("_", " ") + ": " }), visible(describe(e)));
    drawSide();
    document.getElementById("stepinfo").textContent = `event ${step + 1} of ${N} \u00b7 hand ${s.e.hand}`;
    const sel = document.getElementById("hand");
    let h = 0;
    for (const [hand, first] of handStart) if (first <= step) h = hand;
    if (h) sel.value = String(h);
    document.body.dataset.step = step;
  }

  // -- controls -------------------------------------------------------------------
  const handSel = document.getElementById("hand");
  for (const [hand, first] of handStart)
    handSel.append(el("option", { value: hand, "data-step": first, text: `Hand ${hand}: ${R.contracts[hand - 1] || ""}` }));
  handSel.addEventListener("change", () => {
    const found = handStart.find(([hand]) => String(hand) === handSel.value);
    if (found) show(found[1]);
  });
  const viewSel = document.getElementById("view");
  R.names.forEach((name, s) => viewSel.append(el("option", { value: s, text: `What seat ${s} (${name}) saw` })));
  viewSel.addEventListener("change", () => { viewSeat = viewSel.value === "" ? null : Number(viewSel.value); show(step); });
  document.getElementById("first").addEventListener("click", () => show(0));
  document.getElementById("prev").addEventListener("click", () => show(step - 1));
  document.getElementById("next").addEventListener("click", () => show(step + 1));
  document.getElementById("last").addEventListener("click", () => show(N - 1));
  document.addEventListener("keydown", ev => {
    if (ev.target instanceof HTMLSelectElement || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const moves = { ArrowRight: step + 1, ArrowLeft: step - 1, Home: 0, End: N - 1 };
    if (ev.key in moves) { show(moves[ev.key]); ev.preventDefault(); }
  });
  const faultList = document.getElementById("faultlist");
  if (faultList) {
    for (const f of R.faults) {
      const at = f.request_id === null || f.request_id === undefined ? "" : `, request id ${f.request_id}`;
      const a = el("a", { href: "#", "data-step": f.step, text: `${f.kind} by ${who(f.seat)}, hand ${f.hand}${at}` });
      a.addEventListener("click", ev => { ev.preventDefault(); show(f.step); });
      faultList.append(el("li", {}, a, ` \u2014 ${f.detail || ""}`));
    }
    if (!R.faults.length) faultList.append(el("li", { class: "note", text: "none" }));
  }
  const start = Number(new URLSearchParams(location.hash.slice(1)).get("step"));
  show(Number.isFinite(start) ? start : 0);
  document.body.dataset.ready = "1";
})();
