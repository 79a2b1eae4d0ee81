/*
 * sqlsrc.c — reading SQLite query results into columnar batches.
 *
 * rt_sql_prime tells the binder what a SQL source returns (names and
 * types) without running the query twice: declared types come from the
 * prepared statement; a column without one is typed from the values of
 * the first rows, which stay with the source (the "primed" rows) for the
 * plan's run to read first, so the query is stepped once in all. rt_sqlsrc
 * steps the query and copies its values into per-source buffers that batch
 * views point at. What the SQL text is (the `WITH __pipeline_source …`
 * wrapper that prunes columns) is the caller's business; here we only
 * prepare, step and copy.
 *
 * Typing is static: a column's type is fixed before its first batch is
 * handed out, and a later value that does not fit it stops the query with
 * an error naming the column and the (1-based) row, rather than silently
 * changing types mid-stream. For a column typed from its first rows the
 * error is Perfetto's: `column 'value' was inferred to be integer from its
 * first rows, but row 9000 is string`.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>

#include "runtime/store.h"
#include "sqlsrc.h"

/* A declared type's value type, RT_NULLT (sample the values) for BLOB and
 * NUMERIC affinity and no declared type, which SQLite stores as given. */
static rt_type sql_decl_type(const char *decl) {
  switch (rt_sql_affinity(decl)) {
  case RT_AFF_INTEGER: return RT_I64;
  case RT_AFF_TEXT: return RT_STR;
  case RT_AFF_REAL: return RT_F64;
  case RT_AFF_BLOB:
  case RT_AFF_NUMERIC: break;
  }
  return RT_NULLT;
}

static const char *type_word(rt_type t) {
  switch (rt_store_type(t)) {
  case RT_F64: return "double";
  case RT_STR: return "string";
  default: return "integer";
  }
}

static const char *value_word(int sqlite_type) {
  switch (sqlite_type) {
  case SQLITE_INTEGER: return "an integer";
  case SQLITE_FLOAT: return "a real";
  case SQLITE_TEXT: return "a text";
  case SQLITE_BLOB: return "a blob";
  default: return "a NULL";
  }
}

static int prepare(sqlite3 *db, const char *sql, const char *stage, sqlite3_stmt **st,
                   rt_err *err) {
  *st = NULL;
  if (!db) return rt_errorf(err, -1, "%s: there is no SQLite connection", stage);
  if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK) {
    rt_errorf(err, -1, "%s: %s", stage, sqlite3_errmsg(db));
    sqlite3_finalize(*st);
    *st = NULL;
    return 0;
  }
  if (!*st) return rt_errorf(err, -1, "%s: the query is empty", stage);
  return 1;
}

/* ---- the source ------------------------------------------------------------ */

/* One read column's batch buffer. `last_*` caches the most recent string
 * so runs of equal strings (common: names, states) skip the pool's hash
 * lookup. */
typedef struct sqlcol {
  int at;               /* the statement's column */
  rt_type store;        /* RT_I64, RT_F64 or RT_STR */
  rt_type view_type;    /* what the view reports (RT_BOOL kept as such) */
  bool inferred;        /* no declared type: typed from the first rows */
  void *data;           /* RT_BATCH values */
  uint64_t *valid;      /* RT_BITWORDS(RT_BATCH) words */
  const char *name;
  uint32_t last_id;
  int has_last;
} sqlcol;

/* A value read before the source was typed (a primed row): its SQLite
 * type and value, text as a slice of `text`. */
typedef struct pcell {
  uint8_t kind;
  union {
    int64_t i;
    double f;
    struct {
      uint32_t len;
      size_t off;
    } s;
  } u;
} pcell;

struct rt_sqlsrc {
  sqlite3 *db;
  sqlite3_stmt *st;
  rt_strpool *sp;
  int nsrc;             /* the statement's columns */
  int ncols;            /* columns read (0 until typed) */
  sqlcol *cols;
  int64_t rows;         /* rows handed out so far, for error messages */
  int done;             /* SQLITE_DONE seen */
  int failed;
  char *stage;
  void *mem;            /* one block holding every column buffer */
  /* Primed rows: npend rows of nsrc cells, the next to hand out pend_at. */
  pcell *pend;
  int64_t npend, pend_at;
  rt_buf text;
};

