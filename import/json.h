/*
 * json.h — the Chrome JSON importer's pieces (TRACES.md §2):
 *   json_scan.c   the tokenizer: strings, numbers, skipping values, over a
 *                 whole buffer (no per-event allocation)
 *   json_read.c   pass 1: the top level and every event into a compact
 *                 record in the store, metadata, systemTraceEvents
 *   json_store.c  the store of records and sort keys, given back as
 *                 pass 2 goes
 *   json_args.c   args flattening (§2.6), at parse time or in pass 2
 *   json_sort.c   the §2.3 order
 *   json_events.c pass 2: records in that order through the builder
 *                 (every phase of §2.5, args flattening §2.6)
 *   systrace.c    systemTraceEvents text lines and atrace markers (§2.7)
 *   json.c        the entry point
 */
#ifndef PJ_IMPORT_JSON_H
#define PJ_IMPORT_JSON_H

#include "builder.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ---- the scanner --------------------------------------------------------- */

typedef struct jscan {
  const char *base, *p, *end;
  size_t base_off;        /* offset of base in the whole (decompressed) input */
  int failed;
  size_t err_at;          /* byte offset of the first error, in the whole input */
  char err[96];
  rt_buf tmp;             /* unescaped strings */
} jscan;

/* A scanned number: integer when written without '.'/exponent and it fits
 * int64, else d (§2.2.1's arithmetic). */
typedef struct jnum {
  int is_int;
  int64_t i;
  double d;
} jnum;

int js_fail(jscan *s, const char *what);   /* records the error; returns 0 */
static inline void js_ws(jscan *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
    s->p++;
}
/* At '"': the string's bytes (into the buffer, or s->tmp when it had
 * escapes); 0 on a syntax error or end of input. */
int js_string_any(jscan *s, const char **out, size_t *len);
/* Most strings (keys, names) end within 16 bytes without an escape: that
 * case inline, one SSE2 compare; the rest in js_string_any. */
static inline int js_string(jscan *s, const char **out, size_t *len) {
#ifdef __SSE2__
  const char *p = s->p + 1;
  if (p + 16 <= s->end) {
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    unsigned q = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
    unsigned b = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
    if (q && !(b & ((q & -q) - 1))) {   /* a quote, and no backslash before it */
      unsigned n = (unsigned)__builtin_ctz(q);
      *out = p;
      *len = n;
      s->p = p + n + 1;
      return 1;
    }
  }
#endif
  return js_string_any(s, out, len);
}
/* At the first character of a number. */
int js_number(jscan *s, jnum *out);
/* Parses a number from a whole string (numeric strings, §2.2). */
int js_number_text(const char *p, size_t n, jnum *out);
/* Skips one value of any kind, checking its syntax. */
int js_skip(jscan *s);
/* The next value's kind from its first byte: '"', '{', '[', 'n'umber,
 * 't'rue, 'f'alse, 'N'ull, or 0 (a table: it is asked for every value). */
extern const char js_kinds[256];
static inline char js_kind(const jscan *s) {
  return s->p < s->end ? js_kinds[(unsigned char)*s->p] : 0;
}
int js_literal(jscan *s, const char *word);   /* true / false / null */
/* Walks an object whose '{' was consumed: the next member (1: *key set,
 * s->p at its value), the end (0: '}' consumed) or a syntax error (-1).
 * *n counts the members so far (start at 0). Inline, as the element
 * walker: they run for every member of every object. */
static inline int js_member(jscan *s, int *n, const char **key, size_t *klen) {
  js_ws(s);
  if (s->p >= s->end) return js_fail(s, "the file ends inside an object"), -1;
  if (*s->p == '}') {
    s->p++;
    return 0;
  }
  if (*n) {
    if (*s->p != ',') return js_fail(s, "expected ',' or '}'"), -1;
    s->p++;
    js_ws(s);
  }
  if (js_kind(s) != '"') return js_fail(s, s->p >= s->end ? "the file ends inside an object" : "expected a key"), -1;
  if (!js_string(s, key, klen)) return -1;
  js_ws(s);
  if (s->p >= s->end || *s->p != ':') return js_fail(s, "expected ':'"), -1;
  s->p++;
  js_ws(s);
  (*n)++;
  return 1;
}

