/*
 * json_read.c — pass 1 of the Chrome JSON importer: the top level
 * (TRACES.md §2.1) and every event into a compact record of the store
 * (§2.2, json_store.c), in one walk over the buffer. The args of events
 * that get a set of their own (X, instants, n) are flattened and written
 * (deduplicated) right here, so only an arg set id is kept; B/E and b/e
 * keep their raw args text, flattened in pass 2 when the slice they merge
 * into is known (§2.6.3), and so do C, M and T, whose args are values.
 *
 * Damage: the file cut short or a syntax error inside the events keeps
 * every event read before it; the scanner's error says where. Only a file
 * whose top level is not a trace (or whose traceEvents / systemTraceEvents
 * have the wrong type) fails as a whole.
 */
#include <stdio.h>
#include <stdlib.h>

#include "input.h"
#include "load.h"
#include "json.h"
#include "trace.h"

/* §2.2.3: a string pid/tid becomes a number of its own (above every
 * numeric one, which are < 2^32), the same for the same string. */
static int64_t string_id_number(jtrace *j, uint32_t str) {
  im_map *m = j->strid_map;
  int64_t v = im_map_get(m, str);
  if (v != IM_NONE) return v;
  v = ((int64_t)1 << 32) + j->next_strid++;
  if (!im_map_put(m, str, v) ||
      !im_grow((void **)&j->strids, &j->cstrids, j->nstrids + 1, sizeof *j->strids))
    return im_oom(j->t), 0;
  j->strids[j->nstrids++] = str;
  return v;
}

/* A number or a numeric string, for ts/dur/tts/tdur. */
static int time_value(jscan *s, int64_t *ns, int *ok) {
  jnum n;
  *ok = 0;
  char k = js_kind(s);
  if (k == 'n') return js_time(s, ns, ok);
  if (k == '"') {
    const char *str;
    size_t len;
    if (!js_string(s, &str, &len)) return 0;
    *ok = js_number_text(str, len, &n) && jn_to_ns(&n, ns);
    return 1;
  }
  if (!js_skip(s)) return 0;
  return 1;
}

/* pid / tid: int, double (truncated) or string. */
static int id_value(jtrace *j, jscan *s, int64_t *out, int *is_str) {
  *is_str = 0;
  char k = js_kind(s);
  if (k == 'n') {
    int64_t iv;
    if (js_int(s, &iv)) {
      *out = (iv < 0 || iv > 4294967295ll) ? 0 : iv;
      return 1;
    }
    jnum n;
    if (!js_number(s, &n)) return 0;
    double v = n.is_int ? (double)n.i : n.d;
    int64_t x = n.is_int ? n.i : (int64_t)(v < 0 ? 0 : v > 4294967295.0 ? 4294967296.0 : v);
    *out = (x < 0 || x > 4294967295ll) ? 0 : x;
    return 1;
  }
  if (k == '"') {
    const char *str;
    size_t len;
    if (!js_string(s, &str, &len)) return 0;
    *out = string_id_number(j, jt_intern(j, str, len));
    *is_str = 1;
    return 1;
  }
  *out = 0;
  return js_skip(s);
}

/* An optional time of the event (dur, tts, tdur) into *field, with its
 * flag; a value that is not a time marks *bad. */
static int opt_time(jscan *s, int64_t *field, uint32_t *flags, uint32_t flag, int *bad) {
  int64_t v = 0;
  int good = 0;
  int ok = time_value(s, &v, &good);
  if (!good) *bad = 1;
  *field = v;
  *flags |= flag;
  return ok;
}

/* The event's pid or tid (id_value) into *field, with its flags: `has`,
 * and `str` when it was a string. */
static int id_field(jtrace *j, jscan *s, int64_t *field, uint32_t *flags, uint32_t has,
                    uint32_t str) {
  int64_t v = 0;
  int is_str = 0;
  int ok = id_value(j, s, &v, &is_str);
  *field = v;
  *flags = (uint32_t)((*flags | has) & ~str) | (is_str ? str : 0);
  return ok;
}

