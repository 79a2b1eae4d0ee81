/*
 * vtab_plan.c — planning and row selection of the pipejit virtual tables
 * (vtab_plan.h says which access paths there are and why constraints are
 * never omitted).
 *
 * idxNum layout: the key in the low 16 bits (method ORDER: 0 = none,
 * 1 = rowid, c + 2 = column c; HASH: c + 2; SINDEX: the index's slot in
 * the table), the method in bits 16-17, then flags; a PERFETTO INDEX plan
 * keeps its equality count in bits 26-28 and names its index in idxStr
 * ("perfetto index NAME (…)"), so a scan checks the slot still holds that
 * index. argv holds, in order: the equality values, the lower bound, the
 * upper bound. idxStr also says in words what the plan does, which is what
 * EXPLAIN QUERY PLAN shows.
 */
#include <math.h>
#include <stdlib.h>

#include "runtime/tabindex.h"
#include "vtab_plan.h"

enum {
  KEY_MASK = 0xffff,
  M_SHIFT = 16,
  M_FULL = 0,
  M_ORDER = 1,
  M_HASH = 2,
  M_SINDEX = 3,
  F_EQ = 1 << 18,
  F_LO = 1 << 19,
  F_LO_STRICT = 1 << 20,
  F_HI = 1 << 21,
  F_HI_STRICT = 1 << 22,
  F_DESC = 1 << 23,
  F_IN = 1 << 24,
  NEQ_SHIFT = 26,
  NEQ_MAX = 7,
};

static int method_of(int idx) { return (idx >> M_SHIFT) & 3; }

/* ---- planning -------------------------------------------------------------- */

static rt_type col_type(const vt_shape *sh, int c) { return c < 0 ? RT_ID : sh->types[c]; }

/* Row order is non-decreasing in column c (-1 = rowid). */
static int in_row_order(const vt_shape *sh, const rt_table *t, int c) {
  if (c < 0 || col_type(sh, c) == RT_ID) return 1;
  return t && c < t->ncols && t->cols[c].sorted;
}

static int is_unique(const vt_shape *sh, int c) { return col_type(sh, c) == RT_ID; }

/* A constraint a search on column c may use: strings only under BINARY,
 * the order they are stored and hashed in. */
static int usable_on(const vt_shape *sh, sqlite3_index_info *info, int i, int c) {
  const struct sqlite3_index_constraint *k = &info->aConstraint[i];
  if (!k->usable || k->iColumn != c) return 0;
  if (c >= 0 && col_type(sh, c) == RT_STR &&
      sqlite3_stricmp(sqlite3_vtab_collation(info, i), "BINARY") != 0)
    return 0;
  return 1;
}

/* The usable `=`, lower and upper constraints on column c (-1 if none). */
static void find_constraints(const vt_shape *sh, sqlite3_index_info *info, int c, int *eq,
                             int *lo, int *hi) {
  *eq = *lo = *hi = -1;
  for (int i = 0; i < info->nConstraint; i++) {
    if (!usable_on(sh, info, i, c)) continue;
    switch (info->aConstraint[i].op) {
    case SQLITE_INDEX_CONSTRAINT_EQ: if (*eq < 0) *eq = i; break;
    case SQLITE_INDEX_CONSTRAINT_GT:
    case SQLITE_INDEX_CONSTRAINT_GE: if (*lo < 0) *lo = i; break;
    case SQLITE_INDEX_CONSTRAINT_LT:
    case SQLITE_INDEX_CONSTRAINT_LE: if (*hi < 0) *hi = i; break;
    default: break;
    }
  }
}

/* Rows an `=` on column c finds: exact on average once its hash index
 * exists; before, a guess that makes an index lookup look like what it
 * nearly always is in a trace (a key, a parent, a track: a few rows), so
 * SQLite plans joins as index nested loops rather than scans. */
static double eq_rows(const vt_shape *sh, const rt_table *t, int c, double n) {
  if (is_unique(sh, c)) return 1;
  const rt_hindex *ix = t && c >= 0 && c < t->ncols ? rt_table_hindex_peek(t, c) : NULL;
  if (ix && ix->ngroups) return fmax(1, (double)ix->nindexed / ix->ngroups);
  return fmin(n, 10);
}

typedef struct plan {
  int method, key;          /* key: column (ORDER, HASH) or index slot */
  int eq, lo, hi;           /* constraint numbers, -1 = none */
  int sidx_eq[NEQ_MAX];     /* SINDEX: the `=` constraint of each prefix column */
  int neq;
  double rows, cost;
} plan;