/* Types the source: reads statement columns which[0..ncols) (NULL: the
 * first ncols) as types[] named names[]. */
static int source_type(rt_sqlsrc *s, int ncols, const int *which, const rt_type *types,
                       const char *const *names, const char *stage, rt_err *err) {
  if (!stage) stage = "FROM";
  /* Names are copied into one block after the buffers, so the source does
   * not depend on the caller keeping them alive. */
  size_t words = RT_BITWORDS(RT_BATCH);
  size_t per_col = RT_BATCH * sizeof(int64_t) + words * sizeof(uint64_t);
  size_t name_bytes = 0;
  for (int c = 0; c < ncols; c++) name_bytes += strlen(names && names[c] ? names[c] : "") + 1;
  sqlcol *cols = calloc((size_t)(ncols ? ncols : 1), sizeof *cols);
  char *mem = malloc(per_col * (size_t)ncols + name_bytes + 1);
  char *stage_copy = rt_strdup(stage);
  if (!cols || !mem || !stage_copy) {
    free(cols); free(mem); free(stage_copy);
    return rt_errorf(err, -1, "%s: out of memory", stage);
  }
  char *names_at = mem + per_col * (size_t)ncols;
  for (int c = 0; c < ncols; c++) {
    sqlcol *col = &cols[c];
    col->at = which ? which[c] : c;
    col->store = rt_store_type(types[c]);
    col->view_type = types[c] == RT_BOOL ? RT_BOOL : col->store;
    col->inferred = sql_decl_type(sqlite3_column_decltype(s->st, col->at)) == RT_NULLT;
    col->data = mem + per_col * (size_t)c;
    col->valid = (uint64_t *)(mem + per_col * (size_t)c + RT_BATCH * sizeof(int64_t));
    const char *nm = names && names[c] ? names[c] : "";
    size_t len = strlen(nm) + 1;
    memcpy(names_at, nm, len);
    col->name = names_at;
    names_at += len;
  }
  free(s->cols);
  free(s->mem);
  free(s->stage);
  s->ncols = ncols;
  s->cols = cols;
  s->stage = stage_copy;
  s->mem = mem;
  return 1;
}

static rt_sqlsrc *source_new(sqlite3 *db, sqlite3_stmt *st, rt_strpool *sp) {
  rt_sqlsrc *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->db = db;
  s->st = st;
  s->sp = sp;
  s->nsrc = sqlite3_column_count(st);
  return s;
}

rt_sqlsrc *rt_sqlsrc_open(void *dbv, const char *sql, int ncols, const rt_type *types,
                          const char *const *names, rt_strpool *sp, const char *stage,
                          rt_err *err) {
  sqlite3 *db = dbv;
  sqlite3_stmt *st;
  if (!stage) stage = "FROM";
  if (ncols <= 0) {
    rt_errorf(err, -1, "%s: expected a query that returns rows", stage);
    return NULL;
  }
  if (!prepare(db, sql, stage, &st, err)) return NULL;
  if (sqlite3_column_count(st) != ncols) {
    rt_errorf(err, -1, "%s: the query now returns %d columns, but it was compiled for %d",
              stage, sqlite3_column_count(st), ncols);
    sqlite3_finalize(st);
    return NULL;
  }
  rt_sqlsrc *s = source_new(db, st, sp);
  if (!s) {
    sqlite3_finalize(st);
    rt_errorf(err, -1, "%s: out of memory", stage);
    return NULL;
  }
  if (!source_type(s, ncols, NULL, types, names, stage, err)) {
    rt_sqlsrc_close(s);
    return NULL;
  }
  return s;
}

int rt_sqlsrc_adopt(rt_sqlsrc *s, int ncols, const int *which, const rt_type *types,
                    const char *const *names, const char *stage, rt_err *err) {
  for (int c = 0; c < ncols; c++)
    if (which[c] < 0 || which[c] >= s->nsrc)
      return rt_errorf(err, -1, "%s: column %d is not in the query", stage ? stage : "FROM",
                       which[c] + 1);
  return source_type(s, ncols, which, types, names, stage, err);
}