/* id, bind_id, id2 members: string or int. */
static int any_id(jtrace *j, jscan *s, int64_t *v, uint8_t *kind) {
  char k = js_kind(s);
  if (k == '"') {
    const char *str;
    size_t len;
    if (!js_string(s, &str, &len)) return 0;
    *v = jt_intern(j, str, len);
    *kind = JID_STR;
    return 1;
  }
  if (k == 'n') {
    jnum n;
    if (!js_number(s, &n)) return 0;
    if (n.is_int) *v = n.i, *kind = JID_INT;
    return 1;
  }
  return js_skip(s);
}

static int str_field(jtrace *j, jscan *s, uint32_t *out) {
  if (js_kind(s) != '"') return js_skip(s);
  const char *str;
  size_t len;
  if (!js_string(s, &str, &len)) return 0;
  *out = len ? jt_intern(j, str, len) : IM_NULL_STR;
  return 1;
}

static int bool_field(jscan *s, jev *e, uint16_t flag) {
  char k = js_kind(s);
  if (k == 't') {
    e->flags |= flag;
    return js_literal(s, "true");
  }
  if (k == 'f') {
    e->flags &= (uint32_t)~flag;
    return js_literal(s, "false");
  }
  return js_skip(s);
}

#define KEY(lit) (klen == sizeof lit - 1 && !memcmp(key, lit, sizeof lit - 1))

static int id2_field(jtrace *j, jscan *s, jev *e) {
  if (js_kind(s) != '{') return js_skip(s);
  s->p++;
  const char *key;
  size_t klen;
  int n = 0, r;
  while ((r = js_member(s, &n, &key, &klen)) > 0) {
    int scope = KEY("local") ? JID2_LOCAL : KEY("global") ? JID2_GLOBAL : 0;
    if (scope) {
      uint8_t kind = 0;
      if (!any_id(j, s, &e->id2, &kind)) return 0;
      if (kind) e->id2_kind = (uint8_t)(scope | kind);
    } else if (!js_skip(s)) {
      return 0;
    }
  }
  return r == 0;
}

/* Phases whose args become a set of the event's own slice (§2.5), written
 * at parse time; the others keep raw text (B/E, b/e merge; C, M, T read
 * values) or drop it. */
static int own_set_phase(char ph) {
  return ph == 'X' || ph == 'i' || ph == 'I' || ph == 'R' || ph == 'n';
}
static int raw_args_phase(char ph) {
  return ph == 'B' || ph == 'E' || ph == 'b' || ph == 'e' || ph == 'C' || ph == 'M' || ph == 'T';
}

/* Does the event make a slice that takes its args (the checks pass 2
 * makes before it, §2.5)? Otherwise its set would be written for nothing. */
static int gets_slice(const jev *e) {
  switch (e->ph) {
  case 'X': return (e->flags & JF_DUR) && e->dur >= 0;
  case 'n': return (e->flags & JF_PID) && (e->id_kind || (e->id2_kind & (JID2_GLOBAL | JID2_LOCAL)));
  default:   /* instants */
    if (e->scope == 'g') return 1;
    return e->scope == 'p' ? (e->flags & JF_PID) != 0 : (e->flags & JF_TID) != 0;
  }
}

/* The index of the event's (pid, tid) in j->threads. */
static uint32_t thread_index(jtrace *j, int64_t pid, int64_t tid, uint32_t flags) {
  flags &= JF_PID | JF_TID | JF_PID_STR | JF_TID_STR;
  if (j->last_thread >= 0) {
    const jthread *th = &j->threads[j->last_thread];
    if (th->pid == pid && th->tid == tid && th->flags == flags) return (uint32_t)j->last_thread;
  }
  im_map *m = j->thread_map;
  uint64_t h = im_hash(im_hash(im_hash(7, (uint64_t)pid), (uint64_t)tid), flags);
  for (;; h = im_hash(h, 1)) {
    int64_t i = im_map_get(m, h);
    if (i == IM_NONE) break;
    const jthread *th = &j->threads[i];
    if (th->pid == pid && th->tid == tid && th->flags == flags) return (uint32_t)(j->last_thread = i);
  }
  if (!im_grow((void **)&j->threads, &j->cthreads, j->nthreads + 1, sizeof *j->threads) ||
      !im_map_put(m, h, j->nthreads))
    return im_oom(j->t), 0;
  j->threads[j->nthreads] = (jthread){pid, tid, flags, IM_NONE};
  return (uint32_t)(j->last_thread = j->nthreads++);
}

