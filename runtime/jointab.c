/*
 * jointab.c — building and probing a JOIN's hash table (jointab.h): the
 * key words (read on the workers, in chunks, for big relations), the
 * choice of a direct table, then jointab_insert.c fills the slots.
 */
#include <stdlib.h>

#include "budget.h"
#include "jointab.h"
#include "par.h"

/* The key word of row r of buffer column c; false when NULL (or NaN). */
static bool key_word(const rt_rowbuf *b, int c, int64_t r, int64_t *w) {
  if (!rt_bit(b->valid[c], (uint64_t)r)) return false;
  switch (b->types[c]) {
  case RT_F64: return rt_join_f64_word(((const double *)b->data[c])[r], w);
  case RT_STR: *w = ((const uint32_t *)b->data[c])[r]; return true;
  default: *w = ((const int64_t *)b->data[c])[r]; return true;
  }
}

static bool same_key(const rt_jointab *t, int64_t r, const int64_t *w) {
  for (int k = 0; k < t->nkeys; k++)
    if (t->keys[k][r] != w[k]) return false;
  return true;
}

/* The key words of a chunk of rows, with the span and count of the
 * first key's words (for choose_direct): pieces of rt_par_for. */
#define KEY_CHUNK (1 << 16)

typedef struct key_chunk {
  int64_t lo, hi, cnt;
} key_chunk;

typedef struct key_pass {
  rt_jointab *t;
  const int *keycols;
  uint8_t *has;
  key_chunk *chunks;
} key_pass;

static void key_piece(void *ctx, int64_t c) {
  key_pass *kp = ctx;
  rt_jointab *t = kp->t;
  int64_t r0 = c * KEY_CHUNK, r1 = r0 + KEY_CHUNK < t->nrows ? r0 + KEY_CHUNK : t->nrows;
  int64_t lo = INT64_MAX, hi = INT64_MIN, cnt = 0;
  for (int64_t r = r0; r < r1; r++) {
    bool ok = true;
    for (int k = 0; k < t->nkeys && ok; k++) ok = key_word(t->buf, kp->keycols[k], r, &t->keys[k][r]);
    kp->has[r] = ok;
    t->next[r] = RT_JOIN_END;
    if (!ok || t->nkeys == 0) continue;
    int64_t v = t->keys[0][r];
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    cnt++;
  }
  kp->chunks[c] = (key_chunk){lo, hi, cnt};
}

/* Direct when one integer key spans at most a few times the row count. */
static void choose_direct(rt_jointab *t, const key_chunk *chunks, int64_t nchunks) {
  if (t->nkeys != 1 || t->kinds[0] != RT_I64) return;
  int64_t lo = INT64_MAX, hi = INT64_MIN, cnt = 0;
  for (int64_t c = 0; c < nchunks; c++) {
    if (!chunks[c].cnt) continue;
    lo = chunks[c].lo < lo ? chunks[c].lo : lo;
    hi = chunks[c].hi > hi ? chunks[c].hi : hi;
    cnt += chunks[c].cnt;
  }
  if (cnt == 0) return;
  uint64_t span = (uint64_t)hi - (uint64_t)lo;
  if (span >= (uint64_t)(4 * cnt + 1024) || span >= (uint64_t)UINT32_MAX) return;
  t->direct = 1;
  t->dmin = lo;
  t->drange = span + 1;
}

