/*
 * vtab.c — the "pipejit" SQLite virtual table module over finalized tables.
 *
 * Each virtual table names a catalog table; values are read from the
 * columnar arrays in place (strings straight from the pool, which never
 * moves its bytes, so they are handed to SQLite as SQLITE_STATIC).
 *
 * Planning: the table's row order is an index on the implicit id column,
 * the rowid, and every column finalized as `sorted`. xBestIndex picks one
 * such column with equality or range constraints and xFilter binary-searches
 * the row range; a single ORDER BY on such a column is consumed by scanning
 * the range forward or backward. Constraints are never marked omitted:
 * SQLite re-checks each row, so xFilter only has to return a superset of
 * the matches (which keeps mixed int/real/text comparisons, whose SQLite
 * semantics depend on affinities, trivially correct) and stays correct if
 * the catalog entry was replaced between planning and running. (A consumed
 * ORDER BY relies on the plan's table being in order; rt_vtab_expose after
 * a replacement changes the schema, so SQLite re-plans prepared statements.)
 */
#include <math.h>
#include <stdlib.h>

#include "vtab.h"

typedef struct vt_aux {
  rt_catalog *cat;
  rt_strpool *sp;
} vt_aux;

typedef struct vt_tab {
  sqlite3_vtab base;
  vt_aux *aux;
  char *name;           /* catalog table name (sqlite3_malloc'd) */
  char *decl;           /* the declared CREATE TABLE, to detect schema changes */
} vt_tab;

typedef struct vt_cursor {
  sqlite3_vtab_cursor base;
  rt_table *t;          /* referenced while the cursor is open */
  int64_t row, lo, hi;  /* scan [lo, hi) */
  int desc;
} vt_cursor;

/* idxNum layout: the key column in the low 16 bits (0 = full scan,
 * 1 = rowid, c + 2 = column c), then flags. argv holds the EQ value, or
 * the lower bound then the upper bound, in that order. */
enum {
  IDX_KEY_MASK = 0xffff,
  IDX_EQ = 1 << 16,
  IDX_LO = 1 << 17,
  IDX_LO_STRICT = 1 << 18,
  IDX_HI = 1 << 19,
  IDX_HI_STRICT = 1 << 20,
  IDX_DESC = 1 << 21,
};

static const char *sql_type(rt_type t) {
  return t == RT_F64 ? "REAL" : t == RT_STR ? "TEXT" : "INTEGER";
}

/* CREATE TABLE x("a" INTEGER, …) for a table; sqlite3_malloc'd. */
static char *decl_for(const rt_table *t) {
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendall(s, "CREATE TABLE x(");
  for (int c = 0; c < t->ncols; c++)
    sqlite3_str_appendf(s, "%s\"%w\" %s", c ? ", " : "", t->cols[c].name,
                        sql_type(t->cols[c].type));
  sqlite3_str_appendall(s, ")");
  return sqlite3_str_finish(s);
}

/* Undoes SQL quoting of a module argument: "a""b" → a"b, 'x' → x. */
static char *dequote(const char *arg) {
  while (*arg == ' ') arg++;
  char q = *arg;
  if (q != '"' && q != '\'' && q != '`' && q != '[') return sqlite3_mprintf("%s", arg);
  char close = q == '[' ? ']' : q;
  size_t n = strlen(arg);
  char *out = sqlite3_malloc64(n + 1);
  if (!out) return NULL;
  size_t j = 0;
  for (size_t i = 1; i < n; i++) {
    if (arg[i] == close) {
      if (close != ']' && arg[i + 1] == close) {
        out[j++] = close;
        i++;
        continue;
      }
      break;
    }
    out[j++] = arg[i];
  }
  out[j] = 0;
  return out;
}