/* ---- priming ---------------------------------------------------------------- */

/* Reads up to RT_BATCH rows into s->pend (every column, text kept as
 * bytes: only the columns a plan reads get interned). */
static int read_primed(rt_sqlsrc *s, rt_err *err) {
  int n = s->nsrc;
  s->pend = malloc(sizeof *s->pend * (size_t)n * RT_BATCH);
  if (!s->pend) return rt_errorf(err, -1, "FROM: out of memory");
  while (s->npend < RT_BATCH) {
    int rc = sqlite3_step(s->st);
    if (rc == SQLITE_DONE) {
      s->done = 1;
      break;
    }
    if (rc != SQLITE_ROW) return rt_errorf(err, -1, "FROM: %s", sqlite3_errmsg(s->db));
    pcell *row = s->pend + s->npend * n;
    for (int c = 0; c < n; c++) {
      sqlite3_value *v = sqlite3_column_value(s->st, c);
      pcell *p = &row[c];
      p->kind = (uint8_t)sqlite3_value_type(v);
      if (p->kind == SQLITE_INTEGER) p->u.i = sqlite3_value_int64(v);
      else if (p->kind == SQLITE_FLOAT) p->u.f = sqlite3_value_double(v);
      else if (p->kind == SQLITE_TEXT || p->kind == SQLITE_BLOB) {
        const void *b = p->kind == SQLITE_TEXT ? (const void *)sqlite3_value_text(v)
                                               : sqlite3_value_blob(v);
        size_t len = (size_t)sqlite3_value_bytes(v);
        if (len > UINT32_MAX) return rt_errorf(err, -1, "FROM: a value is too long");
        p->u.s.off = s->text.len;
        p->u.s.len = (uint32_t)len;
        if (len) {
          rt_buf_append(&s->text, b, len);
          if (s->text.len != p->u.s.off + len) return rt_errorf(err, -1, "FROM: out of memory");
        }
      }
    }
    s->npend++;
  }
  return 1;
}

/* The types of the undeclared columns (types[c] == RT_NULLT), from the
 * primed rows: any text makes a string column, else any real a double
 * column, else an integer one; text mixed with numbers has no type. */
static int decide_types(const rt_sqlsrc *s, char **names, rt_type *types, rt_err *err) {
  enum { SEEN_INT = 1, SEEN_REAL = 2, SEEN_TEXT = 4 };
  for (int c = 0; c < s->nsrc; c++) {
    if (types[c] != RT_NULLT) continue;
    int seen = 0;
    int64_t text_row = 0, num_row = 0;
    for (int64_t r = 0; r < s->npend; r++) {
      switch (s->pend[r * s->nsrc + c].kind) {
      case SQLITE_INTEGER: seen |= SEEN_INT; if (!num_row) num_row = r + 1; break;
      case SQLITE_FLOAT: seen |= SEEN_REAL; if (!num_row) num_row = r + 1; break;
      case SQLITE_TEXT: seen |= SEEN_TEXT; if (!text_row) text_row = r + 1; break;
      case SQLITE_BLOB:
        return rt_errorf(err, -1, "FROM: column '%s' has a blob value in row %lld, "
                         "which a pipeline cannot read", names[c], (long long)r + 1);
      default: break;
      }
    }
    if ((seen & SEEN_TEXT) && (seen & (SEEN_INT | SEEN_REAL)))
      return rt_errorf(err, -1,
                       "FROM: column '%s' mixes text (row %lld) and numbers (row %lld), "
                       "so it has no single type: CAST it to one",
                       names[c], (long long)text_row, (long long)num_row);
    types[c] = (seen & SEEN_TEXT) ? RT_STR : (seen & SEEN_REAL) ? RT_F64 : RT_I64;
  }
  return 1;
}

