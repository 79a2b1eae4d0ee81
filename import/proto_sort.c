/*
 * proto_sort.c — the sorter of the protobuf importer (TRACES.md §3.5).
 *
 * Items go into streams in arrival order: one for generic packets, one
 * for track events, then per CPU one for ftrace events and one for each
 * kind of compact_sched record (switch, waking), each created at first
 * use. At end of file each
 * stream that received an item older than its last is sorted stably by
 * ts (a natural merge sort: it finds the ascending runs the producers
 * wrote, so a mostly ordered stream costs one pass per doubling of runs);
 * then a heap merges the streams by (ts, stream number), which with the
 * stable per-stream order gives trace_processor's (ts, stream, arrival)
 * order. The whole trace is sorted (TP's --full-sort; §3.5.3 [S]).
 */
#define _GNU_SOURCE   /* mremap */
#include <stdlib.h>
#include <sys/mman.h>

#include "import/proto_import.h"

static pb_stream *stream_new(pb_imp *m, int kind, uint32_t cpu, size_t esz) {
  pb_stream s = {.kind = kind, .cpu = cpu, .esz = esz, .last_ts = INT64_MIN};
  if (!PB_PUSH(m->streams, s)) {
    im_oom(m->t);
    return NULL;
  }
  return &m->streams.v[m->streams.n - 1];
}

/* Stream 0 and 1 always exist (made by the importer's init, in this
 * order), so the generic packets stream sorts before the track events. */
pb_stream *pb_stream_generic(pb_imp *m) { return &m->streams.v[0]; }
pb_stream *pb_stream_track_event(pb_imp *m) { return &m->streams.v[1]; }

pb_stream *pb_stream_ftrace(pb_imp *m, uint32_t cpu) {
  if (m->stream_ftrace[cpu] < 0) {
    if (!stream_new(m, PB_STREAM_FTRACE, cpu, sizeof(pb_item))) return NULL;
    m->stream_ftrace[cpu] = (int32_t)m->streams.n - 1;
  }
  return &m->streams.v[m->stream_ftrace[cpu]];
}

/* kind: 0 switches, 1 wakings (each bundle writes its switches, then its
 * wakings: apart, each kind stays in time order). */
pb_stream *pb_stream_compact(pb_imp *m, uint32_t cpu, int kind) {
  int32_t *slot = &m->stream_compact[kind][cpu];
  if (*slot < 0) {
    if (!stream_new(m, PB_STREAM_COMPACT, cpu, sizeof(pb_csched))) return NULL;
    *slot = (int32_t)m->streams.n - 1;
  }
  return &m->streams.v[*slot];
}

/* Stream arrays are mappings of their own, grown by mremap: a stream of
 * millions of items doubles without copying them (realloc copies blocks
 * below malloc's mmap threshold), and the merge can hand back any page of
 * it (pb_release_consumed). */
static int stream_grow(pb_stream *s) {
  size_t old = s->cap * s->esz, bytes = s->cap ? old * 2 : 64 * 1024;
  void *v = s->v ? mremap(s->v, old, bytes, MREMAP_MAYMOVE)
                 : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (v == MAP_FAILED) return 0;
  s->v = v;
  s->cap = bytes / s->esz;
  return 1;
}

static void stream_free(pb_stream *s) {
  if (s->v) munmap(s->v, s->cap * s->esz);
  s->v = NULL;
  s->n = s->cap = 0;
}

int pb_stream_push(pb_stream *s, const void *elem) {
  if (s->n == s->cap && !stream_grow(s)) return 0;
  int64_t ts;
  memcpy(&ts, elem, 8);
  if (ts < s->last_ts) s->unsorted = 1;
  else s->last_ts = ts;
  memcpy(s->v + s->n * s->esz, elem, s->esz);
  s->n++;
  return 1;
}

/* ---- stable natural merge sort ------------------------------------------- */

static inline int64_t ts_at(const uint8_t *v, size_t i, size_t esz) {
  int64_t ts;
  memcpy(&ts, v + i * esz, 8);
  return ts;
}

/* Merges a[lo, mid) and a[mid, hi) into b (ties from the left run first). */
static void merge(const uint8_t *a, uint8_t *b, size_t lo, size_t mid, size_t hi, size_t esz) {
  size_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) {
    if (ts_at(a, j, esz) < ts_at(a, i, esz)) memcpy(b + k++ * esz, a + j++ * esz, esz);
    else memcpy(b + k++ * esz, a + i++ * esz, esz);
  }
  memcpy(b + k * esz, a + i * esz, (mid - i) * esz);
  k += mid - i;
  memcpy(b + k * esz, a + j * esz, (hi - j) * esz);
}