/* xCreate and xConnect: argv = module, schema, table name[, catalog name]. */
static int vt_connect(sqlite3 *db, void *auxp, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **err) {
  vt_aux *aux = auxp;
  char *name = argc > 3 ? dequote(argv[3]) : sqlite3_mprintf("%s", argv[2]);
  if (!name) return SQLITE_NOMEM;
  rt_table *t = rt_catalog_get(aux->cat, name);
  if (!t) {
    *err = sqlite3_mprintf("no such columnar table: %s", name);
    sqlite3_free(name);
    return SQLITE_ERROR;
  }
  vt_tab *v = sqlite3_malloc(sizeof *v);
  char *decl = decl_for(t);
  if (!v || !decl) {
    sqlite3_free(v);
    sqlite3_free(decl);
    sqlite3_free(name);
    return SQLITE_NOMEM;
  }
  int rc = sqlite3_declare_vtab(db, decl);
  if (rc != SQLITE_OK) {
    *err = sqlite3_mprintf("cannot declare columnar table %s: %s", name, sqlite3_errmsg(db));
    sqlite3_free(v);
    sqlite3_free(decl);
    sqlite3_free(name);
    return rc;
  }
  /* Reading a table has no side effects, so it is safe in views and
   * triggers even with trusted_schema off. */
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  memset(v, 0, sizeof *v);
  v->aux = aux;
  v->name = name;
  v->decl = decl;
  *out = &v->base;
  return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *base) {
  vt_tab *v = (vt_tab *)base;
  sqlite3_free(v->name);
  sqlite3_free(v->decl);
  sqlite3_free(v);
  return SQLITE_OK;
}

/* ---- planning ------------------------------------------------------------ */

/* Row order is non-decreasing in this column (-1 = rowid). */
static int col_in_row_order(const rt_table *t, int c) {
  if (c < 0) return 1;
  if (c >= t->ncols) return 0;
  return t->cols[c].type == RT_ID || t->cols[c].sorted;
}

static int col_unique(const rt_table *t, int c) {
  return c < 0 || (c < t->ncols && t->cols[c].type == RT_ID);
}

