/*
 * sort.c — ORDER BY: a stable permutation of a rowbuf's rows.
 *
 * Every key is first turned into an unsigned 64-bit "sortable" value whose
 * unsigned order is the key's order: ints flip the sign bit, doubles flip
 * all bits when negative (and -0.0 folds into 0.0), strings become the
 * rank of their text among the column's distinct strings, and DESC
 * complements the value. Then an LSD radix sort (11-bit digits, skipping
 * digits where every row agrees) sorts by the keys from the last to the
 * first: each pass is stable, so earlier keys dominate and ties keep input
 * order. NULLs are placed by a final stable partition per key.
 *
 * Memory: about 28 bytes per row while sorting; time is linear in rows per
 * non-constant digit, which is what makes 10M-row sorts fast.
 */
#define _GNU_SOURCE   /* qsort_r */
#include <stdlib.h>

#include "store.h"
#include "budget.h"
#include "par.h"

#define DIGIT_BITS 11
#define NDIGITS 6     /* 6 * 11 >= 64 */
#define RADIX (1u << DIGIT_BITS)

/* Stable sort of (k, p) pairs by k. tk/tp are scratch of the same size.
 * Returns false when out of memory (order unchanged). */
static bool radix_sort(uint64_t *k, uint32_t *p, uint64_t *tk, uint32_t *tp, size_t n) {
  if (n < 64) {
    /* Insertion sort: stable, and cheaper than histograms for tiny inputs. */
    for (size_t i = 1; i < n; i++) {
      uint64_t kv = k[i];
      uint32_t pv = p[i];
      size_t j = i;
      for (; j > 0 && k[j - 1] > kv; j--) {
        k[j] = k[j - 1];
        p[j] = p[j - 1];
      }
      k[j] = kv;
      p[j] = pv;
    }
    return true;
  }
  size_t *hist = rt_mem_calloc((size_t)NDIGITS * RADIX, sizeof *hist);
  if (!hist) return false;
  for (size_t i = 0; i < n; i++) {
    uint64_t v = k[i];
    for (int d = 0; d < NDIGITS; d++) hist[d * RADIX + ((v >> (d * DIGIT_BITS)) & (RADIX - 1))]++;
  }
  uint64_t *sk = k, *dk = tk;
  uint32_t *sp = p, *dp = tp;
  for (int d = 0; d < NDIGITS; d++) {
    size_t *h = hist + (size_t)d * RADIX;
    int shift = d * DIGIT_BITS;
    /* All rows share this digit: the pass would not move anything. */
    if (h[(sk[0] >> shift) & (RADIX - 1)] == n) continue;
    size_t sum = 0;
    for (unsigned b = 0; b < RADIX; b++) {
      size_t c = h[b];
      h[b] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; i++) {
      size_t at = h[(sk[i] >> shift) & (RADIX - 1)]++;
      dk[at] = sk[i];
      dp[at] = sp[i];
    }
    uint64_t *xk = sk; sk = dk; dk = xk;
    uint32_t *xp = sp; sp = dp; dp = xp;
  }
  if (sk != k) {
    memcpy(k, sk, n * sizeof *k);
    memcpy(p, sp, n * sizeof *p);
  }
  rt_mem_free(hist);
  return true;
}

/* ---- the same sort on several threads ---------------------------------------
 *
 * One stable partition by the most significant digit on which rows
 * differ (histograms and scatter in SORT_CHUNKS fixed chunks of the
 * input, each chunk writing behind the chunks before it in every bucket),
 * then the buckets, cut into about SORT_GROUPS runs of whole buckets,
 * each sorted by radix_sort on its own. A run of whole buckets is already
 * in the order of that digit, so sorting it by the full key keeps it, and
 * every step is stable: the result is radix_sort's, for any number of
 * threads (rt_par_for hands out the fixed pieces). */
#define SORT_CHUNKS 16
#define SORT_GROUPS 64
#define SORT_PAR_MIN (1u << 17)   /* rows below which one thread sorts */

