// A Shanghai Rummy bot for arena in one Java file, written from docs/PROTOCOL.md
// alone: protocol 2, no libraries. Run it with `java Bot.java` (Java 17+).
//
// It reads one JSON message per line, answers `start` and `request`, keeps the
// events of the current hand, goes down when its hand holds the contract (a
// small backtracking search), lays off whatever fits, and discards its least
// useful card. Debug output goes to stderr only: stdout carries replies.
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.stream.Collectors;

public class Bot {
    static boolean wildDeuces = true, distinctSetRanks = true;
    static final List<Map<String, Object>> handEvents = new ArrayList<>();

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            Map<String, Object> msg = obj(new Json(line).value());
            String type = String.valueOf(msg.get("type"));
            String reply = null;
            switch (type) {
                case "start":
                    Map<String, Object> rules = obj(msg.get("rules"));
                    wildDeuces = !Boolean.FALSE.equals(rules.get("wild_deuces"));
                    distinctSetRanks = !Boolean.FALSE.equals(rules.get("distinct_set_ranks"));
                    reply = "{\"type\":\"ready\",\"name\":\"starter-java\",\"protocol\":2}";
                    break;
                case "request":
                    reply = answer(msg);
                    break;
                case "event":
                    Map<String, Object> ev = obj(msg.get("event"));
                    if ("deal".equals(ev.get("type"))) handEvents.clear();
                    handEvents.add(ev);
                    if ("hand_end".equals(ev.get("type")))
                        System.err.println("hand " + ev.get("hand") + " over after " + handEvents.size()
                                + " events, scores " + ev.get("scores"));
                    break;
                case "error":   // the arena refused a reply and played msg.fallback for us
                    System.err.println("error on request " + msg.get("id") + ": " + msg.get("fault") + ": " + msg.get("reason"));
                    break;
                case "end":
                    System.err.println("match over: totals " + msg.get("totals") + ", places " + msg.get("places"));
                    break;
                case "quit":
                    return;
                default:        // a newer protocol's message: skip it
                    break;
            }
            if (reply != null) {
                out.print(reply + "\n");
                out.flush();    // stdout is a pipe: without a flush the arena never sees the line
            }
        }
    }

    // ---- decisions ------------------------------------------------------------

    static String answer(Map<String, Object> req) {
        Object id = req.get("id");
        Map<String, Object> view = obj(req.get("view"));
        List<String> hand = strings(view.get("cards"));
        int seat = ((Number) view.get("seat")).intValue();
        boolean down = Boolean.TRUE.equals(list(view.get("down")).get(seat));
        List<Meld> table = new ArrayList<>();
        for (Object m : list(view.get("melds"))) table.add(Meld.fromView(obj(m)));
        String upcard = (String) view.get("upcard");
        List<Term> contract = Term.parse((String) view.get("contract"));
        switch (String.valueOf(req.get("kind"))) {
            case "draw": {
                boolean canTake = list(req.get("options")).contains("upcard");
                boolean take = canTake && upcard != null && wants(upcard, hand, table, contract, down);
                return "{\"id\":" + id + ",\"draw\":\"" + (take ? "upcard" : "stock") + "\"}";
            }
            case "buy": {
                // Buying costs two unseen cards: only for a wild or a card that completes a set.
                boolean buy = upcard != null && (isWild(upcard) || (hasSets(contract) && sameRank(upcard, hand) >= 2));
                return "{\"id\":" + id + ",\"buy\":" + buy + "}";
            }
            case "play":
                return play(id, hand, table, contract, down);
            default:        // an unknown kind: the one answer every play accepts is a discard
                return "{\"id\":" + id + ",\"discard\":" + quote(hand.get(0)) + "}";
        }
    }

    static boolean wants(String card, List<String> hand, List<Meld> table, List<Term> contract, boolean down) {
        if (down) return layOffs(new ArrayList<>(List.of(card)), copy(table)).size() == 1;
        if (isWild(card)) return true;
        List<String> more = new ArrayList<>(hand);
        more.add(card);
        if (!solutions(contract, more, 1).isEmpty()) return true;
        if (hasSets(contract) && sameRank(card, hand) >= 1) return true;
        return hasRuns(contract) && neighbours(card, hand) >= 2;
    }

    static String play(Object id, List<String> hand, List<Meld> table, List<Term> contract, boolean down) {
        List<String> goDown = new ArrayList<>();
        List<String> layOff = new ArrayList<>();
        List<String> left = new ArrayList<>(hand);
        if (down) {
            layOff = layOffs(left, copy(table));
        } else {
            // Among the ways to go down, keep the one that leaves the fewest penalty points.
            int best = Integer.MAX_VALUE;
            for (List<Meld> sol : solutions(contract, hand, 40)) {
                List<String> rest = new ArrayList<>(hand);
                List<Meld> melds = copy(table);
                List<String> downs = new ArrayList<>();
                for (Meld m : sol) {
                    for (String c : m.cards) rest.remove(c);
                    downs.add("{\"kind\":\"" + (m.run ? "run" : "set") + "\",\"cards\":" + quoteAll(m.cards) + "}");
                    melds.add(m.copy());
                }
                List<String> offs = layOffs(rest, melds);
                if (rest.size() == 1) continue;   // a discard may not take the last card
                int cost = points(rest) - (rest.isEmpty() ? 0 : points(List.of(worst(rest, true))));
                if (cost < best) { best = cost; goDown = downs; layOff = offs; left = rest; }
            }
        }
        StringBuilder r = new StringBuilder("{\"id\":" + id);
        if (!goDown.isEmpty()) r.append(",\"go_down\":[").append(String.join(",", goDown)).append("]");
        if (!layOff.isEmpty()) r.append(",\"lay_off\":[").append(String.join(",", layOff)).append("]");
        if (!left.isEmpty()) r.append(",\"discard\":").append(quote(worst(left, down || !goDown.isEmpty())));
        return r.append("}").toString();   // no discard: the hand is empty, we go out
    }

    /** Lays off cards of `hand` (removing them) onto `melds`; returns the lay-off objects. */
    static List<String> layOffs(List<String> hand, List<Meld> melds) {
        List<String> done = new ArrayList<>();
        String last = null;
        boolean again = true;
        while (again && !hand.isEmpty()) {
            again = false;
            // naturals first: each natural laid off lets one more wild follow it
            List<String> order = new ArrayList<>(hand);
            order.sort(Comparator.comparing(Bot::isWild));
            for (String c : order) {
                for (int i = 0; i < melds.size() && !again; i++) {
                    String end = melds.get(i).add(c);
                    if (end == null) continue;
                    hand.remove(c);
                    last = c;
                    done.add("{\"meld\":" + i + ",\"card\":" + quote(c) + (end.isEmpty() ? "" : ",\"end\":\"" + end + "\"") + "}");
                    again = true;
                }
                if (again) break;
            }
        }
        if (hand.size() == 1 && last != null) {   // keep two cards, so that one can be discarded
            done.remove(done.size() - 1);
            hand.add(last);
        }
        return done;
    }

    /** The card to throw away: never a wild while there is another card; else the least connected, costliest. */
    static String worst(List<String> hand, boolean down) {
        String pick = hand.get(0);
        double best = Double.MAX_VALUE;
        for (String c : hand) {
            double keep = isWild(c) ? 1000 : down ? 0 : 3 * sameRank(c, hand) + 2 * neighbours(c, hand);
            double score = keep - points(List.of(c)) / 100.0;
            if (score < best) { best = score; pick = c; }
        }
        return pick;
    }

    // ---- the contract search --------------------------------------------------

    record Term(boolean run, int length) {
        static List<Term> parse(String contract) {
            List<Term> terms = new ArrayList<>();
            for (String t : contract.toUpperCase().replace(" ", "").split("\\+")) {
                int k = t.indexOf('S') >= 0 ? t.indexOf('S') : t.indexOf('R');
                int count = k == 0 ? 1 : Integer.parseInt(t.substring(0, k));
                for (int i = 0; i < count; i++) terms.add(new Term(t.charAt(k) == 'R', Integer.parseInt(t.substring(k + 1))));
            }
            terms.sort(Comparator.comparing(x -> !x.run()));   // runs first: they are the scarcer
            return terms;
        }
    }

    static List<List<Meld>> solutions(List<Term> terms, List<String> hand, int limit) {
        List<List<Meld>> found = new ArrayList<>();
        search(terms, 0, new ArrayList<>(hand), new ArrayDeque<>(), found, limit, new int[] {20000});
        return found;
    }

    static void search(List<Term> terms, int t, List<String> rest, Deque<Meld> chosen, List<List<Meld>> found, int limit, int[] budget) {
        if (found.size() >= limit || --budget[0] < 0) return;
        if (t == terms.size()) { found.add(new ArrayList<>(chosen)); return; }
        for (Meld m : candidates(terms.get(t), rest)) {
            if (!m.run && distinctSetRanks && chosen.stream().anyMatch(o -> !o.run && o.setRank == m.setRank)) continue;
            for (String c : m.cards) rest.remove(c);
            chosen.addLast(m);
            search(terms, t + 1, rest, chosen, found, limit, budget);
            chosen.removeLast();
            rest.addAll(m.cards);
        }
    }

    /** Every meld of exactly the term's length that `hand` can make, fewest wilds first. */
    static List<Meld> candidates(Term term, List<String> hand) {
        List<String> wilds = new ArrayList<>();
        for (String c : hand) if (isWild(c)) wilds.add(c);
        List<Meld> out = new ArrayList<>();
        int n = term.length();
        if (!term.run()) {
            for (int r = 1; r <= 13; r++) {
                List<String> cards = new ArrayList<>();
                for (String c : hand) if (!isWild(c) && rank(c) == r && cards.size() < n) cards.add(c);
                int w = n - cards.size();
                if (cards.isEmpty() || w > cards.size() || w > wilds.size()) continue;
                cards.addAll(wilds.subList(0, w));
                out.add(new Meld(false, r, ' ', 0, 0, n - w, w, cards));
            }
        } else {
            for (char s : "CDHS".toCharArray())
                for (int lo = 1; lo + n - 1 <= 14; lo++) {
                    List<String> cards = new ArrayList<>();
                    List<String> pool = new ArrayList<>(wilds);
                    int nat = 0;
                    for (int p = lo; p < lo + n; p++) {
                        String want = rankName(p) + s;
                        if (hand.contains(want) && (!isWild(want) || p == 2)) { cards.add(want); pool.remove(want); nat++; }
                        else cards.add(null);
                    }
                    int w = n - nat;
                    if (nat == 0 || w > nat || w > pool.size()) continue;
                    for (int i = 0, k = 0; i < n; i++) if (cards.get(i) == null) cards.set(i, pool.get(k++));
                    out.add(new Meld(true, 0, s, lo, lo + n - 1, nat, w, cards));
                }
        }
        out.sort(Comparator.comparingInt(m -> m.wilds));
        return out;
    }

    /** A meld as far as lay-offs need it: a set's rank, or a run's suit and ends (ace low 1, high 14). */
    static final class Meld {
        final boolean run; final int setRank; final char suit; int lo, hi, naturals, wilds; final List<String> cards;

        Meld(boolean run, int setRank, char suit, int lo, int hi, int naturals, int wilds, List<String> cards) {
            this.run = run; this.setRank = setRank; this.suit = suit; this.lo = lo; this.hi = hi;
            this.naturals = naturals; this.wilds = wilds; this.cards = cards;
        }

        static Meld fromView(Map<String, Object> m) {
            List<String> cards = strings(m.get("cards")), stands = strings(m.get("stands_for"));
            int wild = 0;
            boolean set = "set".equals(m.get("kind"));
            for (int i = 0; i < cards.size(); i++) {
                String c = cards.get(i), st = stands.get(i);   // a set stands for a rank ("7"), a run for a card
                if (isWild(c) && !(set ? rank(c) == rank(st + "C") : c.equals(st))) wild++;
            }
            int nat = cards.size() - wild;
            if (set) return new Meld(false, rank(stands.get(0) + "C"), ' ', 0, 0, nat, wild, cards);
            String first = stands.get(0), last = stands.get(stands.size() - 1);
            int lo = rank(first), hi = rank(last) == 1 ? 14 : rank(last);
            return new Meld(true, 0, first.charAt(first.length() - 1), lo, hi, nat, wild, cards);
        }

        Meld copy() { return new Meld(run, setRank, suit, lo, hi, naturals, wilds, new ArrayList<>(cards)); }

        /** Adds `c` if it fits: returns the end ("low", "high", or "" for a set), or null. */
        String add(String c) {
            boolean natural = !isWild(c) || (run ? suitOf(c) == suit && lo == 3 && rank(c) == 2 : setRank == 2 && rank(c) == 2);
            if (!natural && wilds + 1 > naturals) return null;   // the wild limit: wilds <= naturals
            if (!run) {
                if (natural && rank(c) != setRank) return null;
                if (natural) naturals++; else wilds++;
                return "";
            }
            if (natural) {
                if (suitOf(c) != suit) return null;
                int r = rank(c);
                if (lo > 1 && r == lo - 1) { lo--; naturals++; return "low"; }
                if (hi < 14 && (r == hi + 1 || (r == 1 && hi == 13))) { hi++; naturals++; return "high"; }
                return null;
            }
            if (hi < 14) { hi++; wilds++; return "high"; }
            if (lo > 1) { lo--; wilds++; return "low"; }
            return null;
        }
    }

    static List<Meld> copy(List<Meld> melds) { return melds.stream().map(Meld::copy).collect(Collectors.toList()); }

    // ---- cards ----------------------------------------------------------------

    static boolean isWild(String c) { return c.equals("JK") || (wildDeuces && rank(c) == 2); }

    /** 1 (ace) .. 13 (king), 0 for the joker. */
    static int rank(String c) {
        if (c.equals("JK")) return 0;
        String r = c.substring(0, c.length() - 1);
        return r.equals("A") ? 1 : r.equals("J") ? 11 : r.equals("Q") ? 12 : r.equals("K") ? 13 : Integer.parseInt(r);
    }

    static String rankName(int p) { return p == 1 || p == 14 ? "A" : p == 11 ? "J" : p == 12 ? "Q" : p == 13 ? "K" : String.valueOf(p); }

    static char suitOf(String c) { return c.charAt(c.length() - 1); }

    static int points(List<String> cards) {
        int sum = 0;
        for (String c : cards) {
            int r = rank(c);
            sum += r == 0 ? 25 : r == 2 ? 20 : r == 1 ? 15 : r >= 10 ? 10 : 5;
        }
        return sum;
    }

    static int sameRank(String card, List<String> hand) {
        int n = 0;
        for (String c : hand) if (c != card && !isWild(c) && rank(c) == rank(card)) n++;
        return n;
    }

    static int neighbours(String card, List<String> hand) {
        int n = 0;
        if (isWild(card)) return 0;
        for (String c : hand)
            if (c != card && !isWild(c) && suitOf(c) == suitOf(card) && Math.abs(rank(c) - rank(card)) <= 2 && rank(c) != rank(card)) n++;
        return n;
    }

    static boolean hasSets(List<Term> terms) { return terms.stream().anyMatch(t -> !t.run()); }

    static boolean hasRuns(List<Term> terms) { return terms.stream().anyMatch(Term::run); }

    // ---- JSON -----------------------------------------------------------------

    @SuppressWarnings("unchecked")
    static Map<String, Object> obj(Object o) { return o instanceof Map ? (Map<String, Object>) o : Map.of(); }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object o) { return o instanceof List ? (List<Object>) o : List.of(); }

    static List<String> strings(Object o) { return list(o).stream().map(x -> (String) x).collect(Collectors.toList()); }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') b.append('\\').append(ch);
            else if (ch < 0x20) b.append(String.format("\\u%04x", (int) ch));
            else b.append(ch);
        }
        return b.append('"').toString();
    }

    static String quoteAll(List<String> cards) { return cards.stream().map(Bot::quote).collect(Collectors.joining(",", "[", "]")); }

    /** A small JSON reader: objects become maps, arrays lists, numbers Long or Double. */
    static final class Json {
        final String s; int i;

        Json(String s) { this.s = s; }

        Object value() {
            skip();
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++; skip();
                if (s.charAt(i) == '}') { i++; return m; }
                do { skip(); String k = string(); skip(); i++; m.put(k, value()); skip(); } while (s.charAt(i++) == ',');
                return m;
            }
            if (c == '[') {
                List<Object> l = new ArrayList<>();
                i++; skip();
                if (s.charAt(i) == ']') { i++; return l; }
                do { l.add(value()); skip(); } while (s.charAt(i++) == ',');
                return l;
            }
            if (c == '"') return string();
            if (s.startsWith("true", i)) { i += 4; return true; }
            if (s.startsWith("false", i)) { i += 5; return false; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            String num = s.substring(start, i);
            return num.matches("-?\\d+") ? (Object) Long.parseLong(num) : (Object) Double.parseDouble(num);
        }

        String string() {
            StringBuilder b = new StringBuilder();
            i++;   // the opening quote
            for (char c; (c = s.charAt(i++)) != '"'; ) {
                if (c != '\\') { b.append(c); continue; }
                char e = s.charAt(i++);
                if (e == 'u') { b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; continue; }
                int k = "nrtbf".indexOf(e);   // else \" \\ \/ stand for themselves
                b.append(k >= 0 ? "\n\r\t\b\f".charAt(k) : e);
            }
            return b.toString();
        }

        void skip() { while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++; }
    }
}