static int vt_best_index(sqlite3_vtab *base, sqlite3_index_info *info) {
  vt_tab *v = (vt_tab *)base;
  rt_table *t = rt_catalog_get(v->aux->cat, v->name);
  double n = t ? (double)t->nrows : 0;
  if (n < 1) n = 1;

  /* Pick the key column with the best constraints: unique equality, then
   * equality, then two bounds, then one. */
  int best_col = -2, best_score = 0, eq = -1, lo = -1, hi = -1;
  for (int pass_col = -1; t && pass_col < t->ncols; pass_col++) {
    if (!col_in_row_order(t, pass_col)) continue;
    int ceq = -1, clo = -1, chi = -1;
    for (int i = 0; i < info->nConstraint; i++) {
      const struct sqlite3_index_constraint *k = &info->aConstraint[i];
      if (!k->usable || k->iColumn != pass_col) continue;
      /* Strings are in binary order; another collation orders differently. */
      if (pass_col >= 0 && t->cols[pass_col].type == RT_STR &&
          sqlite3_stricmp(sqlite3_vtab_collation(info, i), "BINARY") != 0)
        continue;
      switch (k->op) {
      case SQLITE_INDEX_CONSTRAINT_EQ: if (ceq < 0) ceq = i; break;
      case SQLITE_INDEX_CONSTRAINT_GT:
      case SQLITE_INDEX_CONSTRAINT_GE: if (clo < 0) clo = i; break;
      case SQLITE_INDEX_CONSTRAINT_LT:
      case SQLITE_INDEX_CONSTRAINT_LE: if (chi < 0) chi = i; break;
      default: break;
      }
    }
    int score = ceq >= 0 ? (col_unique(t, pass_col) ? 5 : 4)
                         : (clo >= 0 && chi >= 0) ? 3 : (clo >= 0 || chi >= 0) ? 2 : 0;
    if (score > best_score) {
      best_score = score;
      best_col = pass_col;
      eq = ceq;
      lo = ceq >= 0 ? -1 : clo;
      hi = ceq >= 0 ? -1 : chi;
    }
  }

  int idx = 0, argn = 0;
  double rows = n;
  if (best_score > 0) {
    idx = best_col + 2;
    if (eq >= 0) {
      idx |= IDX_EQ;
      info->aConstraintUsage[eq].argvIndex = ++argn;
      rows = col_unique(t, best_col) ? 1 : fmax(1, n / 100);
      if (col_unique(t, best_col)) info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
    } else {
      if (lo >= 0) {
        idx |= IDX_LO;
        if (info->aConstraint[lo].op == SQLITE_INDEX_CONSTRAINT_GT) idx |= IDX_LO_STRICT;
        info->aConstraintUsage[lo].argvIndex = ++argn;
      }
      if (hi >= 0) {
        idx |= IDX_HI;
        if (info->aConstraint[hi].op == SQLITE_INDEX_CONSTRAINT_LT) idx |= IDX_HI_STRICT;
        info->aConstraintUsage[hi].argvIndex = ++argn;
      }
      rows = fmax(1, lo >= 0 && hi >= 0 ? n / 16 : n / 4);
    }
  }

  /* ORDER BY: row order satisfies one ascending or descending key in row
   * order, or any list whose first key is unique. Strings are left to
   * SQLite, since an ORDER BY's collation is not visible here. */
  if (t && info->nOrderBy > 0) {
    int c = info->aOrderBy[0].iColumn;
    int ok = col_in_row_order(t, c) && (c < 0 || t->cols[c].type != RT_STR) &&
             (info->nOrderBy == 1 || col_unique(t, c));
    if (ok) {
      info->orderByConsumed = 1;
      if (info->aOrderBy[0].desc) idx |= IDX_DESC;
    }
  }

  info->idxNum = idx;
  info->estimatedRows = (sqlite3_int64)rows;
  info->estimatedCost = best_score > 0 ? log2(n) + rows : n;
  return SQLITE_OK;
}

/* ---- scanning ------------------------------------------------------------ */

static int vt_open(sqlite3_vtab *base, sqlite3_vtab_cursor **out) {
  vt_tab *v = (vt_tab *)base;
  rt_table *t = rt_catalog_get(v->aux->cat, v->name);
  if (!t) {
    sqlite3_free(base->zErrMsg);
    base->zErrMsg = sqlite3_mprintf("columnar table %s no longer exists", v->name);
    return SQLITE_ERROR;
  }
  /* After CREATE OR REPLACE the columns may differ from the declared ones;
   * SQLite compiled the statement against the declaration. */
  char *decl = decl_for(t);
  int same = decl && strcmp(decl, v->decl) == 0;
  sqlite3_free(decl);
  if (!same) {
    sqlite3_free(base->zErrMsg);
    base->zErrMsg = sqlite3_mprintf("columnar table %s changed its columns; expose it again",
                                    v->name);
    return SQLITE_ERROR;
  }
  vt_cursor *cur = sqlite3_malloc(sizeof *cur);
  if (!cur) return SQLITE_NOMEM;
  memset(cur, 0, sizeof *cur);
  cur->t = rt_table_ref(t);
  *out = &cur->base;
  return SQLITE_OK;
}

static int vt_close(sqlite3_vtab_cursor *base) {
  vt_cursor *cur = (vt_cursor *)base;
  rt_table_unref(cur->t);
  sqlite3_free(cur);
  return SQLITE_OK;
}

/* A constraint value; `kind` is its SQLite type. */
typedef struct vt_key {
  int kind;
  int64_t i;
  double d;
  const char *s;
  size_t len;
} vt_key;

static int cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }
static int cmp_f64(double a, double b) { return (a > b) - (a < b); }

/* Compares row r of column c with the key: <0, 0, >0. NULL sorts first.
 * Mixed integer/real comparisons go through double; callers make those
 * bounds inclusive so rounding can only widen the range. */
