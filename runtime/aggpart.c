/*
 * aggpart.c — the partitioned merge of AGGREGATE's morsel tables (see
 * aggpart.h for why and the order it keeps).
 *
 * The final order: a group's first appearance (m, g) — morsel m, group g
 * of m's table — sorts lexicographically into the one-table merge's
 * order (it appends a group when its first morsel's merge meets it, and a
 * morsel's groups in table order). rt_aggpart_emit marks the first
 * appearances in one bit array holding the morsels' tables one after
 * another, so a group's place is the number of marks before its own: a
 * prefix count per 64-bit word and a popcount. No sort, no comparison.
 */
#include <stdlib.h>
#include <string.h>

#include "aggmerge.h"
#include "aggpart.h"
#include "budget.h"

bool rt_aggpart_wanted(const rt_aggtab *t, int64_t rows) {
  /* One group per 16 rows or more: the merge's probes are then a large
   * share of the morsel's work (fewer groups merge quickly on one thread,
   * and partitions would only add the final pass). */
  return t->nkeys > 0 && t->ngroups * 16 >= rows;
}

void rt_aggsplit_free(rt_aggsplit *sp) {
  free(sp->idx);
  free(sp->at);
  memset(sp, 0, sizeof *sp);
}

void rt_aggpart_free(rt_aggpart *pt) {
  for (int p = 0; pt->tabs && p < pt->nparts; p++) rt_aggtab_free(&pt->tabs[p]);
  for (int p = 0; pt->first && p < pt->nparts; p++) {
    free(pt->first[p]);
    rt_budget_credit(pt->firstcap[p] * 8);
  }
  free(pt->tabs);
  free(pt->first);
  free(pt->firstcap);
  free(pt->mgroups);
  free(pt->next);
  memset(pt, 0, sizeof *pt);
}

bool rt_aggpart_init(rt_aggpart *pt, const rt_aggtab *like, int threads, int64_t nmorsels) {
  memset(pt, 0, sizeof *pt);
  /* 4 partitions per thread: a thread waiting for a partition's turn
   * finds another one ready */
  int n = 1, bits = 0;
  while (n < 4 * threads && n < 64) n *= 2, bits++;
  pt->shift = 64 - bits;
  pt->nmorsels = nmorsels;
  pt->tabs = calloc((size_t)n, sizeof *pt->tabs);
  pt->first = calloc((size_t)n, sizeof *pt->first);
  pt->firstcap = calloc((size_t)n, sizeof *pt->firstcap);
  pt->next = calloc((size_t)n, sizeof *pt->next);
  pt->mgroups = calloc((size_t)nmorsels + 1, sizeof *pt->mgroups);
  if (!pt->tabs || !pt->first || !pt->firstcap || !pt->next || !pt->mgroups) {
    rt_aggpart_free(pt);
    return false;
  }
  for (int p = 0; p < n; p++) {
    if (!rt_aggtab_init_like(&pt->tabs[p], like)) {   /* (frees its table) */
      pt->nparts = p;
      rt_aggpart_free(pt);
      return false;
    }
  }
  pt->nparts = n;
  return true;
}

static int part_of(const rt_aggpart *pt, uint64_t hash) {
  return pt->shift >= 64 ? 0 : (int)(hash >> pt->shift);
}

bool rt_aggpart_split(rt_aggpart *pt, const rt_aggtab *src, int64_t m, rt_aggsplit *sp) {
  int64_t n = src->ngroups;
  pt->mgroups[m] = n;
  if (!sp->at && !(sp->at = calloc((size_t)pt->nparts + 1, sizeof *sp->at))) return false;
  if (n > sp->cap) {
    uint32_t *d = realloc(sp->idx, (size_t)n * sizeof *d);
    if (!d) return false;
    sp->idx = d;
    sp->cap = n;
  }
  /* a counting sort by partition, stable: each partition's groups stay in
   * the table's order */
  memset(sp->at, 0, ((size_t)pt->nparts + 1) * sizeof *sp->at);
  for (int64_t g = 0; g < n; g++) sp->at[part_of(pt, src->hashes[g]) + 1]++;
  for (int p = 0; p < pt->nparts; p++) sp->at[p + 1] += sp->at[p];
  int64_t fill[64];
  memcpy(fill, sp->at, (size_t)pt->nparts * sizeof *fill);
  for (int64_t g = 0; g < n; g++) sp->idx[fill[part_of(pt, src->hashes[g])]++] = (uint32_t)g;
  return true;
}