/* One try of rt_sql_prime; 2 when reading the first rows made SQLite
 * prepare the statement again (a virtual table changed its columns as it
 * ran: the extension's pipeline(), nested in a pipeline's SQL source), so
 * the names and types read before are of the old statement. */
static int prime_once(sqlite3 *db, const char *sql, rt_strpool *sp, rt_arena *a,
                      rt_sqlcols *out, rt_sqlsrc **primed, rt_err *err) {
  sqlite3_stmt *st;
  memset(out, 0, sizeof *out);
  *primed = NULL;
  if (!prepare(db, sql, "FROM", &st, err)) return 0;
  int n = sqlite3_column_count(st);
  if (n == 0) {
    sqlite3_finalize(st);
    return rt_errorf(err, -1, "FROM: expected a query that returns rows");
  }
  /* A source is read as a query; a statement that writes (INSERT …
   * RETURNING) would write again at each run. */
  if (!sqlite3_stmt_readonly(st)) {
    sqlite3_finalize(st);
    return rt_errorf(err, -1, "FROM: expected a query that only reads data");
  }
  /* Nothing binds a source's own parameters: read, they would be NULL
   * without a word. */
  if (sqlite3_bind_parameter_count(st) > 0) {
    const char *pn = sqlite3_bind_parameter_name(st, 1);
    rt_errorf(err, -1,
              "FROM: a SQL source cannot read parameters yet (%s is one): use it in a "
              "stage after the source, e.g. |> WHERE",
              pn ? pn : "?");
    sqlite3_finalize(st);
    return 0;
  }
  char **names = rt_arena_alloc(a, sizeof(char *) * (size_t)n);
  rt_type *types = rt_arena_alloc(a, sizeof(rt_type) * (size_t)n);
  int unknown = 0;
  for (int c = 0; names && types && c < n; c++) {
    const char *nm = sqlite3_column_name(st, c);
    if (!(names[c] = rt_arena_strdup(a, nm ? nm : ""))) names = NULL;
    types[c] = sql_decl_type(sqlite3_column_decltype(st, c));
    unknown += types[c] == RT_NULLT;
  }
  if (!names || !types) {
    sqlite3_finalize(st);
    return rt_errorf(err, -1, "FROM: out of memory");
  }
  out->ncols = n;
  out->names = names;
  out->types = types;
  /* Every type declared: nothing to read before the run (which prepares
   * its own pruned query). */
  if (!unknown) {
    sqlite3_finalize(st);
    return 1;
  }
  out->sampled = 1;
  rt_sqlsrc *s = source_new(db, st, sp);
  if (!s) {
    sqlite3_finalize(st);
    return rt_errorf(err, -1, "FROM: out of memory");
  }
  if (!read_primed(s, err) || !decide_types(s, names, types, err)) {
    rt_sqlsrc_close(s);
    return 0;
  }
  if (sqlite3_stmt_status(st, SQLITE_STMTSTATUS_REPREPARE, 0) > 0) {
    rt_sqlsrc_close(s);
    return 2;
  }
  *primed = s;
  return 1;
}

int rt_sql_prime(void *db, const char *sql, rt_strpool *sp, rt_arena *a, rt_sqlcols *out,
                 rt_sqlsrc **primed, rt_err *err) {
  rt_sqlsrc *s = NULL;
  int rc = 2;
  for (int tries = 0; rc == 2 && tries < 3; tries++) rc = prime_once(db, sql, sp, a, out, &s, err);
  if (rc == 2) return rt_errorf(err, -1, "FROM: the query's columns keep changing");
  if (primed) *primed = s;
  else rt_sqlsrc_close(s);
  return rc;
}

int rt_sql_describe(void *db, const char *sql, rt_arena *a, rt_sqlcols *out, rt_err *err) {
  return rt_sql_prime(db, sql, NULL, a, out, NULL, err);
}

/* ---- reading ------------------------------------------------------------------ */

/* The type name of a value, as the inferred-type error says it. */
static const char *value_type_word(int sqlite_type) {
  switch (sqlite_type) {
  case SQLITE_INTEGER: return "integer";
  case SQLITE_FLOAT: return "double";
  case SQLITE_TEXT: return "string";
  default: return "blob";
  }
}