/* The end of a read event: its args settled, the §2.3 bookkeeping, its
 * record into the store. args_at..args_end: its (last) args object;
 * flattened: j->scratch holds it flattened. */
static int add_event(jtrace *j, jev *e, const char *args_at, const char *args_end, int flattened) {
  im_trace *t = j->t;
  e->argset = IM_NONE;
  if (e->flags & JF_ARGS) {
    e->flags &= (uint32_t)~JF_ARGS;
    if (own_set_phase(e->ph) && gets_slice(e)) {
      if (!flattened) {
        jscan a = {.base = args_at, .p = args_at, .end = args_end};
        im_args_clear(j->scratch);
        jt_flatten(j, j->scratch, &a, 0);
        rt_buf_free(&a.tmp);
      }
      e->argset = im_args_commit(t, j->scratch);
      if (e->argset != IM_NONE) e->flags |= JF_ARGSET;
    } else if (raw_args_phase(e->ph)) {
      e->args = args_at;
      e->args_len = (uint32_t)(args_end - args_at);
      e->flags |= JF_ARGS;
    }
  }
  j->nev++;
  /* §2.3.5: negative ts are dropped here, before the order is decided */
  if (e->ts < 0) {
    im_stat_add(t, IM_STAT_TRACE_SORTER_NEGATIVE_TIMESTAMP_DROPPED, 1);
    return 1;
  }
  /* §2.3: slow mode from the first X; V = the smallest violating ts */
  if (e->ph == 'X') j->slow = 1;
  if (j->any && (e->ts < j->max_ts || (e->ts == j->max_ts && j->slow)) && e->ts < j->V) j->V = e->ts;
  if (!j->any || e->ts > j->max_ts) j->max_ts = e->ts;
  j->any = 1;
  if (e->id_kind || e->id2_kind || e->bind_kind) e->flags |= JF_IDS;
  int sc = e->scope == 'g' ? 1 : e->scope == 'p' ? 2 : e->scope == 't' ? 3 : 0;
  e->flags |= (uint32_t)sc << JF_SCOPE_SHIFT;
  e->thread = thread_index(j, e->pid, e->tid, e->flags);
  e->flags &= (uint32_t)~(JF_PID | JF_TID | JF_PID_STR | JF_TID_STR);   /* in the thread */
  char *rec = js_store_add(&j->ev, jt_encoded_size(e), e->ts);
  if (!rec) return im_oom(t);
  size_t n = jt_encode(rec, e);
  /* give back what the size bound over-reserved */
  j->ev.blocks[j->ev.nblocks - 1].len -= (uint32_t)(jt_encoded_size(e) - n);
  return 1;
}

/* One event object; s->p at '{'. Appends a record unless the event is
 * dropped (counted). Returns 0 on a syntax error. */
