/*
 * load.c — a SQLite table into a columnar table (see load.h).
 *
 * One pass over `SELECT * FROM main."name"`. Each column keeps its values
 * in 8-byte slots (int64, double or string id) plus validity bits, and its
 * kind only widens as values arrive: nothing yet → integer → real → text.
 * Widening converts the values already stored (integers to doubles; numbers
 * to their SQLite text), so one odd value late in a column costs one
 * conversion, not a second pass over SQLite. The row count is read first
 * so the arrays are allocated once and progress has a total.
 */
#include <stdlib.h>

#include "load.h"
#include "sqlsrc.h"

enum { K_NONE, K_INT, K_REAL, K_TEXT };

typedef struct load_col {
  int kind;
  int64_t *v;         /* int64, or double / uint32 id in the same 8 bytes */
  uint64_t *valid;
} load_col;

typedef struct loader {
  int ncols;
  load_col *cols;
  int64_t n, cap;
  rt_strpool *sp;
  int bad_col;      /* a string the pool refused, in this column (else -1) */
} loader;

/* Interns a string of the table; a refusal (too long, out of memory:
 * rt_str_intern gives 0, which only "" may be) is recorded, never kept as
 * an empty string. */
static uint32_t intern(loader *l, int col, const char *s, size_t len) {
  uint32_t id = rt_str_intern(l->sp, s, len);
  if (id == 0 && len > 0 && l->bad_col < 0) l->bad_col = col;
  return id;
}

static double slot_f64(const int64_t *p) {
  double d;
  memcpy(&d, p, sizeof d);
  return d;
}
static void set_f64(int64_t *p, double d) { memcpy(p, &d, sizeof d); }

/* A number as SQLite shows it as text (the same text `CAST(x AS TEXT)`
 * gives, so a column mixing numbers and strings reads as SQL shows it). */
static uint32_t number_text(loader *l, int col, int kind, const int64_t *p) {
  char buf[64];
  if (kind == K_INT) sqlite3_snprintf(sizeof buf, buf, "%lld", (long long)*p);
  else sqlite3_snprintf(sizeof buf, buf, "%!.15g", slot_f64(p));
  return intern(l, col, buf, strlen(buf));
}

/* Widens column c to kind `to`, converting the n values stored so far. */
static void widen(loader *l, int col, load_col *c, int to) {
  for (int64_t i = 0; i < l->n && c->kind != K_NONE; i++) {
    if (!rt_bit(c->valid, (uint32_t)i)) continue;
    if (to == K_REAL) set_f64(&c->v[i], (double)c->v[i]);
    else c->v[i] = number_text(l, col, c->kind, &c->v[i]);
  }
  c->kind = to;
}

static int grow(loader *l, int64_t need) {
  if (need <= l->cap) return 1;
  int64_t cap = l->cap ? l->cap : 1024;
  while (cap < need) cap *= 2;
  for (int c = 0; c < l->ncols; c++) {
    load_col *col = &l->cols[c];
    int64_t *v = realloc(col->v, (size_t)cap * sizeof *v);
    if (!v) return 0;
    col->v = v;
    uint64_t *b = realloc(col->valid, RT_BITWORDS(cap) * 8);
    if (!b) return 0;
    memset(b + RT_BITWORDS(l->cap), 0, (RT_BITWORDS(cap) - RT_BITWORDS(l->cap)) * 8);
    col->valid = b;
  }
  l->cap = cap;
  return 1;
}

static void add_row(loader *l, sqlite3_stmt *q) {
  int64_t i = l->n++;
  for (int c = 0; c < l->ncols; c++) {
    load_col *col = &l->cols[c];
    int64_t *slot = &col->v[i];
    *slot = 0;
    switch (sqlite3_column_type(q, c)) {
    case SQLITE_NULL:
      continue;
    case SQLITE_INTEGER: {
      int64_t x = sqlite3_column_int64(q, c);
      if (col->kind == K_NONE) col->kind = K_INT;
      if (col->kind == K_INT) *slot = x;
      else if (col->kind == K_REAL) set_f64(slot, (double)x);
      else *slot = number_text(l, c, K_INT, &x);
      break;
    }
    case SQLITE_FLOAT: {
      double d = sqlite3_column_double(q, c);
      if (col->kind == K_NONE || col->kind == K_INT) widen(l, c, col, K_REAL);
      if (col->kind == K_REAL) {
        set_f64(slot, d);
      } else {
        int64_t bits;
        memcpy(&bits, &d, sizeof bits);
        *slot = number_text(l, c, K_REAL, &bits);
      }
      break;
    }
    default: {   /* text, or a blob kept as its bytes */
      if (col->kind != K_TEXT) widen(l, c, col, K_TEXT);
      const void *p = sqlite3_column_type(q, c) == SQLITE_BLOB ? sqlite3_column_blob(q, c)
                                                              : sqlite3_column_text(q, c);
      int len = sqlite3_column_bytes(q, c);
      *slot = intern(l, c, p ? p : "", (size_t)len);
      break;
    }
    }
    rt_bit_set(col->valid, (uint32_t)i);
  }
}

/* The kind of a column that held only NULLs, from its declared type
 * (rt_sql_decl_type; integer when it names none). */
static int decl_kind(const char *decl) {
  rt_type t = rt_sql_decl_type(decl);
  return t == RT_STR ? K_TEXT : t == RT_F64 ? K_REAL : K_INT;
}