/* The same for an array whose '[' was consumed: 1 at an element, 0 at
 * ']' (consumed), -1 on an error. */
static inline int js_element(jscan *s, int *n) {
  js_ws(s);
  if (s->p >= s->end) return js_fail(s, "the file ends inside an array"), -1;
  if (*s->p == ']') {
    s->p++;
    return 0;
  }
  if (*n) {
    if (*s->p != ',') return js_fail(s, "expected ',' or ']'"), -1;
    s->p++;
    js_ws(s);
  }
  (*n)++;
  return 1;
}

/* µs → ns (§2.2.1). 0 when the value does not fit. */
int jn_to_ns(const jnum *n, int64_t *out);
/* The number as an integer, truncated toward zero; a real beyond int64
 * saturates and NaN is 0 (a plain cast of those is undefined). */
int64_t jn_int(const jnum *n);
/* A number at s->p read straight to ns (§2.2.1's arithmetic, exact): the
 * common forms (integers, up to 3 fraction digits) without floating
 * point. *ok 0 when it does not fit. Returns 0 on a syntax error. */
int js_time(jscan *s, int64_t *ns, int *ok);
/* A number at s->p that is a plain integer (no fraction or exponent,
 * at most 18 digits): 1 with s->p past it; 0 leaves s as it was. */
int js_int(jscan *s, int64_t *out);

/* ---- records ----------------------------------------------------------------- */

enum {
  JF_DUR = 1 << 0, JF_TTS = 1 << 1, JF_TDUR = 1 << 2, JF_PID = 1 << 3, JF_TID = 1 << 4,
  JF_PID_STR = 1 << 5, JF_TID_STR = 1 << 6, JF_FLOW_IN = 1 << 7, JF_FLOW_OUT = 1 << 8,
  JF_BP_E = 1 << 9, JF_ARGS = 1 << 10, JF_ARGSET = 1 << 11, JF_IDS = 1 << 12,
  JF_SCOPE_SHIFT = 13,   /* two bits: 0 none, 1 g, 2 p, 3 t */
};
/* id kinds */
enum { JID_NONE = 0, JID_INT, JID_STR };
/* id2 kinds: JID_* in the low bits, scope above */
enum { JID2_GLOBAL = 4, JID2_LOCAL = 8 };

/* An event as pass 2 sees it, decoded from its record. */
typedef struct jev {
  int64_t ts, dur, tts, tdur;
  int64_t pid, tid;
  int64_t id, id2, bind_id;    /* ints, or string ids (JID_STR) */
  const char *args;            /* raw args object (JF_ARGS), in the store */
  uint32_t args_len;
  int64_t argset;              /* args written at parse time (JF_ARGSET) */
  uint32_t name, cat;          /* IM_NULL_STR for none / "" */
  uint32_t thread;             /* index into the (pid, tid) table */
  uint32_t flags;
  uint8_t id_kind, id2_kind, bind_kind;
  char ph, scope;
} jev;

/* A systemTraceEvents entry: a systrace line (its text) or a Fuchsia
 * context switch; Fuchsia name records are kept apart (jname). */
typedef struct jsys {
  int64_t ts;
  const char *text;            /* 'l': the line, in the store */
  uint32_t len;
  char kind;                   /* 'l' line, 'k' switch */
  uint32_t cpu;
  int64_t out_pid, out_tid, out_state, in_pid, in_tid, in_prio;
} jsys;

typedef struct jname { char kind; int64_t pid, tid; uint32_t name; } jname;

/* ---- the event store (json_store.c) ------------------------------------------------
 * Pass 1 appends every event as a compact variable-length record to
 * blocks of anonymous memory, and a sort key (ts, record) to one array;
 * pass 2 walks the sorted keys, decodes each record and gives back each
 * block (and the keys) once every record in it was processed, so the
 * store shrinks while the tables grow. Temporary memory is mapped here
 * directly, not malloc'd, so that freeing it does not raise malloc's
 * mmap threshold (which would put the growing table columns on the heap,
 * where realloc copies and fragments). */
typedef struct jkey { uint64_t ts; uint64_t ref; } jkey;   /* ref: block << 32 | offset */

typedef struct jblock { char *p; uint32_t len, cap; int64_t live; } jblock;

