/*
 * trace_json.c — the Chrome JSON trace importer (see trace_json.h).
 *
 * Three steps:
 *  1. Read. zlib's gzread gives the bytes of plain and gzip files alike, in
 *     1 MB chunks. The top level (`{ "traceEvents": [ … ], … }` or `[ … ]`)
 *     is walked by hand; each array element is handed to json-c's
 *     incremental tokener (json_tokener_parse_ex), which resumes across
 *     chunk boundaries. Only one event's object tree exists at a time;
 *     other top-level values are skipped byte by byte without parsing.
 *  2. Decode. Each event becomes a compact record (ph, ts/dur in ns, track,
 *     name, category, arg set) or updates thread/process names (M).
 *  3. Nest. Records are sorted per track by ts (stable; among complete
 *     events with equal ts the longer one first, so it becomes the parent),
 *     then replayed against a stack per track, as Perfetto's slice tracker
 *     does: a complete slice leaves the stack once an event starts at or
 *     after its end; E closes the innermost open B; a B with no E stays
 *     open (dur -1). Slice ids are then given in (ts, track, nesting
 *     order), which puts every parent before its children.
 *
 * Nothing touches the catalog until every table is built.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>
#include <zlib.h>

#include "trace_json_old.h"

#define CHUNK (1u << 20)
#define NO_STR UINT32_MAX   /* a NULL string column value */
#define MAX_ARG_DEPTH 32

/* ---- growable arrays ---------------------------------------------------- */

/* Grows *p (of *cap elements of size sz) to hold at least need; 0 on OOM. */
static int grow(void **p, size_t *cap, size_t need, size_t sz) {
  if (need <= *cap) return 1;
  size_t c = *cap ? *cap : 256;
  while (c < need) c *= 2;
  void *np = realloc(*p, c * sz);
  if (!np) return 0;
  *p = np;
  *cap = c;
  return 1;
}

/* ---- importer state ------------------------------------------------------ */

enum { TK_THREAD, TK_PROCESS, TK_GLOBAL };

typedef struct thread_rec { int64_t tid; uint32_t upid, name; int32_t track; } thread_rec;
typedef struct process_rec { int64_t pid; uint32_t name; int32_t track; } process_rec;
typedef struct track_rec { int type; uint32_t owner; } track_rec;   /* utid or upid */

/* A slice-making event, kept until nesting. */
typedef struct event_rec {
  int64_t ts, dur;      /* ns; dur only for X and instants */
  uint32_t track, name, cat;
  int32_t args;         /* arg set, -1 for none */
  uint32_t seq;         /* file order, for stable sorting */
  char ph;              /* 'B', 'E', 'X' or 'i' */
} event_rec;

typedef struct slice_rec {
  int64_t ts, dur;      /* dur -1: did not end */
  uint32_t track, name, cat, depth;
  int32_t args;
  bool open;            /* a B waiting for its E */
  int64_t parent;       /* index into the slice array, -1 for roots */
} slice_rec;

typedef struct arg_rec { int32_t set; uint32_t flat_key, key, type, value; uint32_t seq; } arg_rec;

/* Open-addressing map from a pair of int64 keys to a uint32 value. */
typedef struct pair_map {
  struct { int64_t a, b; uint32_t v; bool used; } *slots;
  size_t cap, n;
} pair_map;

typedef struct importer {
  rt_strpool *sp;
  rt_trace_stats *st;
  rt_err *err;
  const char *path;
  /* reader */
  gzFile gz;
  char *buf;
  size_t pos, len;
  int64_t base;         /* file offset of buf[0] */
  bool eof;
  json_tokener *tok;
  /* decoded */
  thread_rec *threads;  size_t nthreads, cthreads;
  process_rec *procs;   size_t nprocs, cprocs;
  track_rec *tracks;    size_t ntracks, ctracks;
  event_rec *events;    size_t nevents, cevents;
  arg_rec *args;        size_t nargs, cargs;
  int32_t *set_alias;   size_t nsets, csets;   /* E's arg set → its slice's */
  pair_map thread_map;  /* (pid, tid) → utid */
  pair_map proc_map;    /* (pid, 0) → upid */
  int32_t global_track;
  bool oom;
  /* interned constants */
  uint32_t s_thread, s_process, s_global, s_int, s_real, s_string, s_bool, s_null;
} importer;

static uint64_t pair_hash(int64_t a, int64_t b) {
  uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ull ^ (uint64_t)b * 0xc2b2ae3d27d4eb4full;
  return h ^ (h >> 29);
}

/* Finds (a, b); when absent inserts it with value v (returns v) or returns
 * UINT32_MAX on OOM. *found says whether it existed. */
