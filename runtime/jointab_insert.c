/*
 * jointab_insert.c — putting a join table's rows into its slots
 * (jointab.h), on one thread or, for big relations, on the workers.
 *
 * Rows go in from the last to the first, each becoming the head of its
 * key's chain, so a chain lists its rows in buffer order without a tail
 * pointer.
 *
 * A hashed table of a big relation is filled on the workers (a direct
 * one goes in at memory speed, ids mostly in order, and stays on one
 * thread). The slots are cut into P ranges of a power of two slots (8
 * per worker, so that a worker slowed down by a busy machine leaves its
 * share to the others) and a row belongs to the range its home slot
 * (hash & mask) lies in. Two passes over chunks of rows list each
 * range's rows in row order; piece p then inserts the rows of range p,
 * from the last to the first, probing only inside it. Every row of one
 * key has the same home, so one piece makes each chain, in the order one
 * thread would. A row whose probe would run past its range's end is left
 * for the caller's thread (has[r] = DEFERRED), which inserts those
 * afterwards, from the last to the first, probing the whole table with
 * wraparound: a key's first row (the last in the buffer) meets the end
 * exactly when its later rows would (a range only fills up), so all rows
 * of a key are either deferred or not, and deferred chains are in order
 * too. When the lists find no memory, one thread fills the table.
 *
 * Slot positions then differ from one thread's (which key took which
 * slot of a collision run), but every probe finds the same head, since
 * each key sits after an unbroken run of filled slots from its home;
 * chains, `unique` and all matches are one thread's.
 */
#include "jointab.h"
#include "budget.h"
#include "par.h"

#define DEFERRED 255
#define MAX_PARTS 254   /* has[r] = 1 + range: one byte, DEFERRED apart */
#define CHUNK (1 << 16) /* rows per piece of the passes that list each range's rows */
#define PARTS_PER_WORKER 8

static inline bool same_rows(const rt_jointab *t, int64_t a, int64_t b) {
  for (int k = 0; k < t->nkeys; k++)
    if (t->keys[k][a] != t->keys[k][b]) return false;
  return true;
}

static inline __attribute__((always_inline)) uint64_t home(const rt_jointab *t, int64_t r) {
  if (t->direct) return (uint64_t)t->keys[0][r] - (uint64_t)t->dmin;
  int nk = t->nkeys;
  if (nk <= 0) return 0;
  if (nk == 1) return rt_hash_i64((uint64_t)t->keys[0][r]) & t->mask;
  int64_t w[RT_JOIN_MAX_KEYS];
  for (int k = 0; k < RT_JOIN_MAX_KEYS && k < nk; k++) w[k] = t->keys[k][r];
  return rt_join_hash(w, nk) & t->mask;
}

/* Inserts row r, probing from its home s up to `end` (wrapping to 0 at
 * the table's end when wrap); false when the probe met `end` without
 * wrap (nothing written). */
static inline __attribute__((always_inline)) bool put_row(rt_jointab *t, int64_t r, uint64_t s, uint64_t end, bool wrap, bool *dups) {
  if (!t->direct)
    while (t->slots[s] && !same_rows(t, t->slots[s] - 1, r))
      if (++s == end) {
        if (!wrap) return false;
        s = 0;
      }
  if (t->slots[s]) t->next[r] = t->slots[s] - 1, *dups = true;
  t->slots[s] = (uint32_t)r + 1;
  return true;
}

static uint64_t nslots(const rt_jointab *t) { return t->direct ? t->drange : t->mask + 1; }

/* Inserts the rows r (from hi - 1 down to lo) with has[r] == mark,
 * probing up to `end` (wrap: to the whole table); a row whose probe
 * met `end` gets has[r] = DEFERRED and widens [*dlo, *dhi]. (Fetching
 * slots ahead was tried: no faster, the misses of consecutive rows
 * already overlap.) */
static void put_rows(rt_jointab *t, uint8_t *has, uint8_t mark, int64_t lo, int64_t hi, uint64_t end,
                     bool wrap, bool *dups, int64_t *dlo, int64_t *dhi) {
  for (int64_t r = hi - 1; r >= lo; r--) {
    if (has[r] != mark) continue;
    if (!put_row(t, r, home(t, r), end, wrap, dups)) {
      has[r] = DEFERRED;
      *dlo = r;
      if (*dhi < 0) *dhi = r;
    }
  }
}

typedef struct ins_par {
  rt_jointab *t;
  uint8_t *has;
  int64_t n;
  int parts;
  int shift;               /* a range is 1 << shift slots (the last may be shorter) */
  int64_t *at;             /* [chunk * parts + range]: the chunk's rows of the range start here in rows */
  uint32_t *rows;          /* the rows by range, each range's in row order */
  int64_t start[MAX_PARTS + 1];  /* range p's rows: rows[start[p] .. start[p + 1]) */
  bool dups[MAX_PARTS];
  int64_t dlo[MAX_PARTS], dhi[MAX_PARTS];  /* the deferred rows' span (dhi < dlo: none) */
} ins_par;

