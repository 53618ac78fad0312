/*
 * Starter bot for the Shanghai Rummy arena, in C99 with only the standard
 * library.
 *
 * The arena starts this program and talks to it with one JSON object per
 * line: it writes messages to our stdin, we answer on stdout and fflush().
 * Anything we write on stderr goes to a log file. The full protocol is
 * docs/PROTOCOL.md.
 *
 * What this bot does: it always draws from the stock, never buys, and
 * discards the costliest card of its hand. That is always legal (after a
 * draw you hold at least two cards, and a plain discard is always allowed),
 * but it never goes down. See README.md for what to improve.
 *
 * There is no JSON library here: a tiny scanner finds a key of the top-level
 * object (so "type" inside an event is never mistaken for the message's
 * "type") and reads a string, a number or the strings of an array.
 *
 * Build: make          Run: arena play "examples/c/bot" greedy random
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read one whole line (any length) into *buf; returns 0 at end of input. */
static int read_line(char **buf, size_t *cap) {
    size_t len = 0;
    if (*buf == NULL) {
        *cap = 65536;
        *buf = malloc(*cap);
        if (*buf == NULL) return 0;
    }
    for (;;) {
        if (fgets(*buf + len, (int)(*cap - len), stdin) == NULL) return len > 0;
        len += strlen(*buf + len);
        if (len > 0 && (*buf)[len - 1] == '\n') return 1;
        if (len + 1 >= *cap) { /* line longer than the buffer: grow it */
            char *bigger = realloc(*buf, *cap * 2);
            if (bigger == NULL) return 0;
            *buf = bigger;
            *cap *= 2;
        }
    }
}

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    return p;
}

/* p points at a '"': return the character after the closing quote. */
static const char *skip_string(const char *p) {
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1]) p++;
    return *p ? p + 1 : p;
}

/* In the object starting at obj ('{'), find "key" among its own keys (not
 * those of nested objects) and return a pointer to its value, or NULL. */
static const char *find_key(const char *obj, const char *key) {
    size_t klen = strlen(key);
    int depth = 0;
    const char *p = skip_ws(obj);
    for (; *p; p++) {
        if (*p == '"') {
            const char *start = p + 1;
            const char *end = skip_string(p);
            if (depth == 1) {
                const char *after = skip_ws(end);
                if (*after == ':' && (size_t)(end - 1 - start) == klen && strncmp(start, key, klen) == 0)
                    return skip_ws(after + 1);
            }
            p = end - 1;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            if (--depth == 0) return NULL;
        }
    }
    return NULL;
}

/* Copy the JSON string at p (no escapes expected: cards and names) into out. */
static int read_string(const char *p, char *out, size_t size) {
    size_t n = 0;
    if (p == NULL || *p != '"') return 0;
    for (p++; *p && *p != '"' && n + 1 < size; p++) out[n++] = *p;
    out[n] = '\0';
    return 1;
}

/* Penalty of a card left in hand: JK 25, 2 20, A 15, 10/J/Q/K 10, else 5. */
static int penalty(const char *card) {
    if (strcmp(card, "JK") == 0) return 25;
    switch (card[0]) {
    case '2': return 20;
    case 'A': return 15;
    case '1': case 'J': case 'Q': case 'K': return 10; /* '1' is the 10 */
    default: return 5;
    }
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    char type[32], kind[16], card[8], best[8];

    while (read_line(&line, &cap)) {
        const char *msg = skip_ws(line);
        if (*msg != '{' || !read_string(find_key(msg, "type"), type, sizeof type))
            continue; /* blank or unreadable line: ignore it */

        if (strcmp(type, "start") == 0) {
            /* Protocol 2: requests carry no history (the events come as notices). */
            printf("{\"type\":\"ready\",\"name\":\"starter-c\",\"protocol\":2}\n");
        } else if (strcmp(type, "request") == 0) {
            const char *id = find_key(msg, "id");
            long req_id = id ? strtol(id, NULL, 10) : 0;
            read_string(find_key(msg, "kind"), kind, sizeof kind);
            if (strcmp(kind, "draw") == 0) {
                printf("{\"id\":%ld,\"draw\":\"stock\"}\n", req_id);
            } else if (strcmp(kind, "buy") == 0) {
                printf("{\"id\":%ld,\"buy\":false}\n", req_id);
            } else { /* play: discard the costliest card of view.cards */
                const char *view = find_key(msg, "view");
                const char *p = view ? find_key(view, "cards") : NULL;
                best[0] = '\0';
                if (p && *p == '[') {
                    for (p = skip_ws(p + 1); *p == '"'; p = skip_ws(p)) {
                        read_string(p, card, sizeof card);
                        if (best[0] == '\0' || penalty(card) > penalty(best)) strcpy(best, card);
                        p = skip_ws(skip_string(p));
                        if (*p == ',') p++;
                    }
                }
                printf("{\"id\":%ld,\"discard\":\"%s\"}\n", req_id, best);
            }
        } else if (strcmp(type, "error") == 0) {
            fprintf(stderr, "arena refused a reply: %s", line);
        } else if (strcmp(type, "quit") == 0) {
            break;
        }
        /* "event" and "end" need no answer; after "end" another "start" may come. */
        fflush(stdout); /* the arena waits for the line: never leave it in the buffer */
    }
    free(line);
    return 0;
}