static uint32_t pair_map_get(pair_map *m, int64_t a, int64_t b, uint32_t v, bool *found) {
  if ((m->n + 1) * 2 > m->cap) {
    size_t nc = m->cap ? m->cap * 2 : 64;
    pair_map nm = {.cap = nc, .n = m->n};
    nm.slots = calloc(nc, sizeof *nm.slots);
    if (!nm.slots) return UINT32_MAX;
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->slots[i].used) continue;
      size_t j = pair_hash(m->slots[i].a, m->slots[i].b) & (nc - 1);
      while (nm.slots[j].used) j = (j + 1) & (nc - 1);
      nm.slots[j] = m->slots[i];
    }
    free(m->slots);
    *m = nm;
  }
  size_t j = pair_hash(a, b) & (m->cap - 1);
  while (m->slots[j].used) {
    if (m->slots[j].a == a && m->slots[j].b == b) {
      *found = true;
      return m->slots[j].v;
    }
    j = (j + 1) & (m->cap - 1);
  }
  m->slots[j].used = true;
  m->slots[j].a = a;
  m->slots[j].b = b;
  m->slots[j].v = v;
  m->n++;
  *found = false;
  return v;
}

static uint32_t intern(importer *m, const char *s, size_t n) { return rt_str_intern(m->sp, s, n); }
static uint32_t intern_c(importer *m, const char *s) { return intern(m, s, strlen(s)); }

/* ---- threads, processes, tracks -------------------------------------------- */

static uint32_t process_of(importer *m, int64_t pid) {
  bool found;
  uint32_t upid = pair_map_get(&m->proc_map, pid, 0, (uint32_t)m->nprocs, &found);
  if (upid == UINT32_MAX) return m->oom = true, 0;
  if (found) return upid;
  if (!grow((void **)&m->procs, &m->cprocs, m->nprocs + 1, sizeof *m->procs))
    return m->oom = true, 0;
  m->procs[m->nprocs++] = (process_rec){.pid = pid, .name = NO_STR, .track = -1};
  return upid;
}

static uint32_t thread_of(importer *m, int64_t pid, int64_t tid) {
  bool found;
  uint32_t utid = pair_map_get(&m->thread_map, pid, tid, (uint32_t)m->nthreads, &found);
  if (utid == UINT32_MAX) return m->oom = true, 0;
  if (found) return utid;
  uint32_t upid = process_of(m, pid);
  if (!grow((void **)&m->threads, &m->cthreads, m->nthreads + 1, sizeof *m->threads))
    return m->oom = true, 0;
  m->threads[m->nthreads++] = (thread_rec){.tid = tid, .upid = upid, .name = NO_STR, .track = -1};
  return utid;
}

static uint32_t new_track(importer *m, int type, uint32_t owner) {
  if (!grow((void **)&m->tracks, &m->ctracks, m->ntracks + 1, sizeof *m->tracks))
    return m->oom = true, 0;
  m->tracks[m->ntracks] = (track_rec){type, owner};
  return (uint32_t)m->ntracks++;
}

static uint32_t thread_track(importer *m, uint32_t utid) {
  if (m->threads[utid].track < 0) m->threads[utid].track = (int32_t)new_track(m, TK_THREAD, utid);
  return (uint32_t)m->threads[utid].track;
}

static uint32_t process_track(importer *m, uint32_t upid) {
  if (m->procs[upid].track < 0) m->procs[upid].track = (int32_t)new_track(m, TK_PROCESS, upid);
  return (uint32_t)m->procs[upid].track;
}

/* ---- args -------------------------------------------------------------------- */

static void add_arg(importer *m, int32_t set, rt_buf *flat, rt_buf *key, uint32_t type,
                    uint32_t value) {
  if (!grow((void **)&m->args, &m->cargs, m->nargs + 1, sizeof *m->args)) {
    m->oom = true;
    return;
  }
  m->args[m->nargs] = (arg_rec){set, intern(m, flat->data, flat->len), intern(m, key->data, key->len),
                                type, value, (uint32_t)m->nargs};
  m->nargs++;
}