int rt_jointab_build(rt_jointab *t, rt_rowbuf *buf, int nkeys, const int *keycols,
                     bool want_matched, const struct rt_par *par, const char **msg) {
  memset(t, 0, sizeof *t);
  t->buf = buf;
  t->nkeys = nkeys;
  int64_t n = buf->nrows;
  *msg = "out of memory";
  if (nkeys > RT_JOIN_MAX_KEYS) {
    *msg = "too many join keys";
    return -1;
  }
  if (n > RT_JOIN_MAX_ROWS) {
    *msg = "the joined relation has more than 4294967293 rows";
    return -1;
  }
  if (n < RT_JOIN_PAR_MIN) par = NULL;
  t->nrows = n;
  size_t nn = (size_t)n + 1;
  int64_t nchunks = (n + KEY_CHUNK - 1) / KEY_CHUNK;
  t->kinds = rt_mem_calloc((size_t)nkeys + 1, sizeof *t->kinds);
  t->keys = rt_mem_calloc((size_t)nkeys + 1, sizeof *t->keys);
  t->next = rt_mem_alloc(nn * sizeof *t->next);
  uint8_t *has = rt_mem_alloc(nn);
  key_chunk *chunks = rt_mem_alloc(((size_t)nchunks + 1) * sizeof *chunks);
  if (!t->kinds || !t->keys || !t->next || !has || !chunks) goto fail;
  if (want_matched && !(t->matched = rt_mem_calloc(nn, 1))) goto fail;
  for (int k = 0; k < nkeys; k++) {
    t->kinds[k] = buf->types[keycols[k]];
    if (!(t->keys[k] = rt_mem_alloc(nn * sizeof(int64_t)))) goto fail;
  }
  key_pass kp = {t, keycols, has, chunks};
  rt_par_for(par, nchunks, key_piece, &kp);
  if (nkeys > 0) choose_direct(t, chunks, nchunks);
  rt_mem_free(chunks);
  chunks = NULL;
  if (t->direct) {
    if (!(t->slots = rt_mem_calloc((size_t)t->drange, sizeof *t->slots))) goto fail;
  } else {
    uint64_t cap = 16;
    while (cap < (uint64_t)n * 2) cap *= 2;
    t->mask = cap - 1;
    if (!(t->slots = rt_mem_calloc((size_t)cap, sizeof *t->slots))) goto fail;
  }
  rt_jointab_insert(t, has, par);
  rt_mem_free(has);
  has = NULL;
  /* The NULL row an unmatched LEFT / FULL input row reads. */
  rt_rowbuf_reserve(buf, 1);
  if (buf->cap < n + 1) goto fail;
  buf->nrows = n + 1;
  return 0;
fail:
  rt_mem_free(chunks);
  rt_mem_free(has);
  rt_jointab_free(t);
  return -1;
}

uint32_t rt_jointab_find(const rt_jointab *t, const int64_t *w) {
  uint32_t e;
  if (t->nkeys == 0) {
    e = t->slots[0];
  } else if (t->direct) {
    uint64_t i = (uint64_t)w[0] - (uint64_t)t->dmin;
    e = i < t->drange ? t->slots[i] : 0;
  } else {
    uint64_t s = rt_join_hash(w, t->nkeys) & t->mask;
    while ((e = t->slots[s]) && !same_key(t, e - 1, w)) s = (s + 1) & t->mask;
  }
  return e ? e - 1 : RT_JOIN_END;
}

int64_t *rt_jointab_gcache(rt_jointab *t) {
  if (t->gcache) return t->gcache;
  t->gcache = rt_mem_alloc(sizeof(int64_t) * ((size_t)t->nrows + 1));
  if (t->gcache) memset(t->gcache, 0xff, sizeof(int64_t) * ((size_t)t->nrows + 1));
  return t->gcache;
}

uint32_t *rt_jointab_memo(rt_jointab *t, int64_t n) {
  if (t->memo) return t->memo;
  t->memo = rt_mem_alloc(sizeof(uint32_t) * ((size_t)n + 1));
  for (int64_t i = 0; t->memo && i <= n; i++) t->memo[i] = RT_JOIN_UNKNOWN;
  return t->memo;
}

void rt_jointab_free(rt_jointab *t) {
  rt_mem_free(t->gcache);
  rt_mem_free(t->memo);
  if (t->keys)
    for (int k = 0; k < t->nkeys; k++) rt_mem_free(t->keys[k]);
  rt_mem_free(t->keys);
  rt_mem_free(t->kinds);
  rt_mem_free(t->next);
  rt_mem_free(t->slots);
  rt_mem_free(t->matched);
  memset(t, 0, sizeof *t);
}