static void consider(plan *best, const plan *p) {
  if (p->cost < best->cost) *best = *p;
}

/* A bisection: a few comparisons per halving, cheap next to what SQLite
 * does for each row it reads (so a narrower search beats a hash lookup
 * that returns more rows). */
static double log_n(double n) { return 1 + log2(n + 1) / 10; }

/* Paths on one column: its row order, or its hash index. */
static void plan_column(const vt_shape *sh, const rt_table *t, sqlite3_index_info *info, int c,
                        double n, plan *best) {
  plan p = {.key = c, .eq = -1, .lo = -1, .hi = -1};
  find_constraints(sh, info, c, &p.eq, &p.lo, &p.hi);
  if (in_row_order(sh, t, c)) {
    p.method = M_ORDER;
    if (p.eq >= 0) {
      p.lo = p.hi = -1;
      p.rows = eq_rows(sh, t, c, n);
      p.cost = is_unique(sh, c) ? 1 : log_n(n) + p.rows;
    } else if (p.lo >= 0 || p.hi >= 0) {
      p.rows = fmax(1, p.lo >= 0 && p.hi >= 0 ? n / 16 : n / 4);
      p.cost = log_n(n) + p.rows;
    } else {
      return;
    }
  } else if (p.eq >= 0) {
    p.method = M_HASH;
    p.lo = p.hi = -1;
    p.rows = eq_rows(sh, t, c, n);
    p.cost = 1 + p.rows;
  } else {
    return;
  }
  consider(best, &p);
}

/* A PERFETTO INDEX: `=` on the longest prefix of its columns, then a range
 * on the next. */
static void plan_sindex(const vt_shape *sh, const rt_table *t, sqlite3_index_info *info,
                        int slot, double n, plan *best) {
  const rt_sindex *s = rt_table_sindex_at(t, slot);
  plan p = {.method = M_SINDEX, .key = slot, .eq = -1, .lo = -1, .hi = -1};
  double rows = n;
  while (p.neq < s->ncols && p.neq < NEQ_MAX) {
    int eq, lo, hi;
    find_constraints(sh, info, s->cols[p.neq], &eq, &lo, &hi);
    if (eq < 0) break;
    p.sidx_eq[p.neq++] = eq;
    rows = p.neq == 1 ? eq_rows(sh, t, s->cols[0], n) : rows / 10;
  }
  if (p.neq < s->ncols) {
    int eq;
    find_constraints(sh, info, s->cols[p.neq], &eq, &p.lo, &p.hi);
    if (p.lo >= 0 || p.hi >= 0) rows = rows / (p.lo >= 0 && p.hi >= 0 ? 16 : 4);
  }
  if (p.neq == 0 && p.lo < 0 && p.hi < 0) return;
  p.rows = fmax(1, rows);
  p.cost = log_n(n) + p.rows + 0.1;   /* a column's own order or hash wins a tie */
  consider(best, &p);
}

static const char *col_name_for(const vt_shape *sh, int c) {
  return c < 0 ? "rowid" : c < sh->ncols && sh->names ? sh->names[c] : "?";
}