/* A value on its way into a column: SQLite type, number or text. */
typedef struct sval {
  int t;
  int64_t i;
  double f;
  const char *s;
  size_t len;
} sval;

static int value_error(rt_sqlsrc *s, const sqlcol *col, const sval *v, int64_t row, rt_err *err) {
  s->failed = 1;
  /* A column without a declared type was typed from the values of its
   * first rows (rt_sql_prime, the same affinity rule): say so, in
   * Perfetto's words. */
  if (col->inferred) {
    const char *why = "";
    if (v->t == SQLITE_FLOAT && col->store == RT_I64)
      why = v->f == floor(v->f) ? " (a real out of the integer range)" : " (a real with a fraction)";
    return rt_errorf(err, -1, "%s: column '%s' was inferred to be %s from its first rows, but "
                     "row %lld is %s%s", s->stage, col->name, type_word(col->store),
                     (long long)row, value_type_word(v->t), why);
  }
  if (v->t == SQLITE_FLOAT && col->store == RT_I64) {
    int whole = v->f == floor(v->f);
    return rt_errorf(err, -1, "%s: column '%s' has a real value %s in row %lld, "
                     "but its type is integer", s->stage, col->name,
                     whole ? "out of the integer range" : "with a fraction", (long long)row);
  }
  return rt_errorf(err, -1, "%s: column '%s' has %s value in row %lld, but its type is %s",
                   s->stage, col->name, value_word(v->t), (long long)row, type_word(col->store));
}

/* A real stored into an integer column converts only when it is a whole
 * number inside int64's range: 3.0 → 3, but 3.5 or 1e300 is an error.
 * 2^63 itself is out of range, hence `<` on the upper bound. */
static int real_to_int(double d, int64_t *out) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return 0;
  if (d != floor(d)) return 0;
  *out = (int64_t)d;
  return 1;
}

static uint32_t intern_text(rt_sqlsrc *s, sqlcol *col, const char *txt, size_t len) {
  if (!txt) txt = "";
  if (col->has_last) {
    size_t llen;
    const char *last = rt_str_get(s->sp, col->last_id, &llen);
    if (llen == len && memcmp(last, txt, len) == 0) return col->last_id;
  }
  uint32_t id = rt_str_intern(s->sp, txt, len);
  if (!id && len) return RT_STR_FAILED;   /* refused: the caller reports it */
  col->last_id = id;
  col->has_last = 1;
  return id;
}

/* Stores value v at slot r of column col; -1 (error set) when it does not
 * fit the column's type. NULLs only mark *any_null. */
static int store(rt_sqlsrc *s, sqlcol *col, uint32_t r, const sval *v, uint8_t *any_null,
                 rt_err *err) {
  if (v->t == SQLITE_NULL) {
    *any_null = 1;
    /* Zero the slot so a NULL never exposes a stale value. */
    if (col->store == RT_STR) ((uint32_t *)col->data)[r] = 0;
    else ((int64_t *)col->data)[r] = 0;
    return 0;
  }
  switch (col->store) {
  case RT_I64: {
    int64_t x;
    if (v->t == SQLITE_INTEGER) x = v->i;
    else if (v->t != SQLITE_FLOAT || !real_to_int(v->f, &x))
      return value_error(s, col, v, s->rows, err), -1;
    ((int64_t *)col->data)[r] = x;
    break;
  }
  case RT_F64:
    if (v->t == SQLITE_FLOAT) ((double *)col->data)[r] = v->f;
    else if (v->t == SQLITE_INTEGER) ((double *)col->data)[r] = (double)v->i;
    else return value_error(s, col, v, s->rows, err), -1;
    break;
  default:
    if (v->t != SQLITE_TEXT) return value_error(s, col, v, s->rows, err), -1;
    if ((((uint32_t *)col->data)[r] = intern_text(s, col, v->s, v->len)) == RT_STR_FAILED) {
      s->failed = 1;
      return rt_errorf(err, -1, "%s: column '%s' in row %lld: %s", s->stage, col->name,
                       (long long)s->rows, rt_strpool_error(s->sp)), -1;
    }
    break;
  }
  col->valid[r >> 6] |= 1ull << (r & 63);
  return 0;
}