typedef struct sort_par {
  uint64_t *k, *tk;
  uint32_t *p, *tp;
  size_t n;
  size_t *hist;        /* [SORT_CHUNKS][NDIGITS][RADIX] */
  int top;             /* the partitioning digit */
  size_t group[SORT_GROUPS + 1];   /* run boundaries (rows) */
  int ngroups;
  int failed;          /* a run's radix_sort was out of memory */
} sort_par;

static void chunk_range(const sort_par *sp, int64_t c, size_t *lo, size_t *hi) {
  *lo = sp->n * (size_t)c / SORT_CHUNKS;
  *hi = sp->n * (size_t)(c + 1) / SORT_CHUNKS;
}

static void sort_hist_piece(void *ctx, int64_t c) {
  sort_par *sp = ctx;
  size_t lo, hi, *h = sp->hist + (size_t)c * NDIGITS * RADIX;
  chunk_range(sp, c, &lo, &hi);
  for (size_t i = lo; i < hi; i++) {
    uint64_t v = sp->k[i];
    for (int d = 0; d < NDIGITS; d++) h[d * RADIX + ((v >> (d * DIGIT_BITS)) & (RADIX - 1))]++;
  }
}

static void sort_scatter_piece(void *ctx, int64_t c) {
  sort_par *sp = ctx;
  size_t lo, hi, *at = sp->hist + ((size_t)c * NDIGITS + sp->top) * RADIX;   /* offsets by now */
  chunk_range(sp, c, &lo, &hi);
  int shift = sp->top * DIGIT_BITS;
  for (size_t i = lo; i < hi; i++) {
    size_t to = at[(sp->k[i] >> shift) & (RADIX - 1)]++;
    sp->tk[to] = sp->k[i];
    sp->tp[to] = sp->p[i];
  }
}