/* Flattens v under the keys in flat/key (restored on return). */
static void flatten_arg(importer *m, int32_t set, json_object *v, rt_buf *flat, rt_buf *key,
                        int depth) {
  char num[64];
  size_t flen = flat->len, klen = key->len;
  switch (json_object_get_type(v)) {
  case json_type_object:
    if (depth >= MAX_ARG_DEPTH) break;
    json_object_object_foreach(v, k, child) {
      rt_buf_printf(flat, ".%s", k);
      rt_buf_printf(key, ".%s", k);
      flatten_arg(m, set, child, flat, key, depth + 1);
      flat->len = flen;
      key->len = klen;
    }
    return;
  case json_type_array:
    if (depth >= MAX_ARG_DEPTH) break;
    for (size_t i = 0, n = json_object_array_length(v); i < n; i++) {
      rt_buf_printf(key, "[%zu]", i);
      flatten_arg(m, set, json_object_array_get_idx(v, i), flat, key, depth + 1);
      key->len = klen;
    }
    return;
  case json_type_null:
    add_arg(m, set, flat, key, m->s_null, NO_STR);
    return;
  case json_type_boolean:
    add_arg(m, set, flat, key, m->s_bool, intern_c(m, json_object_get_boolean(v) ? "true" : "false"));
    return;
  case json_type_int:
    snprintf(num, sizeof num, "%lld", (long long)json_object_get_int64(v));
    add_arg(m, set, flat, key, m->s_int, intern_c(m, num));
    return;
  case json_type_double:
    snprintf(num, sizeof num, "%.17g", json_object_get_double(v));
    add_arg(m, set, flat, key, m->s_real, intern_c(m, num));
    return;
  case json_type_string:
    add_arg(m, set, flat, key, m->s_string,
            intern(m, json_object_get_string(v), (size_t)json_object_get_string_len(v)));
    return;
  }
  /* Nested deeper than MAX_ARG_DEPTH: keep the JSON text as a string. */
  add_arg(m, set, flat, key, m->s_string, intern_c(m, json_object_to_json_string(v)));
}

/* Returns the new arg set of an event's args, or -1 when it has none. */
static int32_t event_args(importer *m, json_object *ev) {
  json_object *a;
  if (!json_object_object_get_ex(ev, "args", &a) || !json_object_is_type(a, json_type_object) ||
      json_object_object_length(a) == 0)
    return -1;
  if (!grow((void **)&m->set_alias, &m->csets, m->nsets + 1, sizeof *m->set_alias))
    return m->oom = true, -1;
  int32_t set = (int32_t)m->nsets;
  m->set_alias[m->nsets++] = set;
  rt_buf flat = {0}, key = {0};
  rt_buf_append(&flat, "args", 4);
  rt_buf_append(&key, "args", 4);
  flatten_arg(m, set, a, &flat, &key, 0);
  rt_buf_free(&flat);
  rt_buf_free(&key);
  return set;
}

/* ---- decoding one event ---------------------------------------------------------- */

/* A number (or numeric string, as some exporters write) as double. */
static bool get_number(json_object *o, const char *field, double *d, int64_t *i, bool *is_int) {
  json_object *v;
  if (!json_object_object_get_ex(o, field, &v)) return false;
  switch (json_object_get_type(v)) {
  case json_type_int:
    *i = json_object_get_int64(v);
    *d = (double)*i;
    *is_int = true;
    return true;
  case json_type_double:
    *d = json_object_get_double(v);
    *is_int = false;
    return isfinite(*d);
  case json_type_string: {
    const char *s = json_object_get_string(v);
    char *end;
    errno = 0;
    *d = strtod(s, &end);
    *is_int = false;
    return end != s && !*end && errno == 0 && isfinite(*d);
  }
  default:
    return false;
  }
}

/* Microseconds → ns. Integers are exact; fractions round to the nearest
 * ns (1.0005 µs * 1000 is 1000.4999… in binary: truncating would lose it). */
static bool get_us(json_object *o, const char *field, int64_t *ns) {
  double d;
  int64_t i = 0;
  bool is_int;
  if (!get_number(o, field, &d, &i, &is_int)) return false;
  if (is_int) return !__builtin_mul_overflow(i, 1000, ns);
  if (!(fabs(d) < 9.2e15)) return false;
  *ns = llround(d * 1000.0);
  return true;
}

/* pid and tid: integers (or integral numbers); absent means 0. */
static bool get_id(json_object *o, const char *field, int64_t *out) {
  json_object *v;
  *out = 0;
  if (!json_object_object_get_ex(o, field, &v)) return true;
  double d;
  bool is_int;
  if (!get_number(o, field, &d, out, &is_int)) return false;
  if (is_int) return true;
  if (d != floor(d) || fabs(d) > 9e15) return false;
  *out = (int64_t)d;
  return true;
}

static uint32_t get_str(importer *m, json_object *o, const char *field) {
  json_object *v;
  if (!json_object_object_get_ex(o, field, &v) || !json_object_is_type(v, json_type_string))
    return NO_STR;
  return intern(m, json_object_get_string(v), (size_t)json_object_get_string_len(v));
}