/* The value of a primed cell. */
static void cell_value(const rt_sqlsrc *s, const pcell *p, sval *v) {
  v->t = p->kind;
  if (p->kind == SQLITE_INTEGER) v->i = p->u.i;
  else if (p->kind == SQLITE_FLOAT) v->f = p->u.f;
  else if (p->kind == SQLITE_TEXT || p->kind == SQLITE_BLOB) {
    v->s = s->text.data ? s->text.data + p->u.s.off : "";
    v->len = p->u.s.len;
  }
}

/* The value of the current row's column c. One column lookup per value:
 * sqlite3_column_* would each take the connection's mutex and find the
 * column again. The value is "unprotected", which only matters across
 * threads; the engine is used by one thread at a time. */
static void step_value(sqlite3_stmt *st, int c, sval *v) {
  sqlite3_value *val = sqlite3_column_value(st, c);
  v->t = sqlite3_value_type(val);
  if (v->t == SQLITE_INTEGER) v->i = sqlite3_value_int64(val);
  else if (v->t == SQLITE_FLOAT) v->f = sqlite3_value_double(val);
  else if (v->t == SQLITE_TEXT) {
    v->s = (const char *)sqlite3_value_text(val);
    v->len = (size_t)sqlite3_value_bytes(val);
  }
}

int rt_sqlsrc_next(rt_sqlsrc *s, rt_view *views, uint32_t *n, rt_err *err) {
  *n = 0;
  if (s->failed) return -1;
  const int ncols = s->ncols;
  if (ncols == 0) {
    s->failed = 1;
    return rt_errorf(err, -1, "FROM: the source was never typed"), -1;
  }
  if (s->done && s->pend_at >= s->npend) return 0;
  sqlcol *cols = s->cols;
  sqlite3_stmt *st = s->st;
  uint8_t any_null[ncols];
  for (int c = 0; c < ncols; c++) {
    memset(cols[c].valid, 0, RT_BITWORDS(RT_BATCH) * sizeof(uint64_t));
    any_null[c] = 0;
  }

  uint32_t r = 0;
  sval v = {0};
  /* The rows read while typing, first. */
  for (; r < RT_BATCH && s->pend_at < s->npend; r++, s->pend_at++) {
    s->rows++;
    const pcell *row = s->pend + s->pend_at * s->nsrc;
    for (int c = 0; c < ncols; c++) {
      cell_value(s, &row[cols[c].at], &v);
      if (store(s, &cols[c], r, &v, &any_null[c], err) < 0) return -1;
    }
  }
  if (s->pend && s->pend_at >= s->npend) {
    free(s->pend);
    s->pend = NULL;
    rt_buf_free(&s->text);
  }
  while (r < RT_BATCH && !s->done) {
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
      s->done = 1;
      break;
    }
    if (rc != SQLITE_ROW) {
      s->failed = 1;
      return rt_errorf(err, -1, "%s: %s", s->stage, sqlite3_errmsg(s->db)), -1;
    }
    s->rows++;
    for (int c = 0; c < ncols; c++) {
      step_value(st, cols[c].at, &v);
      if (store(s, &cols[c], r, &v, &any_null[c], err) < 0) return -1;
    }
    r++;
  }
  if (r == 0) return 0;
  for (int c = 0; c < ncols; c++) {
    views[c].type = cols[c].view_type;
    views[c].data = cols[c].data;
    /* A batch without NULLs gets no validity bits, so consumers take their
     * no-NULL fast path. */
    views[c].valid = any_null[c] ? cols[c].valid : NULL;
    views[c].sel = NULL;
    views[c].base = 0;
  }
  *n = r;
  return 1;
}

void rt_sqlsrc_close(rt_sqlsrc *s) {
  if (!s) return;
  sqlite3_finalize(s->st);
  free(s->cols);
  free(s->mem);
  free(s->stage);
  free(s->pend);
  rt_buf_free(&s->text);
  free(s);
}