static int read_event(jtrace *j, jscan *s) {
  jev e;
  memset(&e, 0, sizeof e);
  e.name = e.cat = IM_NULL_STR;
  int has_ph = 0, ts_state = 0 /* 0 missing, 1 ok, 2 bad */, bad_time = 0, members = 0;
  const char *args_at = NULL, *args_end = NULL;   /* the last args object */
  int flat = 0;                                   /* it is in j->scratch … */
  char flat_ph = 0;                               /* … flattened for this ph */
  s->p++;
  for (;;) {
    js_ws(s);
    if (s->p >= s->end) return js_fail(s, "the file ends inside an event");
    if (*s->p == '}') {
      s->p++;
      break;
    }
    if (members && *s->p == ',') {
      s->p++;
      js_ws(s);
    }
    const char *key;
    size_t klen;
    if (js_kind(s) != '"') return js_fail(s, s->p >= s->end ? "the file ends inside an event" : "expected a key");
    if (!js_string(s, &key, &klen)) return 0;
    js_ws(s);
    if (s->p >= s->end || *s->p != ':') return js_fail(s, "expected ':'");
    s->p++;
    js_ws(s);
    members++;
    int ok = 1, good;
    int64_t v;
    switch (klen ? key[0] : 0) {
    case 'p':
      if (KEY("ph")) {
        if (js_kind(s) == '"') {
          const char *ph;
          size_t n;
          ok = js_string(s, &ph, &n);
          has_ph = n > 0;
          e.ph = n ? ph[0] : 0;
        } else {
          has_ph = 0;
          ok = js_skip(s);
        }
      } else if (KEY("pid")) {
        ok = id_field(j, s, &e.pid, &e.flags, JF_PID, JF_PID_STR);
      } else {
        ok = js_skip(s);
      }
      break;
    case 't':
      if (KEY("ts")) {
        ok = time_value(s, &v, &good);
        e.ts = v;
        ts_state = good ? 1 : 2;
      } else if (KEY("tid")) {
        ok = id_field(j, s, &e.tid, &e.flags, JF_TID, JF_TID_STR);
      } else if (KEY("tts") || KEY("tdur")) {
        ok = klen == 4 ? opt_time(s, &e.tdur, &e.flags, JF_TDUR, &bad_time)
                       : opt_time(s, &e.tts, &e.flags, JF_TTS, &bad_time);
      } else {
        ok = js_skip(s);
      }
      break;
    case 'd':
      if (KEY("dur")) {
        ok = opt_time(s, &e.dur, &e.flags, JF_DUR, &bad_time);
      } else {
        ok = js_skip(s);
      }
      break;
    case 'n': ok = KEY("name") ? str_field(j, s, &e.name) : js_skip(s); break;
    case 'c': ok = KEY("cat") ? str_field(j, s, &e.cat) : js_skip(s); break;
    case 's':
      if (KEY("s") && js_kind(s) == '"') {
        const char *sc;
        size_t n;
        ok = js_string(s, &sc, &n);
        e.scope = n == 1 && (sc[0] == 'g' || sc[0] == 'p' || sc[0] == 't') ? sc[0] : 0;
      } else {
        ok = js_skip(s);
      }
      break;
    case 'b':
      if (KEY("bp") && js_kind(s) == '"') {
        const char *bp;
        size_t n;
        ok = js_string(s, &bp, &n);
        if (n == 1 && bp[0] == 'e') e.flags |= JF_BP_E;
        else e.flags &= (uint32_t)~JF_BP_E;
      } else if (KEY("bind_id")) {
        e.bind_kind = 0;
        ok = any_id(j, s, &e.bind_id, &e.bind_kind);
      } else {
        ok = js_skip(s);
      }
      break;
    case 'i':
      if (KEY("id")) {
        e.id_kind = 0;
        ok = any_id(j, s, &e.id, &e.id_kind);
      } else if (KEY("id2")) {
        e.id2_kind = 0;
        ok = id2_field(j, s, &e);
      } else {
        ok = js_skip(s);
      }
      break;
    case 'f':
      if (KEY("flow_in")) ok = bool_field(s, &e, JF_FLOW_IN);
      else if (KEY("flow_out")) ok = bool_field(s, &e, JF_FLOW_OUT);
      else ok = js_skip(s);
      break;
    case 'a':
      if (KEY("args") && js_kind(s) == '{') {
        /* flattened now when the phase is known to want a set of its
         * own (the usual order: ph before args); else kept by position */
        args_at = s->p;
        flat = has_ph && own_set_phase(e.ph);
        if (flat) {
          im_args_clear(j->scratch);
          jt_flatten(j, j->scratch, s, 0);
          ok = !s->failed;
          flat_ph = e.ph;
        } else {
          ok = js_skip(s);
        }
        args_end = s->p;
        e.flags |= JF_ARGS;
      } else {
        if (KEY("args")) e.flags &= (uint32_t)~JF_ARGS;
        ok = js_skip(s);
      }
      break;
    default:
      ok = js_skip(s);
    }
    if (!ok) return 0;
    js_ws(s);
    if (s->p < s->end && *s->p == ',') continue;
    if (s->p < s->end && *s->p == '}') continue;
    return js_fail(s, s->p >= s->end ? "the file ends inside an event" : "expected ',' or '}'");
  }
  if (!members) return 1;   /* {} is skipped silently */
  if (!has_ph || (e.ph != 'M' && ts_state != 1) || bad_time) {
    im_stat_add(j->t, IM_STAT_JSON_TOKENIZER_FAILURE, 1);
    return 1;
  }
  if (e.ph == 'M' && ts_state != 1) e.ts = 0;
  /* §2.2.2: tid defaults to pid */
  if (e.tid == 0 && e.pid != 0 && !(e.flags & JF_TID_STR)) e.tid = e.pid;
  return add_event(j, &e, args_at, args_end, flat && flat_ph == e.ph);
}