int pb_sort_by_ts(void *v, size_t n, size_t esz) {
  if (n < 2) return 1;
  /* run boundaries: starts of the maximal non-decreasing runs, then n */
  size_t nruns = 1;
  for (size_t i = 1; i < n; i++) nruns += ts_at(v, i, esz) < ts_at(v, i - 1, esz);
  if (nruns == 1) return 1;
  size_t *runs = malloc((nruns + 1) * sizeof *runs);
  uint8_t *tmp = malloc(n * esz);
  if (!runs || !tmp) {
    free(runs);
    free(tmp);
    return 0;
  }
  size_t r = 0;
  runs[r++] = 0;
  for (size_t i = 1; i < n; i++)
    if (ts_at(v, i, esz) < ts_at(v, i - 1, esz)) runs[r++] = i;
  runs[r] = n;
  uint8_t *a = v, *b = tmp;
  while (nruns > 1) {
    size_t w = 0;
    for (size_t i = 0; i < nruns; i += 2) {
      if (i + 1 < nruns) merge(a, b, runs[i], runs[i + 1], runs[i + 2], esz);
      else memcpy(b + runs[i] * esz, a + runs[i] * esz, (runs[i + 1] - runs[i]) * esz);
      runs[w++] = runs[i];
    }
    runs[w] = n;
    nruns = w;
    uint8_t *t = a;
    a = b;
    b = t;
  }
  if (a != v) memcpy(v, a, n * esz);
  free(runs);
  free(tmp);
  return 1;
}

/* Stable LSD radix sort of 16-byte items by ts. */
enum { RBITS = 11, RBUCKETS = 1 << RBITS, RPASSES = (64 + RBITS - 1) / RBITS };

int pb_radix_items(pb_item *v, size_t n) {
  if (n < 2) return 1;
  int64_t lo = v[0].ts;
  for (size_t i = 1; i < n; i++)
    if (v[i].ts < lo) lo = v[i].ts;
  size_t(*hist)[RBUCKETS] = calloc(RPASSES, sizeof *hist);
  pb_item *tmp = malloc(n * sizeof *tmp);
  if (!hist || !tmp) {
    free(hist);
    free(tmp);
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t k = (uint64_t)(v[i].ts - lo);
    for (int p = 0; p < RPASSES; p++) hist[p][(k >> (p * RBITS)) & (RBUCKETS - 1)]++;
  }
  pb_item *a = v, *b = tmp;
  for (int p = 0; p < RPASSES; p++) {
    size_t *h = hist[p];
    int trivial = 0;
    for (int d = 0; d < RBUCKETS; d++)
      if (h[d] == n) trivial = 1;
    if (trivial) continue;   /* every item has the same digit here */
    size_t sum = 0;
    for (int d = 0; d < RBUCKETS; d++) {
      size_t c = h[d];
      h[d] = sum;
      sum += c;
    }
    int shift = p * RBITS;
    for (size_t i = 0; i < n; i++) {
      uint64_t k = (uint64_t)(a[i].ts - lo);
      b[h[(k >> shift) & (RBUCKETS - 1)]++] = a[i];
    }
    pb_item *t = a;
    a = b;
    b = t;
  }
  if (a != v) memcpy(v, a, n * sizeof *v);
  free(hist);
  free(tmp);
  return 1;
}

/* Ascending runs in a stream (stops counting at limit). */
static size_t count_runs(const pb_stream *s, size_t limit) {
  size_t runs = 1;
  for (size_t i = 1; i < s->n && runs < limit; i++)
    runs += ts_at(s->v, i, s->esz) < ts_at(s->v, i - 1, s->esz);
  return runs;
}

/* The suffix minima of the logical offsets a stream's items refer to. */
static int suffix_min(pb_stream *s) {
  if (s->kind == PB_STREAM_COMPACT || !s->n) return 1;
  size_t nb = ((s->n - 1) >> PB_SUF_SHIFT) + 1;
  s->sufmin = malloc(nb * sizeof *s->sufmin);
  if (!s->sufmin) return 0;
  const pb_item *it = (const pb_item *)s->v;
  uint64_t min = UINT64_MAX;
  for (size_t i = s->n; i-- > 0;) {
    uint64_t off = PB_REF_OFF(it[i].ref);
    if (off < min) min = off;
    if ((i & ((1u << PB_SUF_SHIFT) - 1)) == 0) s->sufmin[i >> PB_SUF_SHIFT] = min;
  }
  return 1;
}

int pb_sort_streams(pb_imp *m) {
  for (size_t i = 0; i < m->streams.n; i++) {
    pb_stream *s = &m->streams.v[i];
    if (!suffix_min(s)) return im_oom(m->t);   /* after the sort, below */
    if (!s->unsorted) continue;
    free(s->sufmin);
    s->sufmin = NULL;
    int ok = s->esz == sizeof(pb_item) && count_runs(s, 16) >= 16
                 ? pb_radix_items((pb_item *)s->v, s->n)
                 : pb_sort_by_ts(s->v, s->n, s->esz);
    if (!ok || !suffix_min(s)) return im_oom(m->t);
    s->unsorted = 0;
  }
  return 1;
}

/* ---- k-way merge ---------------------------------------------------------------- */