static int64_t chunk_end(const ins_par *ip, int64_t c) {
  return (c + 1) * CHUNK < ip->n ? (c + 1) * CHUNK : ip->n;
}

/* Pass 1, per chunk of rows: has[r] = 1 + the range of r's home, and
 * the chunk's row count per range (in at[]). */
static void ranges_piece(void *ctx, int64_t c) {
  ins_par *ip = ctx;
  int64_t *cnt = &ip->at[c * ip->parts];
  for (int64_t r = c * CHUNK; r < chunk_end(ip, c); r++)
    if (ip->has[r]) {
      uint64_t p = home(ip->t, r) >> ip->shift;
      ip->has[r] = (uint8_t)(1 + p);
      cnt[p]++;
    }
}

/* Pass 2, per chunk: its rows into their ranges' lists (at[] now says
 * where the chunk's rows of each range go), so each list is in row order. */
static void scatter_piece(void *ctx, int64_t c) {
  ins_par *ip = ctx;
  int64_t *at = &ip->at[c * ip->parts];
  for (int64_t r = c * CHUNK; r < chunk_end(ip, c); r++)
    if (ip->has[r]) ip->rows[at[ip->has[r] - 1]++] = (uint32_t)r;
}

/* Pass 3, per range: its rows, from the last to the first. */
static void insert_piece(void *ctx, int64_t p) {
  ins_par *ip = ctx;
  uint64_t end = (uint64_t)(p + 1) << ip->shift;
  if (end > nslots(ip->t)) end = nslots(ip->t);
  bool dups = false;
  int64_t dlo = ip->n, dhi = -1;
  for (int64_t i = ip->start[p + 1] - 1; i >= ip->start[p]; i--) {
    int64_t r = ip->rows[i];
    if (!put_row(ip->t, r, home(ip->t, r), end, false, &dups)) {
      ip->has[r] = DEFERRED;
      dlo = r;
      if (dhi < 0) dhi = r;
    }
  }
  ip->dups[p] = dups;
  ip->dlo[p] = dlo;
  ip->dhi[p] = dhi;
}

void rt_jointab_insert(rt_jointab *t, uint8_t *has, const struct rt_par *par) {
  int64_t n = t->nrows, nchunks = (n + CHUNK - 1) / CHUNK;
  bool dups = false;
  /* more ranges than workers, so that one slowed down (a busy machine)
   * leaves its share to the others */
  int parts = rt_par_workers(par) * PARTS_PER_WORKER;
  if (parts > MAX_PARTS) parts = MAX_PARTS;
  int64_t lo = n, hi = -1;
  ins_par st, *ip = &st;   /* on the stack; the lists below may fail */
  ip->at = NULL;
  ip->rows = NULL;
  /* A direct table's rows go in at memory speed (ids in order, mostly):
   * the passes that split them would cost more than they save. */
  bool split = rt_par_workers(par) > 1 && n >= RT_JOIN_PAR_MIN && t->nkeys > 0 && !t->direct;
  if (split) {
    ip->at = rt_mem_calloc((size_t)(nchunks * parts), sizeof *ip->at);
    ip->rows = rt_mem_alloc((size_t)n * sizeof *ip->rows);
  }
  if (!ip->at || !ip->rows) {   /* one thread (also when the lists found no room) */
    rt_mem_free(ip->at);
    rt_mem_free(ip->rows);
    put_rows(t, has, 1, 0, n, nslots(t), true, &dups, &lo, &hi);
    t->unique = !dups;
    return;
  }
  ip->t = t;
  ip->has = has;
  ip->n = n;
  /* ranges of a power of two slots (a shift per row, not a division),
   * no more than `parts` of them */
  ip->shift = 0;
  while ((nslots(t) + ((uint64_t)1 << ip->shift) - 1) >> ip->shift > (uint64_t)parts) ip->shift++;
  parts = (int)((nslots(t) + ((uint64_t)1 << ip->shift) - 1) >> ip->shift);
  ip->parts = parts;
  rt_par_for(par, nchunks, ranges_piece, ip);
  int64_t off = 0;   /* counts to offsets: range by range, chunk by chunk */
  for (int p = 0; p < parts; p++) {
    ip->start[p] = off;
    for (int64_t c = 0; c < nchunks; c++) {
      int64_t k = ip->at[c * parts + p];
      ip->at[c * parts + p] = off;
      off += k;
    }
  }
  ip->start[parts] = off;
  rt_par_for(par, nchunks, scatter_piece, ip);
  rt_par_for(par, parts, insert_piece, ip);
  for (int p = 0; p < parts; p++) {
    dups |= ip->dups[p];
    lo = ip->dlo[p] < lo ? ip->dlo[p] : lo;
    hi = ip->dhi[p] > hi ? ip->dhi[p] : hi;
  }
  if (hi >= lo) put_rows(t, has, DEFERRED, lo, hi + 1, nslots(t), true, &dups, &lo, &hi);
  t->unique = !dups;
  rt_mem_free(ip->at);
  rt_mem_free(ip->rows);
}