/* ---- the input window ------------------------------------------------------------------
 * A gzip trace is read through a window (input.h) that slides forward
 * between elements: before each element the window is topped up, and an
 * element that fails where the window ends is read again from its start
 * once the window holds more (the window grows for a larger element).
 * Only what an element reads is redone: its strings are interned again
 * (the same ids), and nothing is recorded before it ends. A plain file
 * is one window (eof from the start). */

/* Slides the window to start at *from (≤ s->p) with more bytes after;
 * 1 when bytes were added. *from and s's pointers follow the move. */
static int more(jtrace *j, jscan *s, const char **from) {
  im_input *in = j->in;
  if (!in || !in->gz || in->eof) return 0;
  size_t keep = (size_t)(*from - s->base), pos = (size_t)(s->p - s->base);
  int64_t got = im_input_more(in, keep);
  if (got < 0) return im_oom(j->t);
  s->base = in->data;
  s->base_off = in->win_off;
  s->end = in->data + in->len;
  s->p = s->base + (pos - keep);
  *from = s->base;
  return got > 0;
}

/* Keeps at least 16 KiB ahead of s->p when the input has more (less
 * would reread more events cut at the end; more moves more bytes). */
static void ahead(jtrace *j, jscan *s) {
  if (s->end - s->p < (16 << 10)) {
    const char *from = s->p;
    more(j, s, &from);
  }
}

/* A failure at the window's end that more input may cure: slides the
 * window to `from` and clears the failure (1: read again from s->p). */
static int retry(jtrace *j, jscan *s, const char *from) {
  if (!s->failed || !j->in || !j->in->gz || j->in->eof) return 0;
  if (s->err_at + 64 < s->base_off + (size_t)(s->end - s->base)) return 0;   /* a real error */
  s->p = from;
  if (!more(j, s, &from)) return 0;
  s->failed = 0;
  return 1;
}

/* js_ws, topping the window up at its end. */
static void ws_more(jtrace *j, jscan *s) {
  for (;;) {
    js_ws(s);
    if (s->p < s->end) return;
    const char *from = s->p;
    if (!more(j, s, &from)) return;
  }
}

/* Pass 1 keeps nothing that points into the input (strings are
 * interned, args and lines copied into the store): the pages behind the
 * cursor are given back every 256 KiB, and progress reported in bytes of
 * the file (compressed bytes for gzip). */
static void behind(jtrace *j, const jscan *s) {
  im_input *in = j->in;
  if (!in) return;
  size_t pos = s->base_off + (size_t)(s->p - s->base);
  if (pos < j->reported + (256u << 10)) return;
  j->reported = pos;
  if (!in->gz) im_input_release(in, pos);
  if (j->progress && j->progress->cb)
    j->progress->cb(j->progress->ctx, "read", in->gz ? in->in_done : (int64_t)pos, in->file_size);
}

/* The events array; s->p at '['. bare: a top-level array, which may end
 * without ']' (an incomplete last event is dropped silently). */
