/*
 * hindex.c — per-column hash indexes of finalized tables (tabindex.h),
 * and the list of a table's indexes.
 *
 * Built in two passes over the column: the first numbers each distinct
 * value (an open-addressed table of group numbers, load <= 1/2) and counts
 * its rows, the second places every row id at its group's next slot, so a
 * group's rows come out ascending with no sort. Memory: 4 bytes per row
 * for the grouped row ids, plus 12 per distinct value and the slots; a
 * 4-byte group number per row only while building.
 */
#include <math.h>
#include <stdlib.h>

#include "store.h"
#include "tabindex.h"

/* What a table holds: one hash index slot per column, the sorted indexes. */
typedef struct rt_tabindexes {
  int ncols;
  rt_hindex **hash;      /* ncols entries, NULL until built */
  int nsorted;
  rt_sindex **sorted;
} rt_tabindexes;

/* ---- the table's list ------------------------------------------------------ */

static rt_tabindexes *indexes_of(rt_table *t) {
  if (t->indexes) return t->indexes;
  rt_tabindexes *x = calloc(1, sizeof *x);
  if (!x) return NULL;
  x->ncols = t->ncols;
  x->hash = calloc((size_t)(t->ncols > 0 ? t->ncols : 1), sizeof *x->hash);
  if (!x->hash) {
    free(x);
    return NULL;
  }
  t->indexes = x;
  return x;
}

static void hindex_free(rt_hindex *ix) {
  if (!ix) return;
  free(ix->rows);
  free(ix->start);
  free(ix->keys);
  free(ix->slots);
  free(ix);
}

/* here, with the list that owns it, so sindex.c depends on this file and
 * not the other way round */
void rt_sindex_free(rt_sindex *s) {
  if (!s) return;
  free(s->name);
  free(s->cols);
  free(s->perm);
  free(s);
}

void rt_table_indexes_free(rt_table *t) {
  rt_tabindexes *x = t->indexes;
  if (!x) return;
  for (int c = 0; c < x->ncols; c++) hindex_free(x->hash[c]);
  for (int i = 0; i < x->nsorted; i++) rt_sindex_free(x->sorted[i]);
  free(x->hash);
  free(x->sorted);
  free(x);
  t->indexes = NULL;
}

int rt_tabindexes_add_sorted(rt_table *t, rt_sindex *s) {
  rt_tabindexes *x = indexes_of(t);
  if (!x) return 0;
  rt_sindex **grown = realloc(x->sorted, sizeof *grown * (size_t)(x->nsorted + 1));
  if (!grown) return 0;
  x->sorted = grown;
  x->sorted[x->nsorted++] = s;
  return 1;
}

int rt_table_sindex_count(const rt_table *t) { return t->indexes ? t->indexes->nsorted : 0; }

const rt_sindex *rt_table_sindex_at(const rt_table *t, int i) {
  return t->indexes && i >= 0 && i < t->indexes->nsorted ? t->indexes->sorted[i] : NULL;
}

const rt_sindex *rt_table_find_sindex(const rt_table *t, const char *name) {
  for (int i = 0; i < rt_table_sindex_count(t); i++)
    if (rt_strieq(t->indexes->sorted[i]->name, name)) return t->indexes->sorted[i];
  return NULL;
}

int rt_table_drop_sindex(rt_table *t, const char *name) {
  rt_tabindexes *x = t->indexes;
  for (int i = 0; x && i < x->nsorted; i++) {
    if (!rt_strieq(x->sorted[i]->name, name)) continue;
    rt_sindex_free(x->sorted[i]);
    memmove(&x->sorted[i], &x->sorted[i + 1], sizeof *x->sorted * (size_t)(x->nsorted - i - 1));
    x->nsorted--;
    return 1;
  }
  return 0;
}

/* ---- keys ------------------------------------------------------------------ */

uint64_t rt_hkey_row(const rt_table *t, int c, int64_t r) {
  const rt_column *col = &t->cols[c];
  switch (col->type) {
  case RT_ID: return rt_hkey_i64(r);
  case RT_U32: return rt_hkey_i64(((const uint32_t *)col->data)[r]);
  case RT_I32: return rt_hkey_i64(((const int32_t *)col->data)[r]);
  case RT_F64: return rt_hkey_f64(((const double *)col->data)[r]);
  case RT_STR: return rt_hkey_str(((const uint32_t *)col->data)[r]);
  default: return rt_hkey_i64(((const int64_t *)col->data)[r]);
  }
}

/* A row that no equality can match: NULL, or a NaN (SQLite reads NaN as
 * NULL). */
static int row_unmatchable(const rt_column *col, int64_t r) {
  if (col->valid && !rt_bit(col->valid, (uint32_t)r)) return 1;
  return col->type == RT_F64 && isnan(((const double *)col->data)[r]);
}

/* ---- lookups --------------------------------------------------------------- */