static void on_metadata(importer *m, json_object *ev, int64_t pid, int64_t tid) {
  m->st->metadata++;
  json_object *n, *a, *v;
  if (!json_object_object_get_ex(ev, "name", &n) || !json_object_is_type(n, json_type_string))
    return;
  const char *what = json_object_get_string(n);
  bool is_proc = !strcmp(what, "process_name"), is_thread = !strcmp(what, "thread_name");
  if (!is_proc && !is_thread) return;   /* sort indices, labels, overhead … */
  if (!json_object_object_get_ex(ev, "args", &a) || !json_object_object_get_ex(a, "name", &v) ||
      !json_object_is_type(v, json_type_string)) {
    m->st->malformed++;
    return;
  }
  uint32_t name = intern(m, json_object_get_string(v), (size_t)json_object_get_string_len(v));
  uint32_t at = is_proc ? process_of(m, pid) : thread_of(m, pid, tid);
  if (m->oom) return;
  if (is_proc) m->procs[at].name = name;
  else m->threads[at].name = name;
}

static void on_event(importer *m, json_object *ev) {
  m->st->events++;
  json_object *phv;
  if (!json_object_is_type(ev, json_type_object) ||
      !json_object_object_get_ex(ev, "ph", &phv) || !json_object_is_type(phv, json_type_string) ||
      json_object_get_string_len(phv) != 1) {
    m->st->malformed++;
    return;
  }
  char ph = json_object_get_string(phv)[0];
  if (ph == 'I') ph = 'i';   /* the old spelling of instants */
  if (ph != 'B' && ph != 'E' && ph != 'X' && ph != 'i' && ph != 'M') {
    m->st->ignored++;
    return;
  }
  int64_t pid, tid;
  if (!get_id(ev, "pid", &pid) || !get_id(ev, "tid", &tid)) {
    m->st->malformed++;
    return;
  }
  if (ph == 'M') {
    on_metadata(m, ev, pid, tid);
    return;
  }
  event_rec r = {.ph = ph, .args = -1, .seq = (uint32_t)m->nevents};
  json_object *dv;
  bool has_dur = ph == 'X' && json_object_object_get_ex(ev, "dur", &dv);
  if (!get_us(ev, "ts", &r.ts) || (has_dur && (!get_us(ev, "dur", &r.dur) || r.dur < 0))) {
    m->st->malformed++;
    return;
  }
  /* Chrome writes X without dur for events still running when tracing
   * stopped: kept as "did not end" (dur -1), nested like an instant. */
  if (ph == 'X' && !has_dur) {
    r.dur = -1;
    m->st->no_dur++;
  }
  /* Instants: scope "g" (global) and "p" (process) are not on a thread. */
  json_object *sv;
  char scope = 't';
  if (ph == 'i' && json_object_object_get_ex(ev, "s", &sv) &&
      json_object_is_type(sv, json_type_string))
    scope = json_object_get_string(sv)[0];
  if (scope == 'g') {
    if (m->global_track < 0) m->global_track = (int32_t)new_track(m, TK_GLOBAL, 0);
    r.track = (uint32_t)m->global_track;
  } else if (scope == 'p') {
    uint32_t upid = process_of(m, pid);
    if (!m->oom) r.track = process_track(m, upid);
  } else {
    uint32_t utid = thread_of(m, pid, tid);
    if (!m->oom) r.track = thread_track(m, utid);
  }
  if (m->oom) return;
  if (ph != 'E') {
    r.name = get_str(m, ev, "name");
    r.cat = get_str(m, ev, "cat");
  }
  r.args = event_args(m, ev);
  switch (ph) {
  case 'B': m->st->begin++; break;
  case 'X': m->st->complete++; break;
  case 'i': m->st->instants++; break;
  default: break;
  }
  if (!grow((void **)&m->events, &m->cevents, m->nevents + 1, sizeof *m->events)) {
    m->oom = true;
    return;
  }
  m->events[m->nevents++] = r;
}

/* ---- reading ---------------------------------------------------------------------- */


/* Reads the next chunk when buf is used up. Returns 0 at end of file or on
 * a read error (err set). */
static int fill(importer *m) {
  if (m->pos < m->len) return 1;
  if (m->eof) return 0;
  m->base += (int64_t)m->len;
  m->pos = m->len = 0;
  int n = gzread(m->gz, m->buf, CHUNK);
  if (n < 0) {
    int zerr;
    const char *msg = gzerror(m->gz, &zerr);
    m->eof = true;
    return rt_errorf(m->err, -1, "TRACE: cannot read '%s': %s", m->path,
                     zerr == Z_ERRNO ? strerror(errno) : msg);
  }
  if (n == 0) {
    m->eof = true;
    return 0;
  }
  m->len = (size_t)n;
  return 1;
}