/* Moves the loader's columns into a finalized table. */
static rt_table *finish(loader *l, sqlite3_stmt *q, const char *name) {
  rt_table *t = rt_table_alloc(name, l->ncols);
  if (!t) return NULL;
  t->nrows = l->n;
  for (int c = 0; c < l->ncols; c++) {
    load_col *lc = &l->cols[c];
    rt_column *tc = &t->cols[c];
    const char *cn = sqlite3_column_name(q, c);
    tc->name = malloc(strlen(cn ? cn : "") + 1);
    if (!tc->name) goto oom;
    strcpy(tc->name, cn ? cn : "");
    int kind = lc->kind == K_NONE ? decl_kind(sqlite3_column_decltype(q, c)) : lc->kind;
    tc->valid = lc->valid;
    lc->valid = NULL;
    if (kind == K_TEXT) {
      uint32_t *ids = malloc(l->n ? (size_t)l->n * 4 : 4);
      if (!ids) goto oom;
      for (int64_t i = 0; i < l->n; i++) ids[i] = (uint32_t)lc->v[i];
      tc->type = RT_STR;
      tc->data = ids;
    } else {
      tc->type = kind == K_REAL ? RT_F64 : RT_I64;
      tc->data = lc->v ? (void *)lc->v : malloc(8);
      lc->v = NULL;
      if (!tc->data) goto oom;
    }
    if (!tc->valid) {   /* no rows: nothing allocated the bits */
      tc->valid = calloc(1, 8);
      if (!tc->valid) goto oom;
    }
    if (!rt_column_finish(tc, l->n, RT_I64)) goto oom;
  }
  return t;
oom:
  rt_table_unref(t);
  return NULL;
}

static int64_t count_rows(sqlite3 *db, const char *quoted) {
  char *sql = sqlite3_mprintf("SELECT count(*) FROM main.\"%w\"", quoted);
  sqlite3_stmt *q = NULL;
  int64_t n = -1;
  if (sql && sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
    n = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  sqlite3_free(sql);
  return n;
}

int rt_sqlite_has_table(sqlite3 *db, const char *name) {
  sqlite3_stmt *q = NULL;
  int found = 0;
  if (sqlite3_prepare_v2(db,
                         "SELECT 1 FROM main.sqlite_schema WHERE type IN ('table', 'view') "
                         "AND name = ?1 COLLATE NOCASE",
                         -1, &q, NULL) == SQLITE_OK) {
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    found = sqlite3_step(q) == SQLITE_ROW;
  }
  sqlite3_finalize(q);
  return found;
}

rt_table *rt_load_sqlite_table(sqlite3 *db, rt_strpool *sp, const char *name,
                               rt_load_progress progress, void *ctx,
                               const volatile int *interrupt, rt_err *err) {
  if (!rt_sqlite_has_table(db, name)) {
    rt_errorf(err, -1, "LOAD: no table named '%s' in the database", name);
    return NULL;
  }
  int64_t total = count_rows(db, name);
  char *sql = sqlite3_mprintf("SELECT * FROM main.\"%w\"", name);
  sqlite3_stmt *q = NULL;
  if (!sql || sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
    rt_errorf(err, -1, "LOAD: cannot read '%s': %s", name, sqlite3_errmsg(db));
    sqlite3_free(sql);
    return NULL;
  }
  sqlite3_free(sql);
  loader l = {.ncols = sqlite3_column_count(q), .sp = sp, .bad_col = -1};
  l.cols = calloc(l.ncols ? (size_t)l.ncols : 1, sizeof *l.cols);
  rt_table *t = NULL;
  int rc = SQLITE_NOMEM;
  if (l.cols && grow(&l, total > 0 ? total : 1)) {
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
      if (!grow(&l, l.n + 1)) {
        rc = SQLITE_NOMEM;
        break;
      }
      add_row(&l, q);
      if (l.bad_col >= 0) {
        rc = SQLITE_TOOBIG;
        break;
      }
      if (l.n % 4096 == 0 && interrupt && *interrupt) {
        rc = SQLITE_INTERRUPT;
        break;
      }
      if (progress && l.n % RT_LOAD_PROGRESS_ROWS == 0) progress(ctx, name, l.n, total);
    }
  }
  if (rc == SQLITE_DONE) {
    if (progress) progress(ctx, name, l.n, l.n);
    t = finish(&l, q, name);
    if (!t) rc = SQLITE_NOMEM;
  }
  if (rc == SQLITE_NOMEM) rt_errorf(err, -1, "LOAD: out of memory loading '%s'", name);
  else if (rc == SQLITE_TOOBIG)
    rt_errorf(err, -1, "LOAD: '%s', row %lld, column '%s': %s", name, (long long)l.n,
              sqlite3_column_name(q, l.bad_col), rt_strpool_error(sp));
  else if (rc == SQLITE_INTERRUPT) rt_errorf(err, -1, "LOAD: interrupted loading '%s'", name);
  else if (!t) rt_errorf(err, -1, "LOAD: cannot read '%s': %s", name, sqlite3_errmsg(db));
  for (int c = 0; l.cols && c < l.ncols; c++) {
    free(l.cols[c].v);
    free(l.cols[c].valid);
  }
  free(l.cols);
  sqlite3_finalize(q);
  return t;
}