static int read_events(jtrace *j, jscan *s, int bare) {
  s->p++;
  for (;;) {
    ahead(j, s);
    ws_more(j, s);
    if (s->p >= s->end) {
      if (bare) return 1;
      return js_fail(s, "the file ends inside traceEvents");
    }
    if (*s->p == ']') {
      s->p++;
      return 1;
    }
    const char *start = s->p;
    if (*s->p == '{') {
      int ok;
      while (!(ok = read_event(j, s)) && retry(j, s, start)) start = s->p;
      if (!ok) {
        /* A bare array cut inside its last event: dropped silently. */
        if (bare && s->p >= s->end) {
          s->failed = 0;
          s->p = start;
          return 1;
        }
        return 0;
      }
      if (j->t && im_failed(j->t)) return 0;
      behind(j, s);
    } else {
      /* not an object: skipped and counted */
      int ok;
      while (!(ok = js_skip(s)) && retry(j, s, start)) start = s->p;
      if (!ok) return 0;
      im_stat_add(j->t, IM_STAT_JSON_TOKENIZER_FAILURE, 1);
    }
    ws_more(j, s);
    if (s->p >= s->end) {
      if (bare) return 1;
      return js_fail(s, "the file ends inside traceEvents");
    }
    if (*s->p == ',') {
      s->p++;
      ws_more(j, s);
      if (s->p < s->end && *s->p == ']') {   /* [{…},] */
        s->p++;
        return 1;
      }
      if (s->p < s->end && *s->p == ',') return js_fail(s, "two commas in a row in traceEvents");
      continue;
    }
    if (*s->p == ']') {
      s->p++;
      return 1;
    }
    return js_fail(s, "expected ',' or ']' after an event");
  }
}

/* ---- metadata (§2.8) ------------------------------------------------------------ */

static int read_metadata(jtrace *j, jscan *s) {
  s->p++;
  char name[300];
  const char *key;
  size_t klen;
  int n = 0, r;
  while ((r = js_member(s, &n, &key, &klen)) > 0) {
    snprintf(name, sizeof name, "json_metadata.%.*s", (int)(klen > 256 ? 256 : klen), key);
    im_trace *t = j->t;
    char k = js_kind(s);
    if (k == 't' || k == 'f') {
      if (!js_literal(s, k == 't' ? "true" : "false")) return 0;
      im_meta_int(t, name, k == 't');
    } else if (k == 'n') {
      jnum num;
      if (!js_number(s, &num)) return 0;
      if (num.is_int) im_meta_int(t, name, num.i);
      else if (num.d > -9.2e18 && num.d < 9.2e18 && num.d == (double)(int64_t)num.d)
        im_meta_int(t, name, (int64_t)num.d);
      else {
        char buf[64];
        snprintf(buf, sizeof buf, "%g", num.d);
        im_meta_str(t, name, im_cstr(t, buf));
      }
    } else if (k == '"') {
      const char *v;
      size_t len;
      if (!js_string(s, &v, &len)) return 0;
      im_meta_str(t, name, im_str(t, v, len));
    } else if (k == 'N') {
      if (!js_literal(s, "null")) return 0;
    } else {
      const char *start = s->p;
      if (!js_skip(s)) return 0;
      im_meta_str(t, name, im_str(t, start, (size_t)(s->p - start)));
    }
  }
  return r == 0;
}

/* ---- systemTraceEvents ------------------------------------------------------------ */

/* A timed entry into the sys store (ts < 0: dropped, as the merge would). */
static int add_sys(jtrace *j, const jsys *y) {
  if (y->ts < 0) return 1;
  char *rec = js_store_add(&j->sys, jt_sys_size(y), y->ts);
  if (!rec) return im_oom(j->t);
  size_t n = jt_sys_encode(rec, y);
  j->sys.blocks[j->sys.nblocks - 1].len -= (uint32_t)(jt_sys_size(y) - n);
  return 1;
}

int64_t jt_systrace_ts(const char *line, size_t n, int *ok);

/* §2.7.1: the text split at newlines; each line kept with its ts. */
static int read_systrace_text(jtrace *j, const char *text, size_t n) {
  const char *p = text, *end = text + n;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    size_t len = (size_t)(le - p);
    while (len && (p[len - 1] == '\r')) len--;
    if (len && p[0] != '#') {
      int ok;
      int64_t ts = jt_systrace_ts(p, len, &ok);
      if (!ok) {
        im_stat_add(j->t, IM_STAT_SYSTRACE_PARSE_FAILURE, 1);
      } else {
        jsys y = {.ts = ts, .text = p, .len = (uint32_t)len, .kind = 'l'};
        if (!add_sys(j, &y)) return 0;
      }
    }
    p = nl ? nl + 1 : end;
  }
  return 1;
}