uint32_t rt_hindex_group(const rt_hindex *ix, uint64_t key) {
  uint32_t i = (uint32_t)rt_hash_i64(key) & ix->mask;
  for (;;) {
    uint32_t g1 = ix->slots[i];
    if (!g1) return UINT32_MAX;
    if (ix->keys[g1 - 1] == key) return g1 - 1;
    i = (i + 1) & ix->mask;
  }
}

uint32_t rt_hindex_find(const rt_hindex *ix, uint64_t key, const uint32_t **rows) {
  uint32_t g = rt_hindex_group(ix, key);
  if (g == UINT32_MAX) {
    *rows = NULL;
    return 0;
  }
  *rows = ix->rows + ix->start[g];
  return ix->start[g + 1] - ix->start[g];
}

/* ---- building -------------------------------------------------------------- */

/* Group of key, inserting a new one; UINT32_MAX when memory runs out.
 * counts[] and keys[] grow with the groups (capacity *cap). */
static uint32_t group_insert(rt_hindex *ix, uint64_t key, uint32_t **counts, uint32_t *cap) {
  uint32_t i = (uint32_t)rt_hash_i64(key) & ix->mask;
  for (;;) {
    uint32_t g1 = ix->slots[i];
    if (!g1) break;
    if (ix->keys[g1 - 1] == key) return g1 - 1;
    i = (i + 1) & ix->mask;
  }
  uint32_t g = ix->ngroups;
  if (g == *cap) {
    uint32_t ncap = *cap * 2;
    uint64_t *k = realloc(ix->keys, sizeof *k * ncap);
    if (k) ix->keys = k;
    uint32_t *n = realloc(*counts, sizeof *n * ncap);
    if (n) *counts = n;
    if (!k || !n) return UINT32_MAX;
    *cap = ncap;
  }
  ix->keys[g] = key;
  (*counts)[g] = 0;
  ix->ngroups++;
  if ((uint64_t)ix->ngroups * 2 > (uint64_t)ix->mask + 1) {
    uint32_t nmask = ix->mask * 2 + 1;
    uint32_t *ns = calloc((size_t)nmask + 1, sizeof *ns);
    if (!ns) return UINT32_MAX;
    for (uint32_t h = 0; h < ix->ngroups; h++) {
      uint32_t j = (uint32_t)rt_hash_i64(ix->keys[h]) & nmask;
      while (ns[j]) j = (j + 1) & nmask;
      ns[j] = h + 1;
    }
    free(ix->slots);
    ix->slots = ns;
    ix->mask = nmask;
  } else {
    ix->slots[i] = g + 1;
  }
  return g;
}

static rt_hindex *hindex_build(const rt_table *t, int c) {
  const rt_column *col = &t->cols[c];
  int64_t n = t->nrows;
  rt_hindex *ix = calloc(1, sizeof *ix);
  uint32_t cap = 1024;
  uint32_t *counts = malloc(sizeof *counts * cap);
  uint32_t *gid = malloc(sizeof *gid * (size_t)(n ? n : 1));
  if (ix) {
    ix->col = c;
    ix->mask = 2047;
    ix->slots = calloc((size_t)ix->mask + 1, sizeof *ix->slots);
    ix->keys = malloc(sizeof *ix->keys * cap);
  }
  if (!ix || !counts || !gid || !ix->slots || !ix->keys) goto fail;
  for (int64_t r = 0; r < n; r++) {
    if (row_unmatchable(col, r)) {
      gid[r] = UINT32_MAX;
      continue;
    }
    uint32_t g = group_insert(ix, rt_hkey_row(t, c, r), &counts, &cap);
    if (g == UINT32_MAX) goto fail;
    gid[r] = g;
    counts[g]++;
    ix->nindexed++;
  }
  ix->start = malloc(sizeof *ix->start * ((size_t)ix->ngroups + 1));
  ix->rows = malloc(sizeof *ix->rows * (size_t)(ix->nindexed ? ix->nindexed : 1));
  if (!ix->start || !ix->rows) goto fail;
  uint32_t at = 0;
  for (uint32_t g = 0; g < ix->ngroups; g++) {
    ix->start[g] = at;
    at += counts[g];
    counts[g] = ix->start[g];   /* from now: the group's next free slot */
  }
  ix->start[ix->ngroups] = at;
  for (int64_t r = 0; r < n; r++)
    if (gid[r] != UINT32_MAX) ix->rows[counts[gid[r]]++] = (uint32_t)r;
  free(gid);
  free(counts);
  return ix;
fail:
  free(gid);
  free(counts);
  hindex_free(ix);
  return NULL;
}

const rt_hindex *rt_table_hindex_peek(const rt_table *t, int c) {
  if (!t->indexes || c < 0 || c >= t->indexes->ncols) return NULL;
  return t->indexes->hash[c];
}

const rt_hindex *rt_table_hindex(rt_table *t, int c) {
  if (c < 0 || c >= t->ncols || t->cols[c].type == RT_ID) return NULL;
  rt_tabindexes *x = indexes_of(t);
  if (!x) return NULL;
  if (!x->hash[c]) x->hash[c] = hindex_build(t, c);
  return x->hash[c];
}