typedef struct jstore {
  jblock *blocks;
  int64_t nblocks, cblocks;
  jkey *keys;                  /* mapped; file order, then sorted */
  int64_t nkeys, ckeys;
} jstore;

/* A (pid, tid) of events (with JF_PID/JF_TID/_STR flags): records name
 * threads by index. */
typedef struct jthread { int64_t pid, tid; uint32_t flags; int64_t utid; } jthread;

void *jt_map(size_t n);                         /* zeroed pages, NULL when out of memory */
void *jt_remap(void *p, size_t old, size_t n);  /* grows a jt_map block */
void jt_unmap(void *p, size_t n);
void jt_release(void *from, void *to);          /* gives back the whole pages inside */

/* Appends a record of n bytes and its key; returns where to write it. */
char *js_store_add(jstore *st, size_t n, int64_t ts);
/* The record of a key. */
const char *js_store_rec(const jstore *st, uint64_t ref);
/* Pass 2 processed the record of ref: its block is given back with its
 * last record. */
void js_store_done(jstore *st, uint64_t ref);
void js_store_free(jstore *st);

/* Record encoding: the event's fields (all but ts) in at most
 * JREC_MAX + args bytes. */
enum { JREC_MAX = 96 };
size_t jt_encode(char *out, const jev *e);
size_t jt_encoded_size(const jev *e);
void jt_decode(const char *p, jev *e);
size_t jt_sys_size(const jsys *y);
size_t jt_sys_encode(char *out, const jsys *y);
void jt_sys_decode(const char *p, jsys *y);

typedef struct jtrace {
  im_trace *t;
  struct im_input *in;         /* pages behind pass 1 are released */
  const struct im_progress *progress;   /* may be NULL */
  jstore ev, sys;              /* events; timed systemTraceEvents */
  int64_t nev;                 /* events read (info->events) */
  jname *names;                /* Fuchsia name records */
  int64_t nnames, cnames;
  jthread *threads;
  int64_t nthreads, cthreads;
  void *thread_map;            /* (pid, tid, flags) hash → first index (chained by scan) */
  int64_t last_thread;
  size_t reported;             /* input offset of the last progress report */
  int fatal;                   /* the load fails as a whole */
  /* §2.3: slow mode, the largest ts so far, V */
  int slow, any;
  int64_t max_ts, V;
  /* string pid/tid numbers (§2.2.3): string id → number */
  uint32_t *strids;            /* number - 2^32 → the string */
  int64_t nstrids, cstrids;
  void *strid_map;
  int64_t next_strid;
  /* args flattening: the key and flat key being built */
  rt_buf key, flat;
  struct im_args *scratch;
  /* recently interned strings (names, categories, arg keys repeat) */
  struct { const char *p; uint64_t a, b; uint32_t len, id; } icache[2048];
} jtrace;

/* Flattens the args object at s->p into a (§2.6; merge: a holds the set's
 * earlier rows, array indexes continue). */
void jt_flatten(jtrace *j, struct im_args *a, jscan *s, int merge);

/* Pass 1 over the whole buffer. Returns 1 (also when the input was cut
 * or damaged: what came before is kept, s->failed says where), 0 when the
 * file is not a JSON trace at all (s->err). */
int jt_read(jtrace *j, jscan *s);
/* §2.3: sorts the event keys (negative ts were dropped in pass 1) and
 * the systemTraceEvents keys. */
int jt_sort(jtrace *j);
/* The stable sort of a store's keys by ts (file order among equal ts)
 * under it; arrays of split_min keys or more are split by their top digit
 * first. 0 when out of memory. */
int jt_sort_keys(jstore *st, int64_t split_min);
/* Pass 2. */
void jt_events(jtrace *j);
/* One systrace text line (§2.7); 0 when it does not match. */
int jt_systrace_line(im_trace *t, const char *line, size_t n);
/* Atrace marker text (§3.9.6) written by thread pid at ts. */
void im_atrace_marker(im_trace *t, int64_t ts, int64_t pid, const char *buf, size_t n);

void jt_free(jtrace *j);
/* im_str through a small cache of recent strings. */
uint32_t jt_intern(jtrace *j, const char *s, size_t n);

#endif