static int cmp_row(const rt_table *t, int c, int64_t r, const vt_key *k, const rt_strpool *sp) {
  const rt_column *col = &t->cols[c];
  if (col->valid && !rt_bit(col->valid, (uint32_t)r)) return -1;
  switch (col->type) {
  case RT_F64: {
    double x = ((const double *)col->data)[r];
    return cmp_f64(x, k->kind == SQLITE_INTEGER ? (double)k->i : k->d);
  }
  case RT_STR: {
    size_t len;
    const char *s = rt_str_get(sp, ((const uint32_t *)col->data)[r], &len);
    size_t m = len < k->len ? len : k->len;
    int d = m ? memcmp(s, k->s, m) : 0;
    return d ? d : cmp_i64((int64_t)len, (int64_t)k->len);
  }
  default: {
    int64_t x = col->type == RT_U32   ? ((const uint32_t *)col->data)[r]
                : col->type == RT_I32 ? ((const int32_t *)col->data)[r]
                                      : ((const int64_t *)col->data)[r];
    return k->kind == SQLITE_INTEGER ? cmp_i64(x, k->i) : cmp_f64((double)x, k->d);
  }
  }
}

/* Whether a key can bound column c (-1 = rowid) by search at all. */
static int key_fits(const rt_table *t, int c, const vt_key *k) {
  int str_col = c >= 0 && t->cols[c].type == RT_STR;
  if (str_col) return k->kind == SQLITE_TEXT;
  if (k->kind == SQLITE_FLOAT) return !isnan(k->d);
  return k->kind == SQLITE_INTEGER;
}