int vt_best_index(const vt_shape *sh, rt_table *t, double est_rows, sqlite3_index_info *info) {
  double n = t ? (double)t->nrows : est_rows;
  if (n < 1) n = 1;

  /* Hidden arguments: each must be passed, as `=`, and usable. */
  int argn = 0, missing = 0;
  for (int k = 0; k < sh->nargs; k++) {
    int slot = -1;
    for (int i = 0; i < info->nConstraint; i++) {
      const struct sqlite3_index_constraint *ct = &info->aConstraint[i];
      if (ct->iColumn != sh->ncols + k || ct->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
      if (!ct->usable) return SQLITE_CONSTRAINT;   /* another plan supplies it */
      slot = i;
      break;
    }
    if (slot < 0) {
      missing = 1;
      continue;
    }
    info->aConstraintUsage[slot].argvIndex = ++argn;
    info->aConstraintUsage[slot].omit = 1;
  }
  if (missing) {
    info->idxNum = VT_MISSING_ARGS;
    info->estimatedCost = 1e12;
    return SQLITE_OK;
  }

  plan best = {.method = M_FULL, .eq = -1, .lo = -1, .hi = -1, .rows = n, .cost = n + 1};
  for (int c = -1; c < sh->ncols; c++) plan_column(sh, t, info, c, n, &best);
  for (int s = 0; t && s < rt_table_sindex_count(t); s++) plan_sindex(sh, t, info, s, n, &best);

  int idx = best.method << M_SHIFT;
  sqlite3_str *desc = sqlite3_str_new(NULL);
  if (best.method == M_FULL) {
    sqlite3_str_appendall(desc, "full scan");
  } else if (best.method == M_SINDEX) {
    const rt_sindex *s = rt_table_sindex_at(t, best.key);
    idx |= best.key | (best.neq << NEQ_SHIFT);
    sqlite3_str_appendf(desc, "perfetto index %s (", s->name);
    for (int i = 0; i < best.neq; i++) {
      info->aConstraintUsage[best.sidx_eq[i]].argvIndex = ++argn;
      sqlite3_str_appendf(desc, "%s%s=", i ? " " : "", col_name_for(sh, s->cols[i]));
    }
    if (best.lo >= 0 || best.hi >= 0)
      sqlite3_str_appendf(desc, "%s%s range", best.neq ? " " : "", col_name_for(sh, s->cols[best.neq]));
    sqlite3_str_appendall(desc, ")");
  } else {
    idx |= best.key + 2;
    sqlite3_str_appendf(desc, "%s %s %s", best.method == M_HASH ? "hash" : "rows",
                        best.eq >= 0 ? "eq" : "range", col_name_for(sh, best.key));
  }
  if (best.eq >= 0) {
    idx |= F_EQ;
    info->aConstraintUsage[best.eq].argvIndex = ++argn;
    /* `col IN (…)`: every value at once, into one scan's row list. */
    if (sqlite3_vtab_in(info, best.eq, -1)) {
      sqlite3_vtab_in(info, best.eq, 1);
      idx |= F_IN;
      best.rows *= 4;
      sqlite3_str_appendall(desc, " in");
    }
  }
  if (best.lo >= 0) {
    idx |= F_LO;
    if (info->aConstraint[best.lo].op == SQLITE_INDEX_CONSTRAINT_GT) idx |= F_LO_STRICT;
    info->aConstraintUsage[best.lo].argvIndex = ++argn;
  }
  if (best.hi >= 0) {
    idx |= F_HI;
    if (info->aConstraint[best.hi].op == SQLITE_INDEX_CONSTRAINT_LT) idx |= F_HI_STRICT;
    info->aConstraintUsage[best.hi].argvIndex = ++argn;
  }

  /* ORDER BY: the rows of a full scan, a row-order search and a hash
   * lookup come in row order, which satisfies one ascending or descending
   * key in row order, or any list whose first key is unique. Strings are
   * left to SQLite, since an ORDER BY's collation is not visible here. An
   * IN list's union and an index's permutation are in another order. */
  if (info->nOrderBy > 0 && !(idx & F_IN) && best.method != M_SINDEX) {
    int c = info->aOrderBy[0].iColumn;
    int ok = c < sh->ncols && in_row_order(sh, t, c) && col_type(sh, c) != RT_STR &&
             (info->nOrderBy == 1 || is_unique(sh, c));
    if (ok) {
      info->orderByConsumed = 1;
      if (info->aOrderBy[0].desc) idx |= F_DESC;
    }
  }
  if (best.method == M_ORDER && best.eq >= 0 && is_unique(sh, best.key) && !(idx & F_IN))
    info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;

  info->idxNum = idx;
  info->idxStr = sqlite3_str_finish(desc);
  info->needToFreeIdxStr = 1;
  info->estimatedRows = (sqlite3_int64)fmax(1, best.rows);
  info->estimatedCost = best.cost;
  return SQLITE_OK;
}

/* ---- keys ------------------------------------------------------------------ */

static void key_from(sqlite3_value *val, rt_ikey *k, int *blob) {
  memset(k, 0, sizeof *k);
  *blob = 0;
  switch (sqlite3_value_type(val)) {
  case SQLITE_INTEGER: k->kind = RT_IKEY_INT; k->i = sqlite3_value_int64(val); break;
  case SQLITE_FLOAT: k->kind = RT_IKEY_REAL; k->d = sqlite3_value_double(val); break;
  case SQLITE_TEXT:
    k->kind = RT_IKEY_TEXT;
    k->s = (const char *)sqlite3_value_text(val);
    k->len = (size_t)sqlite3_value_bytes(val);
    if (!k->s) k->s = "";
    break;
  case SQLITE_BLOB: *blob = 1; break;
  default: k->kind = RT_IKEY_NULL; break;
  }
}

/* Whether a key can bound column c (-1 = rowid) by search at all. */
static int key_fits(const rt_table *t, int c, const rt_ikey *k) {
  if (c >= 0 && t->cols[c].type == RT_STR) return k->kind == RT_IKEY_TEXT;
  if (k->kind == RT_IKEY_REAL) return !isnan(k->d);
  return k->kind == RT_IKEY_INT;
}

/* A real that is a whole int64 (3.0 → 3); 0 for 3.5, 1e300, NaN. */
static int real_to_int(double d, int64_t *out) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != floor(d)) return 0;
  *out = (int64_t)d;
  return 1;
}