/* Members of a small object into named ints (pid, tid, state, prio). */
static int read_thread_ref(jscan *s, int64_t *pid, int64_t *tid, int64_t *state, int64_t *prio) {
  *pid = *tid = 0;
  *state = 0;
  *prio = IM_NONE;
  if (js_kind(s) != '{') return js_skip(s);
  s->p++;
  const char *key;
  size_t klen;
  int n = 0, r;
  while ((r = js_member(s, &n, &key, &klen)) > 0) {
    int64_t *dst = KEY("pid") ? pid : KEY("tid") ? tid : KEY("state") ? state : KEY("prio") ? prio : NULL;
    if (dst && js_kind(s) == 'n') {
      if (js_int(s, dst)) continue;
      jnum v;
      if (!js_number(s, &v)) return 0;
      *dst = jn_int(&v);
    } else if (!js_skip(s)) {
      return 0;
    }
  }
  return r == 0;
}

/* The Fuchsia form {"type": "fuchsia", "events": [...]}: context switches
 * `k` and process / thread names `p` / `t` (docs/DECISIONS.md). */
static int read_fuchsia_event(jtrace *j, jscan *s) {
  jsys y;
  memset(&y, 0, sizeof y);
  y.in_prio = IM_NONE;
  uint32_t name = IM_NULL_STR;
  int ts_ok = 0;
  s->p++;
  const char *key;
  size_t klen;
  int members = 0, r;
  while ((r = js_member(s, &members, &key, &klen)) > 0) {
    int ok = 1;
    jnum n;
    if (KEY("ph") && js_kind(s) == '"') {
      const char *ph;
      size_t pn;
      ok = js_string(s, &ph, &pn);
      y.kind = pn ? ph[0] : 0;
    } else if ((KEY("ts") || KEY("cpu") || KEY("pid") || KEY("tid")) && js_kind(s) == 'n') {
      char c = key[0] == 't' && klen == 2 ? 'T' : key[0] == 'c' ? 'c' : key[0];
      if (c == 'T') {
        ok = js_time(s, &y.ts, &ts_ok);
        goto next;
      }
      ok = js_number(s, &n);
      if (c == 'c') y.cpu = (uint32_t)jn_int(&n);
      else if (c == 'p') y.out_pid = jn_int(&n);
      else y.out_tid = jn_int(&n);
    } else if (KEY("name")) {
      ok = str_field(j, s, &name);
    } else if (KEY("out")) {
      int64_t prio;
      ok = read_thread_ref(s, &y.out_pid, &y.out_tid, &y.out_state, &prio);
    } else if (KEY("in")) {
      int64_t st;
      ok = read_thread_ref(s, &y.in_pid, &y.in_tid, &st, &y.in_prio);
    } else {
      ok = js_skip(s);
    }
  next:
    if (!ok) return 0;
  }
  if (r < 0) return 0;
  if (y.kind == 'k' && !ts_ok) {
    im_stat_add(j->t, IM_STAT_JSON_TOKENIZER_FAILURE, 1);
    return 1;
  }
  if (y.kind == 'k') return add_sys(j, &y);
  if (y.kind != 'p' && y.kind != 't') return 1;
  if (!im_grow((void **)&j->names, &j->cnames, j->nnames + 1, sizeof *j->names)) return im_oom(j->t);
  j->names[j->nnames++] = (jname){y.kind, y.out_pid, y.out_tid, name};
  return 1;
}

/* A js_member / js_element step, read again when it ran into the
 * window's end. */
static int member_more(jtrace *j, jscan *s, int *n, const char **key, size_t *klen) {
  const char *at = s->p;
  int r;
  while ((r = js_member(s, n, key, klen)) < 0 && retry(j, s, at)) at = s->p;
  return r;
}
static int element_more(jtrace *j, jscan *s, int *n) {
  ahead(j, s);
  const char *at = s->p;
  int r;
  while ((r = js_element(s, n)) < 0 && retry(j, s, at)) at = s->p;
  return r;
}
static int skip_more(jtrace *j, jscan *s) {
  const char *at = s->p;
  int ok;
  while (!(ok = js_skip(s)) && retry(j, s, at)) at = s->p;
  return ok;
}