/* The next non-blank byte (not consumed), or -1 at end of file. */
static int peek(importer *m) {
  for (;;) {
    if (!fill(m)) return -1;
    char c = m->buf[m->pos];
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return (unsigned char)c;
    m->pos++;
  }
}

static int64_t offset(const importer *m) { return m->base + (int64_t)m->pos; }

static int syntax(importer *m, const char *what) {
  char detail[96];
  snprintf(detail, sizeof detail, "%s at byte %lld", what, (long long)offset(m));
  return rt_errorf(m->err, -1, "TRACE: '%s' is not a valid JSON trace: %s", m->path, detail);
}

/* Skips one JSON value without building it (a top-level key we do not
 * read, e.g. 30 MB of systemTraceEvents). Strings and nesting are tracked
 * so that brackets inside strings do not count. */
static int skip_value(importer *m) {
  int depth = 0;
  bool in_str = false, esc = false, started = false;
  for (;;) {
    if (!fill(m)) return m->err->set ? 0 : syntax(m, "unexpected end of file");
    char c = m->buf[m->pos];
    if (in_str) {
      m->pos++;
      if (esc) esc = false;
      else if (c == '\\') esc = true;
      else if (c == '"') {
        in_str = false;
        if (depth == 0) return 1;
      }
      continue;
    }
    if (depth == 0 && started && (c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' ||
                                  c == '\r' || c == '\t'))
      return 1;   /* end of a bare scalar */
    m->pos++;
    started = true;
    if (c == '"') in_str = true;
    else if (c == '{' || c == '[') depth++;
    else if (c == '}' || c == ']') {
      if (--depth == 0) return 1;
      if (depth < 0) return syntax(m, "unbalanced bracket");
    }
  }
}

/* Reads a key string (up to 63 bytes kept; longer keys match nothing). */
static int read_key(importer *m, char *out, size_t cap) {
  size_t n = 0;
  bool esc = false, over = false;
  m->pos++;   /* the opening quote */
  for (;;) {
    if (!fill(m)) return m->err->set ? 0 : syntax(m, "unexpected end of file in a key");
    char c = m->buf[m->pos++];
    if (esc) esc = false;
    else if (c == '\\') esc = true;
    else if (c == '"') break;
    if (n + 1 < cap) out[n++] = c;
    else over = true;
  }
  out[over ? 0 : n] = 0;
  return 1;
}

/* Parses one array element with the tokener; *out is NULL for JSON null. */
static int parse_element(importer *m, json_object **out) {
  json_tokener_reset(m->tok);
  for (;;) {
    if (!fill(m)) return m->err->set ? 0 : syntax(m, "the file ends inside an event");
    size_t avail = m->len - m->pos;
    json_object *o = json_tokener_parse_ex(m->tok, m->buf + m->pos, (int)avail);
    enum json_tokener_error je = json_tokener_get_error(m->tok);
    if (je == json_tokener_continue) {
      m->pos = m->len;
      continue;
    }
    if (je != json_tokener_success) {
      m->pos += json_tokener_get_parse_end(m->tok);
      return syntax(m, json_tokener_error_desc(je));
    }
    m->pos += json_tokener_get_parse_end(m->tok);
    *out = o;
    return 1;
  }
}

/* Reads an event array; m->pos is at its '['. A bare top-level array may
 * end without ']' (allow_eof). */
static int read_events(importer *m, bool allow_eof) {
  m->pos++;
  int c = peek(m);
  if (c == ']') {
    m->pos++;
    return 1;
  }
  for (;;) {
    if (c < 0) return m->err->set ? 0 : allow_eof ? 1 : syntax(m, "unexpected end of file");
    json_object *o = NULL;
    if (!parse_element(m, &o)) return 0;
    on_event(m, o);
    json_object_put(o);
    if (m->oom) return rt_errorf(m->err, -1, "TRACE: out of memory");
    c = peek(m);
    if (c == ',') {
      m->pos++;
      c = peek(m);
      if (c == ']') {   /* a trailing comma, as truncated Chrome traces have */
        m->pos++;
        return 1;
      }
    } else if (c == ']') {
      m->pos++;
      return 1;
    } else if (c < 0) {
      return m->err->set ? 0 : allow_eof ? 1 : syntax(m, "unexpected end of file");
    } else {
      return syntax(m, "expected ',' or ']' after an event");
    }
  }
}