enum { HK_KEY, HK_NONE, HK_ANY };

/* The hash key of a value for column c: HK_KEY (in *key), HK_NONE (no row
 * can equal it) or HK_ANY (cannot tell: read everything). Text against a
 * number column converts as SQLite's numeric affinity would; a number
 * against a string column is left to SQLite, since whether the number
 * becomes text or the column's text a number depends on where the number
 * came from. */
static int hash_key(const rt_table *t, int c, const rt_strpool *sp, sqlite3_value *val,
                    uint64_t *key) {
  rt_type ct = t->cols[c].type;
  int vt = sqlite3_value_type(val);
  if (vt == SQLITE_NULL) return HK_NONE;
  if (vt == SQLITE_BLOB) return HK_ANY;
  if (ct == RT_STR) {
    if (vt != SQLITE_TEXT) return HK_ANY;
    const char *s = (const char *)sqlite3_value_text(val);
    uint32_t id = rt_str_find(sp, s ? s : "", (size_t)sqlite3_value_bytes(val));
    if (id == RT_STR_FAILED) return HK_NONE;
    *key = rt_hkey_str(id);
    return HK_KEY;
  }
  sqlite3_value *num = NULL;
  if (vt == SQLITE_TEXT) {
    num = sqlite3_value_dup(val);
    if (!num) return HK_ANY;
    vt = sqlite3_value_numeric_type(num);
    val = num;
  }
  int rc = HK_NONE;
  if (vt == SQLITE_INTEGER) {
    int64_t i = sqlite3_value_int64(val);
    *key = ct == RT_F64 ? rt_hkey_f64((double)i) : rt_hkey_i64(i);
    rc = HK_KEY;
  } else if (vt == SQLITE_FLOAT) {
    double d = sqlite3_value_double(val);
    int64_t i;
    if (ct == RT_F64 && !isnan(d)) *key = rt_hkey_f64(d), rc = HK_KEY;
    else if (ct != RT_F64 && real_to_int(d, &i)) *key = rt_hkey_i64(i), rc = HK_KEY;
  }
  sqlite3_value_free(num);
  return rc;
}

/* ---- searching --------------------------------------------------------------- */

/* Positions [lo, hi) of `rows` (NULL: the row numbers) are ordered by
 * column c with the keys before it equal. First position whose value is
 * > key (strict) or >= key. */