static void sort_group_piece(void *ctx, int64_t g) {
  sort_par *sp = ctx;
  size_t lo = sp->group[g], len = sp->group[g + 1] - lo;
  /* sorted in tk/tp with k/p's rows as scratch, then back into k/p */
  if (!radix_sort(sp->tk + lo, sp->tp + lo, sp->k + lo, sp->p + lo, len)) {
    __atomic_store_n(&sp->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  memcpy(sp->k + lo, sp->tk + lo, len * sizeof *sp->k);
  memcpy(sp->p + lo, sp->tp + lo, len * sizeof *sp->p);
}

static bool radix_sort_par(uint64_t *k, uint32_t *p, uint64_t *tk, uint32_t *tp, size_t n,
                           const rt_par *par) {
  if (!par || par->threads <= 1 || n < SORT_PAR_MIN) return radix_sort(k, p, tk, tp, n);
  sort_par sp = {.k = k, .tk = tk, .p = p, .tp = tp, .n = n};
  sp.hist = rt_mem_calloc((size_t)SORT_CHUNKS * NDIGITS * RADIX, sizeof *sp.hist);
  if (!sp.hist) return false;
  rt_par_for(par, SORT_CHUNKS, sort_hist_piece, &sp);
  /* the highest digit on which rows differ (none: all equal, done) */
  sp.top = -1;
  for (int d = NDIGITS - 1; d >= 0 && sp.top < 0; d--) {
    unsigned b0 = (unsigned)((k[0] >> (d * DIGIT_BITS)) & (RADIX - 1));
    size_t same = 0;
    for (int c = 0; c < SORT_CHUNKS; c++) same += sp.hist[((size_t)c * NDIGITS + d) * RADIX + b0];
    if (same != n) sp.top = d;
  }
  if (sp.top < 0) {
    rt_mem_free(sp.hist);
    return true;
  }
  /* Offsets: bucket by bucket, chunk by chunk (each chunk's rows after
   * the earlier chunks' in a bucket: stable), written over the top
   * digit's histogram of each chunk. Runs of whole buckets cut at about
   * n / SORT_GROUPS rows. */
  size_t sum = 0, cut = n / SORT_GROUPS + 1;
  sp.group[0] = 0;
  for (unsigned b = 0; b < RADIX; b++) {
    for (int c = 0; c < SORT_CHUNKS; c++) {
      size_t *h = &sp.hist[((size_t)c * NDIGITS + sp.top) * RADIX + b];
      size_t cnt = *h;
      *h = sum;
      sum += cnt;
    }
    if (sum - sp.group[sp.ngroups] >= cut && sp.ngroups < SORT_GROUPS - 1) sp.group[++sp.ngroups] = sum;
  }
  if (sp.group[sp.ngroups] != n) sp.group[++sp.ngroups] = n;
  rt_par_for(par, SORT_CHUNKS, sort_scatter_piece, &sp);
  rt_mem_free(sp.hist);
  rt_par_for(par, sp.ngroups, sort_group_piece, &sp);
  return !sp.failed;
}

static int cmp_str_ids(const void *a, const void *b, void *ctx) {
  return rt_str_cmp(ctx, *(const uint32_t *)a, *(const uint32_t *)b);
}

/* Turns the string ids in k[0..n) into their text ranks, in place. Sorts
 * the ids (radix on the id, carrying positions), ranks the distinct ids by
 * text, and writes each position's rank back. Returns false on OOM. */
static bool rank_strings(uint64_t *k, size_t n, uint64_t *tk, uint32_t *pos, uint32_t *tpos,
                         const rt_strpool *sp) {
  uint64_t *ids = rt_mem_alloc(n * sizeof *ids);
  if (!ids) return false;
  memcpy(ids, k, n * sizeof *ids);
  for (size_t i = 0; i < n; i++) pos[i] = (uint32_t)i;
  if (!radix_sort(ids, pos, tk, tpos, n)) {
    rt_mem_free(ids);
    return false;
  }
  /* Distinct ids, in id order; tpos[j] = index of ids[j]'s distinct id. */
  uint32_t *uniq = rt_mem_alloc(n * sizeof *uniq);
  uint32_t *rank = rt_mem_alloc(n * sizeof *rank);
  if (!uniq || !rank) {
    rt_mem_free(ids);
    rt_mem_free(uniq);
    rt_mem_free(rank);
    return false;
  }
  size_t nu = 0;
  for (size_t j = 0; j < n; j++) {
    if (j == 0 || ids[j] != ids[j - 1]) uniq[nu++] = (uint32_t)ids[j];
    tpos[j] = (uint32_t)(nu - 1);
  }
  /* Sort a copy by text; distinct ids are distinct strings, so any sort
   * gives the one order. rank[index in id order] = text rank. */
  uint32_t *by_text = rt_mem_alloc(nu * sizeof *by_text);
  if (!by_text) {
    rt_mem_free(ids);
    rt_mem_free(uniq);
    rt_mem_free(rank);
    return false;
  }
  memcpy(by_text, uniq, nu * sizeof *by_text);
  qsort_r(by_text, nu, sizeof *by_text, cmp_str_ids, (void *)sp);
  /* Map id → index in uniq by binary search (uniq is ascending by id). */
  for (size_t r = 0; r < nu; r++) {
    size_t lo = 0, hi = nu;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (uniq[mid] < by_text[r]) lo = mid + 1;
      else hi = mid;
    }
    rank[lo] = (uint32_t)r;
  }
  for (size_t j = 0; j < n; j++) k[pos[j]] = rank[tpos[j]];
  rt_mem_free(ids);
  rt_mem_free(uniq);
  rt_mem_free(rank);
  rt_mem_free(by_text);
  return true;
}

/* The sortable values of one key over rows perm[lo..hi): NULLs 0, DESC
 * complemented (strings: their ids, ranked afterwards). */
typedef struct key_fill {
  const rt_rowbuf *b;
  const rt_sortkey *key;
  const uint32_t *perm;
  uint64_t *k;
  size_t n;
  size_t nnull;   /* atomic */
} key_fill;

static void key_fill_range(key_fill *f, size_t lo, size_t hi, bool ranks_later) {
  int c = f->key->col;
  const uint32_t *perm = f->perm;
  uint64_t *k = f->k;
  switch (f->b->types[c]) {
  case RT_F64: {
    const double *d = f->b->data[c];
    for (size_t i = lo; i < hi; i++) k[i] = rt_sortable_f64(d[perm[i]]);
    break;
  }
  case RT_STR: {
    const uint32_t *d = f->b->data[c];
    for (size_t i = lo; i < hi; i++) k[i] = d[perm[i]];
    break;
  }
  default: {
    const int64_t *d = f->b->data[c];
    for (size_t i = lo; i < hi; i++) k[i] = rt_sortable_i64(d[perm[i]]);
    break;
  }
  }
  if (ranks_later) return;
  const uint64_t *valid = f->b->valid[c];
  size_t nnull = 0;
  for (size_t i = lo; i < hi; i++) {
    if (!rt_bit(valid, perm[i])) {
      k[i] = 0;   /* NULLs tie with each other, keeping input order */
      nnull++;
    } else if (f->key->desc) {
      k[i] = ~k[i];
    }
  }
  __atomic_fetch_add(&f->nnull, nnull, __ATOMIC_RELAXED);
}

static void key_fill_piece(void *ctx, int64_t c) {
  key_fill *f = ctx;
  key_fill_range(f, f->n * (size_t)c / SORT_CHUNKS, f->n * (size_t)(c + 1) / SORT_CHUNKS,
                 f->b->types[f->key->col] == RT_STR);
}

uint32_t *rt_sort_perm(const rt_rowbuf *b, int nkeys, const rt_sortkey *keys,
                       const rt_strpool *sp) {
  return rt_sort_perm_par(b, nkeys, keys, sp, NULL);
}

uint32_t *rt_sort_perm_par(const rt_rowbuf *b, int nkeys, const rt_sortkey *keys,
                           const rt_strpool *sp, const rt_par *par) {
  size_t n = (size_t)b->nrows;
  if (n == 0) return NULL;
  uint32_t *perm = rt_mem_alloc(n * sizeof *perm);
  if (!perm) return NULL;
  for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
  if (nkeys == 0) return perm;
  uint64_t *k = rt_mem_alloc(n * sizeof *k);
  uint64_t *tk = rt_mem_alloc(n * sizeof *tk);
  uint32_t *tp = rt_mem_alloc(n * sizeof *tp);
  uint32_t *tp2 = rt_mem_alloc(n * sizeof *tp2);
  if (!k || !tk || !tp || !tp2) goto oom;

  /* Least significant key first; each pass is stable. */
  for (int ki = nkeys - 1; ki >= 0; ki--) {
    const rt_sortkey *key = &keys[ki];
    int c = key->col;
    const uint64_t *valid = b->valid[c];
    key_fill f = {b, key, perm, k, n, 0};
    const rt_par *fp = n >= SORT_PAR_MIN ? par : NULL;
    rt_par_for(fp, SORT_CHUNKS, key_fill_piece, &f);
    if (b->types[c] == RT_STR) {
      /* ranks of the texts, then NULLs and DESC as for the others (the
       * fill wrote ids only) */
      if (!rank_strings(k, n, tk, tp, tp2, sp)) goto oom;
      for (size_t i = 0; i < n; i++) {
        if (!rt_bit(valid, perm[i])) k[i] = 0, f.nnull++;
        else if (key->desc) k[i] = ~k[i];
      }
    }
    size_t nnull = f.nnull;
    if (!radix_sort_par(k, perm, tk, tp, n, par)) goto oom;
    if (nnull) {
      /* Stable partition: NULLs to the front or the back. */
      size_t nv = n - nnull, a = 0, z = 0;
      uint32_t *nulls = tp, *vals = tp2;
      for (size_t i = 0; i < n; i++) {
        if (rt_bit(valid, perm[i])) vals[z++] = perm[i];
        else nulls[a++] = perm[i];
      }
      if (key->nulls_first) {
        memcpy(perm, nulls, nnull * sizeof *perm);
        memcpy(perm + nnull, vals, nv * sizeof *perm);
      } else {
        memcpy(perm, vals, nv * sizeof *perm);
        memcpy(perm + nv, nulls, nnull * sizeof *perm);
      }
    }
  }
  rt_mem_free(k);
  rt_mem_free(tk);
  rt_mem_free(tp);
  rt_mem_free(tp2);
  return perm;
oom:
  rt_mem_free(k);
  rt_mem_free(tk);
  rt_mem_free(tp);
  rt_mem_free(tp2);
  rt_mem_free(perm);
  return NULL;
}