static int read_object(importer *m) {
  m->pos++;
  int c = peek(m);
  if (c == '}') return 1;
  for (;;) {
    if (c != '"') return c < 0 && m->err->set ? 0 : syntax(m, "expected a key");
    char key[64];
    if (!read_key(m, key, sizeof key)) return 0;
    if (peek(m) != ':') return m->err->set ? 0 : syntax(m, "expected ':'");
    m->pos++;
    c = peek(m);
    if (!strcmp(key, "traceEvents") && c == '[') {
      if (!read_events(m, false)) return 0;
    } else {
      if (!strcmp(key, "systemTraceEvents")) m->st->system_events_skipped = 1;
      if (c < 0) return m->err->set ? 0 : syntax(m, "unexpected end of file");
      if (!skip_value(m)) return 0;
    }
    c = peek(m);
    if (c == '}') return 1;
    if (c != ',') return c < 0 && m->err->set ? 0 : syntax(m, "expected ',' or '}'");
    m->pos++;
    c = peek(m);
  }
}

/* ---- nesting ------------------------------------------------------------------------ */

static int cmp_event(const void *pa, const void *pb) {
  const event_rec *a = pa, *b = pb;
  if (a->track != b->track) return a->track < b->track ? -1 : 1;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Among complete events of equal ts, the longer first (then file order). */
static int cmp_complete(const void *pa, const void *pb) {
  const event_rec *a = pa, *b = pb;
  if (a->dur != b->dur) return a->dur > b->dur ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static bool is_complete(const event_rec *e) { return e->ph == 'X' || e->ph == 'i'; }

/* Sorts by (track, ts, file order), then reorders each run of complete
 * events that share a ts by decreasing dur. B and E events keep their
 * place: their order in the file is what pairs them. */
static void sort_events(importer *m) {
  qsort(m->events, m->nevents, sizeof *m->events, cmp_event);
  for (size_t i = 0; i < m->nevents;) {
    size_t j = i + 1;
    if (is_complete(&m->events[i])) {
      while (j < m->nevents && is_complete(&m->events[j]) &&
             m->events[j].track == m->events[i].track && m->events[j].ts == m->events[i].ts)
        j++;
      if (j - i > 1) qsort(m->events + i, j - i, sizeof *m->events, cmp_complete);
    }
    i = j;
  }
}

/* A slice that did not end (dur -1) nests like an instant. */
static int64_t slice_end(const slice_rec *s) { return s->ts + (s->dur > 0 ? s->dur : 0); }

/* Replays the sorted events into slices (in nesting order per track). */
static slice_rec *nest(importer *m, size_t *nslices) {
  slice_rec *s = malloc((m->nevents ? m->nevents : 1) * sizeof *s);
  size_t *stack = malloc((m->nevents ? m->nevents : 1) * sizeof *stack);
  size_t n = 0, depth = 0;
  if (!s || !stack) {
    free(s);
    free(stack);
    return NULL;
  }
  for (size_t i = 0; i < m->nevents; i++) {
    const event_rec *e = &m->events[i];
    if (i == 0 || e->track != m->events[i - 1].track) {
      for (size_t k = 0; k < depth; k++) m->st->unclosed += s[stack[k]].open;
      depth = 0;
    }
    /* Complete slices that ended by now leave the stack; an open B stops
     * the search (its children stay until its E). */
    while (depth && !s[stack[depth - 1]].open && slice_end(&s[stack[depth - 1]]) <= e->ts)
      depth--;
    if (e->ph == 'E') {
      size_t k = depth;
      while (k && !s[stack[k - 1]].open) k--;
      if (!k) {
        m->st->unmatched_end++;
        continue;
      }
      slice_rec *b = &s[stack[k - 1]];
      b->dur = e->ts - b->ts;
      b->open = false;
      if (e->args >= 0) {
        if (b->args < 0) b->args = e->args;
        else m->set_alias[e->args] = b->args;
      }
      depth = k - 1;
      continue;
    }
    s[n] = (slice_rec){.ts = e->ts, .dur = e->ph == 'B' ? -1 : e->dur, .track = e->track,
                       .name = e->name, .cat = e->cat, .depth = (uint32_t)depth,
                       .args = e->args, .open = e->ph == 'B',
                       .parent = depth ? (int64_t)stack[depth - 1] : -1};
    stack[depth++] = n++;
  }
  for (size_t k = 0; k < depth; k++) m->st->unclosed += s[stack[k]].open;
  free(stack);
  *nslices = n;
  return s;
}

/* ---- tables ------------------------------------------------------------------------- */

/* Sort key of a slice's id (qsort has no context, so the key is copied). */
typedef struct slice_key { int64_t ts; uint32_t track, index; } slice_key;

static int cmp_slice_key(const void *pa, const void *pb) {
  const slice_key *a = pa, *b = pb;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  if (a->track != b->track) return a->track < b->track ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

static void append_str(rt_table_builder *b, int col, uint32_t s) {
  if (s == NO_STR) rt_tb_append_null(b, col);
  else rt_tb_append_str(b, col, s);
}

static void append_opt(rt_table_builder *b, int col, int64_t v) {
  if (v < 0) rt_tb_append_null(b, col);
  else rt_tb_append_i64(b, col, v);
}

/* Slice ids in (ts, track, nesting order): a child never starts before its
 * parent, and at equal ts shares its track and comes later in nesting
 * order, so parents get lower ids. */
static rt_table *slice_table(importer *m, const slice_rec *s, size_t n) {
  static const char *const cols[] = {"id", "ts", "dur", "track_id", "category",
                                     "name", "depth", "parent_id", "arg_set_id"};
  static const rt_type types[] = {RT_I64, RT_I64, RT_I64, RT_U32, RT_STR,
                                  RT_STR, RT_U32, RT_I64, RT_I64};
  slice_key *order = malloc((n ? n : 1) * sizeof *order);
  int64_t *id = malloc((n ? n : 1) * sizeof *id);
  rt_table_builder *b = rt_tb_new("slice", 9, cols, types);
  if (!order || !id || !b) {
    free(order);
    free(id);
    rt_tb_abort(b);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) order[i] = (slice_key){s[i].ts, s[i].track, (uint32_t)i};
  qsort(order, n, sizeof *order, cmp_slice_key);
  for (size_t i = 0; i < n; i++) id[order[i].index] = (int64_t)i;
  for (size_t i = 0; i < n; i++) {
    const slice_rec *r = &s[order[i].index];
    rt_tb_append_i64(b, 0, (int64_t)i);
    rt_tb_append_i64(b, 1, r->ts);
    rt_tb_append_i64(b, 2, r->dur);
    rt_tb_append_i64(b, 3, r->track);
    append_str(b, 4, r->cat);
    append_str(b, 5, r->name);
    rt_tb_append_i64(b, 6, r->depth);
    append_opt(b, 7, r->parent >= 0 ? id[r->parent] : -1);
    append_opt(b, 8, r->args);
  }
  free(order);
  free(id);
  return rt_tb_finish(b);
}

static rt_table *thread_table(importer *m) {
  static const char *const cols[] = {"utid", "tid", "name", "upid"};
  static const rt_type types[] = {RT_I64, RT_I64, RT_STR, RT_I64};
  rt_table_builder *b = rt_tb_new("thread", 4, cols, types);
  if (!b) return NULL;
  for (size_t i = 0; i < m->nthreads; i++) {
    rt_tb_append_i64(b, 0, (int64_t)i);
    rt_tb_append_i64(b, 1, m->threads[i].tid);
    append_str(b, 2, m->threads[i].name);
    rt_tb_append_i64(b, 3, m->threads[i].upid);
  }
  return rt_tb_finish(b);
}

static rt_table *process_table(importer *m) {
  static const char *const cols[] = {"upid", "pid", "name"};
  static const rt_type types[] = {RT_I64, RT_I64, RT_STR};
  rt_table_builder *b = rt_tb_new("process", 3, cols, types);
  if (!b) return NULL;
  for (size_t i = 0; i < m->nprocs; i++) {
    rt_tb_append_i64(b, 0, (int64_t)i);
    rt_tb_append_i64(b, 1, m->procs[i].pid);
    append_str(b, 2, m->procs[i].name);
  }
  return rt_tb_finish(b);
}

static rt_table *track_table(importer *m, bool threads_only) {
  static const char *const cols[] = {"id", "type", "utid", "upid"};
  static const rt_type types[] = {RT_I64, RT_STR, RT_I64, RT_I64};
  static const char *const tcols[] = {"id", "utid"};
  static const rt_type ttypes[] = {RT_I64, RT_I64};
  rt_table_builder *b = threads_only ? rt_tb_new("thread_track", 2, tcols, ttypes)
                                     : rt_tb_new("track", 4, cols, types);
  if (!b) return NULL;
  for (size_t i = 0; i < m->ntracks; i++) {
    const track_rec *t = &m->tracks[i];
    if (threads_only) {
      if (t->type != TK_THREAD) continue;
      rt_tb_append_i64(b, 0, (int64_t)i);
      rt_tb_append_i64(b, 1, t->owner);
      continue;
    }
    rt_tb_append_i64(b, 0, (int64_t)i);
    rt_tb_append_str(b, 1, t->type == TK_THREAD ? m->s_thread
                           : t->type == TK_PROCESS ? m->s_process : m->s_global);
    append_opt(b, 2, t->type == TK_THREAD ? (int64_t)t->owner : -1);
    append_opt(b, 3, t->type == TK_THREAD    ? (int64_t)m->threads[t->owner].upid
                     : t->type == TK_PROCESS ? (int64_t)t->owner : -1);
  }
  return rt_tb_finish(b);
}

static int cmp_arg(const void *pa, const void *pb) {
  const arg_rec *a = pa, *b = pb;
  if (a->set != b->set) return a->set < b->set ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Rows grouped by arg set (E args merged into their slice's set). */
static rt_table *args_table(importer *m) {
  static const char *const cols[] = {"id", "arg_set_id", "flat_key", "key", "value_type",
                                     "display_value"};
  static const rt_type types[] = {RT_I64, RT_I64, RT_STR, RT_STR, RT_STR, RT_STR};
  for (size_t i = 0; i < m->nargs; i++) m->args[i].set = m->set_alias[m->args[i].set];
  if (m->nargs) qsort(m->args, m->nargs, sizeof *m->args, cmp_arg);
  rt_table_builder *b = rt_tb_new("args", 6, cols, types);
  if (!b) return NULL;
  for (size_t i = 0; i < m->nargs; i++) {
    const arg_rec *a = &m->args[i];
    rt_tb_append_i64(b, 0, (int64_t)i);
    rt_tb_append_i64(b, 1, a->set);
    rt_tb_append_str(b, 2, a->flat_key);
    rt_tb_append_str(b, 3, a->key);
    rt_tb_append_str(b, 4, a->type);
    append_str(b, 5, a->value);
  }
  return rt_tb_finish(b);
}

/* ---- entry point ---------------------------------------------------------------------- */

static void importer_free(importer *m) {
  if (m->gz) gzclose(m->gz);
  if (m->tok) json_tokener_free(m->tok);
  free(m->buf);
  free(m->threads);
  free(m->procs);
  free(m->tracks);
  free(m->events);
  free(m->args);
  free(m->set_alias);
  free(m->thread_map.slots);
  free(m->proc_map.slots);
}

static int read_trace(importer *m) {
  int c = peek(m);
  if (c == '[') return read_events(m, true);
  if (c == '{') return read_object(m);
  if (m->err->set) return 0;
  return syntax(m, c < 0 ? "the file is empty" : "expected '[' or '{'");
}

int rt_trace_json_load(rt_catalog *cat, rt_strpool *sp, const char *path, rt_trace_stats *stats,
                       rt_err *err) {
  rt_trace_stats local;
  if (!stats) stats = &local;
  memset(stats, 0, sizeof *stats);
  importer m = {.sp = sp, .st = stats, .err = err, .path = path, .global_track = -1};
  m.gz = gzopen(path, "rb");
  if (!m.gz) return rt_errorf(err, -1, "TRACE: cannot open '%s': %s", path, strerror(errno));
  gzbuffer(m.gz, 1u << 18);
  m.buf = malloc(CHUNK);
  /* Depth 64: args may nest deeper than json-c's default of 32. */
  m.tok = json_tokener_new_ex(64);
  if (!m.buf || !m.tok) {
    importer_free(&m);
    return rt_errorf(err, -1, "TRACE: out of memory");
  }
  m.s_thread = intern_c(&m, "thread");
  m.s_process = intern_c(&m, "process");
  m.s_global = intern_c(&m, "global");
  m.s_int = intern_c(&m, "int");
  m.s_real = intern_c(&m, "real");
  m.s_string = intern_c(&m, "string");
  m.s_bool = intern_c(&m, "bool");
  m.s_null = intern_c(&m, "null");
  if (!read_trace(&m)) {
    importer_free(&m);
    return 0;
  }

  sort_events(&m);
  size_t ns = 0;
  slice_rec *s = nest(&m, &ns);
  enum { NT = 6 };
  rt_table *t[NT] = {0};
  if (s) {
    t[0] = slice_table(&m, s, ns);
    t[1] = thread_table(&m);
    t[2] = process_table(&m);
    t[3] = track_table(&m, false);
    t[4] = track_table(&m, true);
    t[5] = args_table(&m);
  }
  free(s);
  for (int i = 0; i < NT; i++) {
    if (t[i]) continue;
    for (int j = 0; j < NT; j++) rt_table_unref(t[j]);
    importer_free(&m);
    return rt_errorf(err, -1, "TRACE: out of memory");
  }
  stats->slices = (int64_t)ns;
  stats->threads = (int64_t)m.nthreads;
  stats->processes = (int64_t)m.nprocs;
  stats->args = (int64_t)m.nargs;
  importer_free(&m);
  for (int i = 0; i < NT; i++) rt_catalog_put(cat, t[i]);
  return 1;
}