static int64_t search(const rt_table *t, int c, const uint32_t *rows, const rt_ikey *k,
                      int strict, int64_t lo, int64_t hi, const rt_strpool *sp) {
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    int d = rt_sindex_cmp_key(t, c, rows ? rows[mid] : mid, k, sp);
    if (d < 0 || (strict && d == 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* For the id column (value = row index): the first row index whose value
 * is > key (gt) or >= key, clipped to [0, n]. Exact for reals too, since
 * r >= d ⇔ r >= ceil(d) and r > d ⇔ r >= floor(d) + 1. */
static int64_t id_bound(const rt_ikey *k, int gt, int64_t n) {
  if (k->kind == RT_IKEY_INT) {
    if (k->i < 0) return 0;
    if (k->i >= n) return n;
    return k->i + (gt ? 1 : 0);
  }
  double x = gt ? floor(k->d) + 1 : ceil(k->d);
  if (x <= 0) return 0;
  if (x >= (double)n) return n;
  return (int64_t)x;
}

/* Narrows [*lo, *hi) by `col >= key` (or >) when lower, else `col <= key`
 * (or <). A NULL key matches nothing; a key that cannot bound by search is
 * left to SQLite. Mixed integer/real comparisons go through double, so
 * such bounds are made inclusive: rounding can only widen the range. */
static void narrow(const rt_table *t, int c, const uint32_t *rows, sqlite3_value *val,
                   int lower, int strict, int64_t *lo, int64_t *hi, const rt_strpool *sp) {
  rt_ikey k;
  int blob;
  key_from(val, &k, &blob);
  if (blob) return;
  if (k.kind == RT_IKEY_NULL) {
    *hi = *lo;
    return;
  }
  if (!key_fits(t, c, &k)) return;
  int id_like = !rows && (c < 0 || t->cols[c].type == RT_ID);
  int exact = k.kind == RT_IKEY_TEXT ||
              k.kind == (c >= 0 && t->cols[c].type == RT_F64 ? RT_IKEY_REAL : RT_IKEY_INT);
  if (id_like) {
    /* lower: first row > key (or >=); upper: rows < key end at the first
     * row >= key, rows <= key at the first row > key. */
    int64_t b = id_bound(&k, lower ? strict : !strict, t->nrows);
    if (lower && b > *lo) *lo = b;
    if (!lower && b < *hi) *hi = b;
  } else {
    if (lower) *lo = search(t, c, rows, &k, exact && strict, *lo, *hi, sp);
    else *hi = search(t, c, rows, &k, !(exact && strict), *lo, *hi, sp);
  }
  if (*hi < *lo) *hi = *lo;
}

/* ---- row lists ----------------------------------------------------------------- */

typedef struct rowlist {
  uint32_t *v;
  size_t n, cap;
} rowlist;

static int rowlist_add(rowlist *l, const uint32_t *rows, int64_t lo, int64_t hi) {
  size_t add = (size_t)(hi - lo);
  if (l->n + add > l->cap) {
    size_t cap = (l->n + add) * 2 + 16;
    uint32_t *v = realloc(l->v, sizeof *v * cap);
    if (!v) return 0;
    l->v = v;
    l->cap = cap;
  }
  for (int64_t p = lo; p < hi; p++) l->v[l->n++] = rows ? rows[p] : (uint32_t)p;
  return 1;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* Sorts and drops repeats (an IN list may name one key twice, or two
 * spellings of it: 1 and 1.0). */
static void rowlist_finish(rowlist *l) {
  if (l->n > 1) qsort(l->v, l->n, sizeof *l->v, cmp_u32);
  size_t k = 0;
  for (size_t i = 0; i < l->n; i++)
    if (k == 0 || l->v[k - 1] != l->v[i]) l->v[k++] = l->v[i];
  l->n = k;
}

/* The rows of one `=` value on column c: by id, row order or hash; *all
 * when the value cannot narrow the scan. */
static int eq_rows_of(rt_table *t, int c, int method, const rt_strpool *sp, sqlite3_value *val,
                      const uint32_t **rows, int64_t *lo, int64_t *hi, int *all) {
  *all = 0;
  *rows = NULL;
  *lo = 0;
  *hi = t->nrows;
  if (method == M_ORDER) {
    narrow(t, c, NULL, val, 1, 0, lo, hi, sp);
    narrow(t, c, NULL, val, 0, 0, lo, hi, sp);
    *all = *lo == 0 && *hi == t->nrows;
    return 1;
  }
  uint64_t key;
  switch (hash_key(t, c, sp, val, &key)) {
  case HK_NONE: *hi = 0; return 1;
  case HK_ANY: *all = 1; return 1;
  default: break;
  }
  const rt_hindex *ix = rt_table_hindex(t, c);
  if (!ix) return 0;
  *lo = 0;
  *hi = rt_hindex_find(ix, key, rows);
  return 1;
}

int vt_select(rt_table *t, const rt_strpool *sp, int idx, const char *idx_str, int argc,
              sqlite3_value **argv, rt_vtab_stats *stats, vt_rows *out) {
  memset(out, 0, sizeof *out);
  out->hi = t->nrows;
  out->desc = !!(idx & F_DESC);
  int method = method_of(idx), a = 0;
  int c = (idx & KEY_MASK) - 2;
  rt_vtab_stats dummy = {0};
  if (!stats) stats = &dummy;

  /* The plan may predate a CREATE OR REPLACE of the table: a path that no
   * longer fits reads everything. */
  if ((method == M_ORDER && (c >= t->ncols || (c >= 0 && t->cols[c].type != RT_ID &&
                                              !t->cols[c].sorted))) ||
      (method == M_HASH && (c < 0 || c >= t->ncols)))
    method = M_FULL;

  if (method == M_SINDEX) {
    const rt_sindex *s = rt_table_sindex_at(t, idx & KEY_MASK);
    static const char prefix[] = "perfetto index ";
    size_t pl = sizeof prefix - 1, nl = s ? strlen(s->name) : 0;
    int neq = (idx >> NEQ_SHIFT) & NEQ_MAX;
    int fits = s && idx_str && strncmp(idx_str, prefix, pl) == 0 &&
               strncmp(idx_str + pl, s->name, nl) == 0 && idx_str[pl + nl] == ' ' &&
               s->ncols >= neq + ((idx & (F_LO | F_HI)) ? 1 : 0);
    for (int i = 0; fits && i < s->ncols; i++) fits = s->cols[i] < t->ncols;
    if (!fits) {
      stats->full_scans++;
      return SQLITE_OK;
    }
    stats->index_searches++;
    out->rows = s->perm;
    int64_t lo = 0, hi = t->nrows;
    /* `=` on the prefix, one column at a time: within the rows equal on
     * the columns before, column i is in order. A value that cannot bound
     * column i stops there (and drops the range after it). */
    int i = 0;
    for (; i < neq && a < argc; i++, a++) {
      rt_ikey k;
      int blob;
      key_from(argv[a], &k, &blob);
      if (blob || (k.kind != RT_IKEY_NULL && !key_fits(t, s->cols[i], &k))) break;
      narrow(t, s->cols[i], s->perm, argv[a], 1, 0, &lo, &hi, sp);
      narrow(t, s->cols[i], s->perm, argv[a], 0, 0, &lo, &hi, sp);
    }
    if (i == neq) {
      if ((idx & F_LO) && a < argc)
        narrow(t, s->cols[neq], s->perm, argv[a++], 1, !!(idx & F_LO_STRICT), &lo, &hi, sp);
      if ((idx & F_HI) && a < argc)
        narrow(t, s->cols[neq], s->perm, argv[a++], 0, !!(idx & F_HI_STRICT), &lo, &hi, sp);
    }
    out->lo = lo;
    out->hi = hi;
    return SQLITE_OK;
  }

  if (method == M_FULL) {
    stats->full_scans++;
    return SQLITE_OK;
  }

  if ((idx & F_EQ) && (idx & F_IN) && a < argc) {
    /* Every value of the list: the union of their rows, in row order. */
    rowlist l = {0};
    sqlite3_value *v = NULL;
    int rc = sqlite3_vtab_in_first(argv[a], &v);
    stats->in_lists++;
    while (rc == SQLITE_OK && v) {
      const uint32_t *rows;
      int64_t lo, hi;
      int all;
      if (!eq_rows_of(t, c, method, sp, v, &rows, &lo, &hi, &all)) {
        free(l.v);
        return SQLITE_NOMEM;
      }
      if (all) {   /* one value that cannot narrow: read everything */
        free(l.v);
        stats->full_scans++;
        return SQLITE_OK;
      }
      if (!rowlist_add(&l, rows, lo, hi)) {
        free(l.v);
        return SQLITE_NOMEM;
      }
      rc = sqlite3_vtab_in_next(argv[a], &v);
    }
    if (rc != SQLITE_OK && rc != SQLITE_DONE) {
      free(l.v);
      return rc;
    }
    rowlist_finish(&l);
    out->owned = l.v;
    out->rows = l.v;
    out->lo = 0;
    out->hi = (int64_t)l.n;
    out->desc = 0;
    return SQLITE_OK;
  }

  if (method == M_HASH) {
    const uint32_t *rows;
    int64_t lo, hi;
    int all;
    if (!eq_rows_of(t, c, method, sp, argv[a], &rows, &lo, &hi, &all)) return SQLITE_NOMEM;
    if (all) {
      stats->full_scans++;
      return SQLITE_OK;
    }
    stats->hash_lookups++;
    out->rows = rows;
    out->lo = lo;
    out->hi = hi;
    return SQLITE_OK;
  }

  /* M_ORDER */
  stats->order_searches++;
  int64_t lo = 0, hi = t->nrows;
  if ((idx & F_EQ) && a < argc) {
    sqlite3_value *val = argv[a++];
    narrow(t, c, NULL, val, 1, 0, &lo, &hi, sp);
    narrow(t, c, NULL, val, 0, 0, &lo, &hi, sp);
  }
  if ((idx & F_LO) && a < argc) narrow(t, c, NULL, argv[a++], 1, !!(idx & F_LO_STRICT), &lo, &hi, sp);
  if ((idx & F_HI) && a < argc) narrow(t, c, NULL, argv[a++], 0, !!(idx & F_HI_STRICT), &lo, &hi, sp);
  out->lo = lo;
  out->hi = hi;
  return SQLITE_OK;
}
