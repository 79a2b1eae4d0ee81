/*
 * json.h — the Chrome JSON importer's pieces (TRACES.md §2):
 *   json_scan.c   the tokenizer: strings, numbers, skipping values, over a
 *                 whole buffer (no per-event allocation)
 *   json_read.c   pass 1: the top level and every event into a compact
 *                 record (jev), metadata, systemTraceEvents lines
 *   json_sort.c   the §2.3 order
 *   json_events.c pass 2: records in that order through the builder
 *                 (every phase of §2.5, args flattening §2.6)
 *   systrace.c    systemTraceEvents text lines and atrace markers (§2.7)
 *   json.c        the entry point
 */
#ifndef PJ_IMPORT_JSON_H
#define PJ_IMPORT_JSON_H

#include "builder.h"

/* ---- the scanner --------------------------------------------------------- */

typedef struct jscan {
  const char *base, *p, *end;
  int failed;
  size_t err_at;          /* byte offset of the first error */
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
int js_string(jscan *s, const char **out, size_t *len);
/* At the first character of a number. */
int js_number(jscan *s, jnum *out);
/* Parses a number from a whole string (numeric strings, §2.2). */
int js_number_text(const char *p, size_t n, jnum *out);
/* Skips one value of any kind, checking its syntax. */
int js_skip(jscan *s);
/* The next value's kind from its first byte: '"', '{', '[', 'n'umber,
 * 't'rue, 'f'alse, 'N'ull, or 0. */
char js_kind(const jscan *s);
int js_literal(jscan *s, const char *word);   /* true / false / null */
/* Walks an object whose '{' was consumed: the next member (1: *key set,
 * s->p at its value), the end (0: '}' consumed) or a syntax error (-1).
 * *n counts the members so far (start at 0). */
int js_member(jscan *s, int *n, const char **key, size_t *klen);
/* The same for an array whose '[' was consumed: 1 at an element, 0 at
 * ']' (consumed), -1 on an error. */
int js_element(jscan *s, int *n);

/* µs → ns (§2.2.1). 0 when the value does not fit. */
int jn_to_ns(const jnum *n, int64_t *out);

/* ---- records ----------------------------------------------------------------- */

enum {
  JF_DUR = 1 << 0, JF_TTS = 1 << 1, JF_TDUR = 1 << 2, JF_PID = 1 << 3, JF_TID = 1 << 4,
  JF_PID_STR = 1 << 5, JF_TID_STR = 1 << 6, JF_FLOW_IN = 1 << 7, JF_FLOW_OUT = 1 << 8,
  JF_BP_E = 1 << 9, JF_ARGS = 1 << 10,
};
/* id kinds */
enum { JID_NONE = 0, JID_INT, JID_STR };
/* id2 kinds: JID_* in the low bits, scope above */
enum { JID2_GLOBAL = 4, JID2_LOCAL = 8 };

typedef struct jev {
  int64_t ts, dur, tts, tdur;
  int64_t pid, tid;
  int64_t id, id2, bind_id;    /* ints, or string ids (JID_STR) */
  uint64_t args_off;           /* into the args blob */
  uint32_t args_len;
  uint32_t name, cat;          /* IM_NULL_STR for none / "" */
  uint16_t flags;
  uint8_t id_kind, id2_kind, bind_kind;
  char ph, scope;
} jev;

/* A systemTraceEvents entry: a systrace line (text in the blob) or a
 * Fuchsia context switch / name record. */
typedef struct jsys {
  int64_t ts;
  uint64_t off;                /* text in the blob (systrace lines) */
  uint32_t len;
  char kind;                   /* 'l' line, 'k' switch, 'p' / 't' names */
  uint32_t seq;                /* file order, for a stable sort */
  uint32_t cpu, name;
  int64_t out_pid, out_tid, out_state, in_pid, in_tid, in_prio;
} jsys;

typedef struct jtrace {
  im_trace *t;
  struct im_input *in;         /* pages behind pass 1 are released */
  const struct im_progress *progress;   /* may be NULL */
  jev *ev;
  int64_t nev, cev;
  jsys *sys;
  int64_t nsys, csys;
  char *blob;                  /* args objects and systrace lines */
  uint64_t nblob, cblob;
  int has_x;
  int fatal;                   /* the load fails as a whole */
  /* string pid/tid numbers (§2.2.3): string id → number */
  uint32_t *strids;            /* number - 2^32 → the string */
  int64_t nstrids, cstrids;
  void *strid_map;
  int64_t next_strid;
  /* recently interned strings (names, categories, arg keys repeat) */
  struct { const char *p; uint32_t len, id; } icache[4096];
  /* sorting */
  uint32_t *order;
  int64_t norder;
} jtrace;

/* Pass 1 over the whole buffer. Returns 1 (also when the input was cut
 * or damaged: what came before is kept, s->failed says where), 0 when the
 * file is not a JSON trace at all (s->err). */
int jt_read(jtrace *j, jscan *s);
/* §2.3: fills j->order (indexes into ev) and drops negative ts. */
int jt_sort(jtrace *j);
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