static int read_fuchsia(jtrace *j, jscan *s) {
  s->p++;
  const char *key;
  size_t klen;
  int n = 0, r;
  while ((r = member_more(j, s, &n, &key, &klen)) > 0) {
    if (!(KEY("events") && js_kind(s) == '[')) {
      if (!skip_more(j, s)) return 0;
      continue;
    }
    s->p++;
    int k = 0, e;
    while ((e = element_more(j, s, &k)) > 0) {
      const char *at = s->p;
      int ok;
      while (!(ok = js_kind(s) == '{' ? read_fuchsia_event(j, s) : js_skip(s)) && retry(j, s, at)) at = s->p;
      if (!ok) return 0;
      behind(j, s);
    }
    if (e < 0) return 0;
  }
  return r == 0;
}

/* ---- the top level (§2.1) -------------------------------------------------------- */

/* One member of the top-level object, key and value. *streamed: the
 * value (traceEvents, a Fuchsia object) slides the window itself, so a
 * failure in it is not read again. */
static int read_member(jtrace *j, jscan *s, int *streamed) {
  const char *key;
  size_t klen;
  if (js_kind(s) != '"') return js_fail(s, "expected a key");
  if (!js_string(s, &key, &klen)) return 0;
  js_ws(s);
  if (s->p >= s->end || *s->p != ':') return js_fail(s, "expected ':'");
  s->p++;
  js_ws(s);
  char k = js_kind(s);
  if (!k && s->p >= s->end) return js_fail(s, "the file ends before the closing '}'");
  if (KEY("traceEvents")) {
    if (k != '[') return j->fatal = 1, js_fail(s, "traceEvents is not an array");
    *streamed = 1;
    return read_events(j, s, 0);
  }
  if (KEY("systemTraceEvents")) {
    if (k == '"') {
      const char *text;
      size_t n;
      if (!js_string(s, &text, &n)) return 0;
      /* the text lives in s->tmp only until the next string: copy */
      char *copy = malloc(n ? n : 1);
      if (!copy) return im_oom(j->t);
      memcpy(copy, text, n);
      int ok = read_systrace_text(j, copy, n);
      free(copy);
      return ok;
    }
    if (k == '{') {
      *streamed = 1;
      return read_fuchsia(j, s);
    }
    return j->fatal = 1, js_fail(s, "systemTraceEvents is neither a string nor a Fuchsia object");
  }
  if (KEY("displayTimeUnit") && k == '"') {
    if (!js_skip(s)) return 0;
    im_stat_add(j->t, IM_STAT_JSON_DISPLAY_TIME_UNIT, 1);
    return 1;
  }
  if (KEY("metadata") && k == '{') return read_metadata(j, s);
  return js_skip(s);
}

static int read_object(jtrace *j, jscan *s) {
  s->p++;
  for (;;) {
    ws_more(j, s);
    if (s->p >= s->end) return js_fail(s, "the file ends before the closing '}'");
    if (*s->p == '}') {
      s->p++;
      return 1;
    }
    const char *member = s->p;
    int streamed = 0;
    while (!read_member(j, s, &streamed)) {
      if (streamed || j->fatal || !retry(j, s, member)) return 0;
      member = s->p;
    }
    ws_more(j, s);
    if (s->p < s->end && *s->p == ',') {
      s->p++;
      continue;
    }
    if (s->p < s->end && *s->p == '}') continue;
    return js_fail(s, s->p >= s->end ? "the file ends before the closing '}'" : "expected ',' or '}'");
  }
}

int jt_read(jtrace *j, jscan *s) {
  js_ws(s);
  if (s->p >= s->end) return js_fail(s, "the file is empty");
  if (*s->p == '[') read_events(j, s, 1);
  else if (*s->p != '{') return js_fail(s, "expected '[' or '{'");
  else read_object(j, s);
  if (j->fatal) return 0;   /* the two type errors that fail the whole load */
  if (j->in) {   /* all of it: pass 2 reads the store */
    im_input_release(j->in, j->in->len);
    im_input_drop(j->in);
  }
  return !im_failed(j->t);
}