/* A tournament (loser) tree over the streams: m->heap[1 .. K-1] hold the
 * loser of each match (K = streams rounded up to a power of two, leaf i =
 * stream i), m->heap[0] the winner, i.e. the next item. Keys are (ts of
 * the stream's next item, stream index), exhausted streams last; taking
 * an item replays only its stream's path to the root: log2(K) compares,
 * half of what a binary heap's sift needs. Keys are unique, so the order
 * is exactly (ts, stream), and within a stream arrival order. */

static inline int less(const pb_heap_ent *a, const pb_heap_ent *b) {
  if (a->done != b->done) return b->done;
  return a->ts < b->ts || (a->ts == b->ts && a->stream < b->stream);
}

static pb_heap_ent head_key(const pb_stream *st, int32_t i) {
  pb_heap_ent e = {.stream = i, .done = st->pos >= st->n};
  if (!e.done) e.ts = ts_at(st->v, st->pos, st->esz);
  return e;
}

void pb_merge_begin(pb_imp *m) {
  free(m->heap);
  size_t k = 1;
  while (k < m->streams.n) k *= 2;
  m->heap_n = k;
  m->heap = malloc(k * sizeof *m->heap);
  if (!m->heap) {
    im_oom(m->t);
    m->heap_n = 0;
    return;
  }
  /* the first tournament: winners bottom-up in win (leaves at k + i),
   * each match's loser in the tree */
  pb_heap_ent *win = malloc(2 * k * sizeof *win);
  if (!win) {
    im_oom(m->t);
    free(m->heap);
    m->heap = NULL;
    m->heap_n = 0;
    return;
  }
  for (size_t i = 0; i < k; i++) {
    if (i < m->streams.n) {
      m->streams.v[i].pos = 0;
      win[k + i] = head_key(&m->streams.v[i], (int32_t)i);
    } else {
      win[k + i] = (pb_heap_ent){.stream = (int32_t)i, .done = 1};
    }
  }
  for (size_t i = k; i-- > 1;) {
    int l = less(&win[2 * i], &win[2 * i + 1]);
    win[i] = l ? win[2 * i] : win[2 * i + 1];
    m->heap[i] = l ? win[2 * i + 1] : win[2 * i];
  }
  m->heap[0] = win[1];
  free(win);
}

int pb_merge_next(pb_imp *m, int *stream, const void **elem) {
  if (!m->heap_n || m->heap[0].done) return 0;
  int32_t s = m->heap[0].stream;
  pb_stream *st = &m->streams.v[s];
  *stream = s;
  *elem = st->v + st->pos * st->esz;
  st->pos++;
  pb_heap_ent cur = head_key(st, s);
  pb_heap_ent *t = m->heap;
  for (size_t node = ((size_t)s + m->heap_n) >> 1; node >= 1; node >>= 1)
    if (less(&t[node], &cur)) {
      pb_heap_ent x = t[node];
      t[node] = cur;
      cur = x;
    }
  t[0] = cur;
  return 1;
}

void pb_merge_end(pb_imp *m) {
  free(m->heap);
  m->heap = NULL;
  m->heap_n = 0;
}

/* ---- handing back what the merge passed ------------------------------------------ */

static void release_range(uint8_t *base, size_t from, size_t to) {
  uintptr_t a = ((uintptr_t)base + from + 4095) & ~(uintptr_t)4095;
  uintptr_t b = ((uintptr_t)base + to) & ~(uintptr_t)4095;
  if (b > a) madvise((void *)a, b - a, MADV_DONTNEED);
}

void pb_release_consumed(pb_imp *m) {
  uint64_t wm = UINT64_MAX;
  for (size_t i = 0; i < m->streams.n; i++) {
    pb_stream *s = &m->streams.v[i];
    /* stream arrays: the consumed prefix */
    size_t done = s->pos * s->esz;
    if (done > s->released + (4u << 20)) {
      release_range(s->v, s->released, done);
      s->released = done;
    }
    if (s->sufmin && s->pos < s->n) {
      uint64_t b = s->sufmin[s->pos >> PB_SUF_SHIFT];
      if (b < wm) wm = b;
    }
  }
  /* the file: every byte whose logical offset is below the watermark */
  size_t upto = 0;
  for (size_t i = 0; i < m->segs.n; i++) {
    const pb_seg *g = &m->segs.v[i];
    if (g->owned) continue;
    if (wm >= g->lstart + g->len) upto = g->file_off + g->len;
    else {
      if (wm > g->lstart) upto = g->file_off + (size_t)(wm - g->lstart);
      break;
    }
  }
  if (upto > m->in->released + (4u << 20)) im_input_release(m->in, upto);
}

void pb_streams_free(pb_imp *m) {
  for (size_t i = 0; i < m->streams.n; i++) stream_free(&m->streams.v[i]), free(m->streams.v[i].sufmin);
  free(m->streams.v);
  m->streams.v = NULL;
  m->streams.n = m->streams.cap = 0;
}