/* First row in [lo, hi) whose value is > key (strict) or >= key. */
static int64_t search(const rt_table *t, int c, const vt_key *k, int strict, int64_t lo,
                      int64_t hi, const rt_strpool *sp) {
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    int d = cmp_row(t, c, mid, k, sp);
    if (d < 0 || (strict && d == 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* For the id column (value = row index): the first row index whose value
 * is > key (gt) or >= key, clipped to [0, n]. Exact for reals too, since
 * r >= d ⇔ r >= ceil(d) and r > d ⇔ r >= floor(d) + 1. */
static int64_t id_bound(const vt_key *k, int gt, int64_t n) {
  if (k->kind == SQLITE_INTEGER) {
    if (k->i < 0) return 0;
    if (k->i >= n) return n;
    return k->i + (gt ? 1 : 0);
  }
  double x = gt ? floor(k->d) + 1 : ceil(k->d);
  if (x <= 0) return 0;
  if (x >= (double)n) return n;
  return (int64_t)x;
}

static void key_from(sqlite3_value *val, vt_key *k) {
  memset(k, 0, sizeof *k);
  k->kind = sqlite3_value_type(val);
  if (k->kind == SQLITE_INTEGER) k->i = sqlite3_value_int64(val);
  else if (k->kind == SQLITE_FLOAT) k->d = sqlite3_value_double(val);
  else if (k->kind == SQLITE_TEXT) {
    k->s = (const char *)sqlite3_value_text(val);
    k->len = (size_t)sqlite3_value_bytes(val);
    if (!k->s) k->s = "";
  }
}

/* Narrows [*lo, *hi) by `col >= key` (or >) when lower, else `col <= key`
 * (or <). A NULL key matches nothing; a key that cannot bound by search is
 * left to SQLite. */
static void narrow(const rt_table *t, int c, sqlite3_value *val, int lower, int strict,
                   int64_t *lo, int64_t *hi, const rt_strpool *sp) {
  vt_key k;
  key_from(val, &k);
  if (k.kind == SQLITE_NULL) {
    *hi = *lo;
    return;
  }
  if (!key_fits(t, c, &k)) return;
  int id_like = c < 0 || t->cols[c].type == RT_ID;
  int exact = k.kind == SQLITE_TEXT || k.kind == (c >= 0 && t->cols[c].type == RT_F64
                                                      ? SQLITE_FLOAT : SQLITE_INTEGER);
  if (id_like) {
    /* lower: first row > key (or >=); upper: rows < key end at the first
     * row >= key, rows <= key at the first row > key. */
    int64_t b = id_bound(&k, lower ? strict : !strict, t->nrows);
    if (lower && b > *lo) *lo = b;
    if (!lower && b < *hi) *hi = b;
  } else if (lower) {
    *lo = search(t, c, &k, exact && strict, *lo, *hi, sp);
  } else {
    *hi = search(t, c, &k, !(exact && strict), *lo, *hi, sp);
  }
  if (*hi < *lo) *hi = *lo;
}

static int vt_filter(sqlite3_vtab_cursor *base, int idx, const char *idx_str, int argc,
                     sqlite3_value **argv) {
  vt_cursor *cur = (vt_cursor *)base;
  vt_tab *v = (vt_tab *)base->pVtab;
  const rt_table *t = cur->t;
  int64_t lo = 0, hi = t->nrows;
  int c = (idx & IDX_KEY_MASK) - 2;
  /* The plan may predate a CREATE OR REPLACE: use the key only if the
   * column is still in row order, else scan everything. */
  if ((idx & IDX_KEY_MASK) && col_in_row_order(t, c)) {
    const rt_strpool *sp = v->aux->sp;
    int a = 0;
    if ((idx & IDX_EQ) && a < argc) {
      sqlite3_value *val = argv[a++];
      narrow(t, c, val, 1, 0, &lo, &hi, sp);
      narrow(t, c, val, 0, 0, &lo, &hi, sp);
    }
    if ((idx & IDX_LO) && a < argc) narrow(t, c, argv[a++], 1, !!(idx & IDX_LO_STRICT), &lo, &hi, sp);
    if ((idx & IDX_HI) && a < argc) narrow(t, c, argv[a++], 0, !!(idx & IDX_HI_STRICT), &lo, &hi, sp);
  }
  cur->lo = lo;
  cur->hi = hi;
  cur->desc = !!(idx & IDX_DESC);
  cur->row = cur->desc ? hi - 1 : lo;
  return SQLITE_OK;
}

static int vt_next(sqlite3_vtab_cursor *base) {
  vt_cursor *cur = (vt_cursor *)base;
  cur->row += cur->desc ? -1 : 1;
  return SQLITE_OK;
}

static int vt_eof(sqlite3_vtab_cursor *base) {
  vt_cursor *cur = (vt_cursor *)base;
  return cur->row < cur->lo || cur->row >= cur->hi;
}

static int vt_column(sqlite3_vtab_cursor *base, sqlite3_context *ctx, int c) {
  vt_cursor *cur = (vt_cursor *)base;
  vt_tab *v = (vt_tab *)base->pVtab;
  const rt_column *col = &cur->t->cols[c];
  int64_t r = cur->row;
  if (col->valid && !rt_bit(col->valid, (uint32_t)r)) return SQLITE_OK;  /* NULL */
  switch (col->type) {
  case RT_ID: sqlite3_result_int64(ctx, r); break;
  case RT_U32: sqlite3_result_int64(ctx, ((const uint32_t *)col->data)[r]); break;
  case RT_I32: sqlite3_result_int64(ctx, ((const int32_t *)col->data)[r]); break;
  case RT_F64: sqlite3_result_double(ctx, ((const double *)col->data)[r]); break;
  case RT_STR: {
    size_t len;
    /* Pool bytes never move or die while the engine lives. */
    const char *s = rt_str_get(v->aux->sp, ((const uint32_t *)col->data)[r], &len);
    sqlite3_result_text64(ctx, s, len, SQLITE_STATIC, SQLITE_UTF8);
    break;
  }
  default: sqlite3_result_int64(ctx, ((const int64_t *)col->data)[r]); break;
  }
  return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *base, sqlite3_int64 *out) {
  *out = ((vt_cursor *)base)->row;
  return SQLITE_OK;
}

static const sqlite3_module vt_module = {
    .iVersion = 1,
    .xCreate = vt_connect,
    .xConnect = vt_connect,
    .xBestIndex = vt_best_index,
    .xDisconnect = vt_disconnect,
    .xDestroy = vt_disconnect,
    .xOpen = vt_open,
    .xClose = vt_close,
    .xFilter = vt_filter,
    .xNext = vt_next,
    .xEof = vt_eof,
    .xColumn = vt_column,
    .xRowid = vt_rowid,
};

/* ---- registration and exposure ------------------------------------------- */

int rt_vtab_register(sqlite3 *db, rt_catalog *cat, rt_strpool *sp) {
  vt_aux *aux = malloc(sizeof *aux);
  if (!aux) return SQLITE_NOMEM;
  aux->cat = cat;
  aux->sp = sp;
  /* SQLite calls free(aux) when the module goes, even if this fails. */
  return sqlite3_create_module_v2(db, "pipejit", &vt_module, aux, free);
}

/* What temp."name" is now: 0 nothing, 1 our virtual table, 2 something else. */
static int temp_object(sqlite3 *db, const char *name, int *rc) {
  sqlite3_stmt *st;
  *rc = sqlite3_prepare_v2(db,
                           "SELECT type, sql FROM temp.sqlite_master "
                           "WHERE name = ?1 COLLATE NOCASE AND type IN ('table', 'view')",
                           -1, &st, NULL);
  if (*rc != SQLITE_OK) return 0;
  sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  int what = 0;
  if (sqlite3_step(st) == SQLITE_ROW) {
    const char *sql = (const char *)sqlite3_column_text(st, 1);
    what = 2;
    if (sql && sqlite3_strlike("CREATE VIRTUAL TABLE % USING pipejit%", sql, 0) == 0) what = 1;
  }
  *rc = sqlite3_finalize(st);
  return what;
}

static int set_err(char **errmsg, char *msg) {
  if (errmsg) *errmsg = msg;
  else sqlite3_free(msg);
  return SQLITE_ERROR;
}

int rt_vtab_unexpose(sqlite3 *db, const char *name, char **errmsg) {
  int rc;
  if (errmsg) *errmsg = NULL;
  if (temp_object(db, name, &rc) != 1)
    return rc == SQLITE_OK ? SQLITE_OK : set_err(errmsg, sqlite3_mprintf("%s", sqlite3_errmsg(db)));
  char *sql = sqlite3_mprintf("DROP TABLE temp.\"%w\"", name);
  if (!sql) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, sql, NULL, NULL, errmsg);
  sqlite3_free(sql);
  return rc;
}

int rt_vtab_expose(sqlite3 *db, const char *name, char **errmsg) {
  int rc;
  if (errmsg) *errmsg = NULL;
  int what = temp_object(db, name, &rc);
  if (rc != SQLITE_OK) return set_err(errmsg, sqlite3_mprintf("%s", sqlite3_errmsg(db)));
  if (what == 2)
    return set_err(errmsg, sqlite3_mprintf("there is already a temp table or view named '%s'",
                                           name));
  if (what == 1 && (rc = rt_vtab_unexpose(db, name, errmsg)) != SQLITE_OK) return rc;
  char *sql = sqlite3_mprintf("CREATE VIRTUAL TABLE temp.\"%w\" USING pipejit(\"%w\")", name,
                              name);
  if (!sql) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, sql, NULL, NULL, errmsg);
  sqlite3_free(sql);
  return rc;
}

int rt_vtab_expose_all(sqlite3 *db, rt_catalog *cat, char **errmsg) {
  for (int i = 0; i < rt_catalog_count(cat); i++) {
    int rc = rt_vtab_expose(db, rt_catalog_at(cat, i)->name, errmsg);
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}