/* Room in partition p's first appearances for `need` groups. */
static bool first_room(rt_aggpart *pt, int p, int64_t need) {
  if (need <= pt->firstcap[p]) return true;
  int64_t cap = pt->firstcap[p] ? pt->firstcap[p] * 2 : 1024;
  while (cap < need) cap *= 2;
  if (!rt_budget_charge((cap - pt->firstcap[p]) * 8)) return false;
  uint64_t *d = realloc(pt->first[p], (size_t)cap * sizeof *d);
  if (!d) {
    rt_budget_credit((cap - pt->firstcap[p]) * 8);
    return false;
  }
  pt->first[p] = d;
  pt->firstcap[p] = cap;
  return true;
}

int rt_aggpart_merge(rt_aggpart *pt, int p, const rt_aggtab *src, const rt_aggsplit *sp, int64_t m) {
  rt_aggtab *t = &pt->tabs[p];
  int64_t n = sp->at[p + 1] - sp->at[p];
  if (!first_room(pt, p, t->ngroups + n)) return RT_AGGX_NOMEM;
  return rt_aggtab_merge_groups(t, src, sp->idx + sp->at[p], n, pt->first[p], (uint64_t)m << 32);
}


int64_t rt_aggpart_groups(const rt_aggpart *pt) {
  int64_t total = 0;
  for (int p = 0; p < pt->nparts; p++) total += pt->tabs[p].ngroups;
  return total;
}

/* Output rows per piece of the parallel copy: a multiple of 64, so no two
 * pieces share a validity word. */
#define EMIT_PIECE 65536

typedef struct emit_job {
  const rt_aggpart *pt;
  const int64_t *base;   /* per morsel: its first bit in marks */
  uint64_t *marks;
  const int64_t *before; /* per word of marks: the marks before it */
  uint64_t *from;        /* per output row: partition << 32 | group */
  rt_rowbuf *out;
  int64_t total;
} emit_job;

static uint64_t first_bit(const emit_job *ej, uint64_t f) {
  return (uint64_t)ej->base[f >> 32] * 64 + (uint32_t)f;
}

/* Partition p's first appearances marked (partitions share words). */
static void mark_piece(void *ctx, int64_t p) {
  emit_job *ej = ctx;
  const uint64_t *first = ej->pt->first[p];
  for (int64_t j = 0; j < ej->pt->tabs[p].ngroups; j++) {
    uint64_t bit = first_bit(ej, first[j]);
    __atomic_fetch_or(&ej->marks[bit >> 6], 1ull << (bit & 63), __ATOMIC_RELAXED);
  }
}

/* Partition p's groups at their places: the count of marks before their own. */
static void place_piece(void *ctx, int64_t p) {
  emit_job *ej = ctx;
  const uint64_t *first = ej->pt->first[p];
  for (int64_t j = 0; j < ej->pt->tabs[p].ngroups; j++) {
    uint64_t bit = first_bit(ej, first[j]);
    int64_t r = ej->before[bit >> 6] + __builtin_popcountll(ej->marks[bit >> 6] & ((1ull << (bit & 63)) - 1));
    ej->from[r] = (uint64_t)p << 32 | (uint64_t)j;
  }
}

static void copy_piece(void *ctx, int64_t i) {
  emit_job *ej = ctx;
  int64_t at = i * EMIT_PIECE, n = ej->total - at < EMIT_PIECE ? ej->total - at : EMIT_PIECE;
  rt_aggtab_emit_gather(ej->pt->tabs, ej->from + at, n, ej->out, at);
}

int rt_aggpart_emit(const rt_aggpart *pt, rt_rowbuf *out, const rt_par *par) {
  int64_t total = rt_aggpart_groups(pt), words = 0;
  if (total == 0) return 0;
  int64_t *base = malloc(((size_t)pt->nmorsels + 1) * sizeof *base);
  for (int64_t m = 0; base && m < pt->nmorsels; m++) {
    base[m] = words;
    words += (pt->mgroups[m] + 63) / 64;
  }
  uint64_t *marks = calloc((size_t)words + 1, sizeof *marks);
  int64_t *before = malloc(((size_t)words + 1) * sizeof *before);
  uint64_t *from = malloc((size_t)total * sizeof *from);
  int rc = RT_AGGX_NOMEM;
  if (!base || !marks || !before || !from || out->nrows != 0 || !rt_rowbuf_reserve_raw(out, total)) goto out;
  emit_job ej = {.pt = pt, .base = base, .marks = marks, .before = before, .from = from, .out = out, .total = total};
  rt_par_for(par, pt->nparts, mark_piece, &ej);
  for (int64_t w = 0, c = 0; w < words; w++) {
    before[w] = c;
    c += __builtin_popcountll(marks[w]);
  }
  rt_par_for(par, pt->nparts, place_piece, &ej);
  rt_par_for(par, (total + EMIT_PIECE - 1) / EMIT_PIECE, copy_piece, &ej);
  out->nrows = total;
  rc = 0;
out:
  free(base);
  free(marks);
  free(before);
  free(from);
  return rc;
}
