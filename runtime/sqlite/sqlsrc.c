/*
 * sqlsrc.c — reading SQLite query results into columnar batches.
 *
 * rt_sql_describe tells the binder what a SQL source returns (names and
 * types); rt_sqlsrc steps the prepared query and copies its values into
 * per-source buffers that batch views point at. What the SQL text is (the
 * `WITH __pipeline_source …` wrapper that prunes columns) is the caller's
 * business; here we only prepare, step and copy.
 *
 * Typing is static: a column's type is fixed before the first row is read,
 * and a later value that does not fit it stops the query with an error
 * naming the column and the (1-based) row, rather than silently changing
 * types mid-stream. For a column typed from its first rows the error is
 * Perfetto's: `column 'value' was inferred to be integer from its first
 * rows, but row 9000 is string`.
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

/* ---- describe ----------------------------------------------------------- */

/* Decides the types of the undeclared columns (types[c] == RT_NULLT) from
 * the values of the first RT_BATCH rows. */
static int sample_types(sqlite3 *db, sqlite3_stmt *st, int ncols, char **names,
                        rt_type *types, rt_err *err) {
  enum { SEEN_INT = 1, SEEN_REAL = 2, SEEN_TEXT = 4 };
  uint8_t seen[ncols];
  int64_t text_row[ncols], num_row[ncols];
  memset(seen, 0, sizeof seen);
  for (int c = 0; c < ncols; c++) text_row[c] = num_row[c] = 0;

  for (int64_t row = 1; row <= RT_BATCH; row++) {
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return rt_errorf(err, -1, "FROM: %s", sqlite3_errmsg(db));
    for (int c = 0; c < ncols; c++) {
      if (types[c] != RT_NULLT) continue;
      switch (sqlite3_column_type(st, c)) {
      case SQLITE_INTEGER: seen[c] |= SEEN_INT; if (!num_row[c]) num_row[c] = row; break;
      case SQLITE_FLOAT: seen[c] |= SEEN_REAL; if (!num_row[c]) num_row[c] = row; break;
      case SQLITE_TEXT: seen[c] |= SEEN_TEXT; if (!text_row[c]) text_row[c] = row; break;
      case SQLITE_BLOB:
        return rt_errorf(err, -1, "FROM: column '%s' has a blob value in row %lld, "
                         "which a pipeline cannot read", names[c], (long long)row);
      default: break;
      }
    }
  }
  for (int c = 0; c < ncols; c++) {
    if (types[c] != RT_NULLT) continue;
    if ((seen[c] & SEEN_TEXT) && (seen[c] & (SEEN_INT | SEEN_REAL)))
      return rt_errorf(err, -1,
                       "FROM: column '%s' mixes text (row %lld) and numbers (row %lld), "
                       "so it has no single type: CAST it to one",
                       names[c], (long long)text_row[c], (long long)num_row[c]);
    types[c] = (seen[c] & SEEN_TEXT) ? RT_STR : (seen[c] & SEEN_REAL) ? RT_F64 : RT_I64;
  }
  return 1;
}

/* One try of rt_sql_describe; 2 when sampling the values made SQLite
 * prepare the statement again (a virtual table changed its columns as it
 * ran: the extension's pipeline(), nested in a pipeline's SQL source), so
 * the names and types read before are of the old statement. */
static int describe_once(sqlite3 *db, const char *sql, rt_arena *a, rt_sqlcols *out,
                         rt_err *err);

int rt_sql_describe(void *dbv, const char *sql, rt_arena *a, rt_sqlcols *out, rt_err *err) {
  int rc = 2;
  for (int tries = 0; rc == 2 && tries < 3; tries++) rc = describe_once(dbv, sql, a, out, err);
  if (rc == 2) return rt_errorf(err, -1, "FROM: the query's columns keep changing");
  return rc;
}

static int describe_once(sqlite3 *db, const char *sql, rt_arena *a, rt_sqlcols *out,
                         rt_err *err) {
  sqlite3_stmt *st;
  memset(out, 0, sizeof *out);
  if (!prepare(db, sql, "FROM", &st, err)) return 0;

  int n = sqlite3_column_count(st);
  if (n == 0) {
    sqlite3_finalize(st);
    return rt_errorf(err, -1, "FROM: expected a query that returns rows");
  }
  /* Describing may step the query to sample values, and running it steps
   * it again: a statement that writes would write twice. */
  if (!sqlite3_stmt_readonly(st)) {
    sqlite3_finalize(st);
    return rt_errorf(err, -1, "FROM: expected a query that only reads data");
  }
  char **names = rt_arena_alloc(a, sizeof(char *) * (size_t)n);
  rt_type *types = rt_arena_alloc(a, sizeof(rt_type) * (size_t)n);
  int unknown = 0;
  for (int c = 0; c < n; c++) {
    const char *nm = sqlite3_column_name(st, c);
    names[c] = rt_arena_strdup(a, nm ? nm : "");
    types[c] = sql_decl_type(sqlite3_column_decltype(st, c));
    unknown += types[c] == RT_NULLT;
  }
  int ok = unknown ? sample_types(db, st, n, names, types, err) : 1;
  int again = ok && sqlite3_stmt_status(st, SQLITE_STMTSTATUS_REPREPARE, 0) > 0;
  sqlite3_finalize(st);
  if (!ok) return 0;
  if (again) return 2;
  out->ncols = n;
  out->names = names;
  out->types = types;
  out->sampled = unknown > 0;
  return 1;
}

/* ---- cookies ---------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* Hashes, for every database of the connection, its name and the value of
 * `PRAGMA "<name>".<pragma>` (no pragma: only the names). */
static uint64_t hash_databases(sqlite3 *db, const char *pragma) {
  uint64_t h = 14695981039346656037ull;
  sqlite3_stmt *list = NULL;
  if (!db || sqlite3_prepare_v2(db, "PRAGMA database_list", -1, &list, NULL) != SQLITE_OK)
    return 0;
  int rc;
  while ((rc = sqlite3_step(list)) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(list, 1);
    if (!name) continue;
    h = fnv(h, name, strlen(name) + 1);
    if (!pragma) continue;
    char *sql = sqlite3_mprintf("PRAGMA \"%w\".%s", name, pragma);
    sqlite3_stmt *st = NULL;
    int ok = sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
             sqlite3_step(st) == SQLITE_ROW;
    int64_t v = ok ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    sqlite3_free(sql);
    if (!ok) {
      sqlite3_finalize(list);
      return 0;
    }
    h = fnv(h, &v, sizeof v);
  }
  sqlite3_finalize(list);
  if (rc != SQLITE_DONE) return 0;
  return h ? h : 1;
}

uint64_t rt_sql_schema_cookie(void *db) { return hash_databases(db, "schema_version"); }

uint64_t rt_sql_data_cookie(void *dbv) {
  sqlite3 *db = dbv;
  uint64_t h = hash_databases(db, "data_version");
  if (!h) return 0;
  int64_t changes = sqlite3_total_changes64(db);
  h = fnv(h, &changes, sizeof changes);
  return h ? h : 1;
}

/* ---- source --------------------------------------------------------------- */

/* One column's batch buffer. `last_*` caches the most recent string so runs
 * of equal strings (common: names, states) skip the pool's hash lookup. */
typedef struct sqlcol {
  rt_type store;        /* RT_I64, RT_F64 or RT_STR */
  rt_type view_type;    /* what the view reports (RT_BOOL kept as such) */
  void *data;           /* RT_BATCH values */
  uint64_t *valid;      /* RT_BITWORDS(RT_BATCH) words */
  const char *name;
  uint32_t last_id;
  int has_last;
} sqlcol;

struct rt_sqlsrc {
  sqlite3 *db;
  sqlite3_stmt *st;
  rt_strpool *sp;
  int ncols;
  sqlcol *cols;
  int64_t rows;         /* rows read so far, for error messages */
  int done;             /* SQLITE_DONE seen */
  int failed;
  char *stage;
  void *mem;            /* one block holding every column buffer */
};

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
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

  /* Names are copied into one block after the buffers, so the source does
   * not depend on the caller keeping them alive. */
  size_t words = RT_BITWORDS(RT_BATCH);
  size_t per_col = RT_BATCH * sizeof(int64_t) + words * sizeof(uint64_t);
  size_t name_bytes = 0;
  for (int c = 0; c < ncols; c++) name_bytes += strlen(names && names[c] ? names[c] : "") + 1;
  rt_sqlsrc *s = calloc(1, sizeof *s);
  sqlcol *cols = calloc((size_t)(ncols ? ncols : 1), sizeof *cols);
  char *mem = malloc(per_col * (size_t)ncols + name_bytes + 1);
  char *stage_copy = dup_str(stage);
  if (!s || !cols || !mem || !stage_copy) {
    free(s); free(cols); free(mem); free(stage_copy);
    sqlite3_finalize(st);
    rt_errorf(err, -1, "%s: out of memory", stage);
    return NULL;
  }
  char *names_at = mem + per_col * (size_t)ncols;
  for (int c = 0; c < ncols; c++) {
    sqlcol *col = &cols[c];
    col->store = rt_store_type(types[c]);
    col->view_type = types[c] == RT_BOOL ? RT_BOOL : col->store;
    col->data = mem + per_col * (size_t)c;
    col->valid = (uint64_t *)(mem + per_col * (size_t)c + RT_BATCH * sizeof(int64_t));
    const char *nm = names && names[c] ? names[c] : "";
    size_t len = strlen(nm) + 1;
    memcpy(names_at, nm, len);
    col->name = names_at;
    names_at += len;
  }
  s->db = db;
  s->st = st;
  s->sp = sp;
  s->ncols = ncols;
  s->cols = cols;
  s->stage = stage_copy;
  s->mem = mem;
  return s;
}

/* The type name of a value, as the inferred-type error says it. */
static const char *value_type_word(int sqlite_type) {
  switch (sqlite_type) {
  case SQLITE_INTEGER: return "integer";
  case SQLITE_FLOAT: return "double";
  case SQLITE_TEXT: return "string";
  default: return "blob";
  }
}

static int value_error(rt_sqlsrc *s, int c, int sqlite_type, int64_t row, rt_err *err) {
  s->failed = 1;
  /* A column without a declared type was typed from the values of its
   * first rows (rt_sql_describe, the same affinity rule): say so, in
   * Perfetto's words. */
  if (sql_decl_type(sqlite3_column_decltype(s->st, c)) == RT_NULLT) {
    const char *why = "";
    if (sqlite_type == SQLITE_FLOAT && s->cols[c].store == RT_I64) {
      double d = sqlite3_column_double(s->st, c);
      why = d == floor(d) ? " (a real out of the integer range)" : " (a real with a fraction)";
    }
    return rt_errorf(err, -1, "%s: column '%s' was inferred to be %s from its first rows, but "
                     "row %lld is %s%s", s->stage, s->cols[c].name, type_word(s->cols[c].store),
                     (long long)row, value_type_word(sqlite_type), why);
  }
  if (sqlite_type == SQLITE_FLOAT && s->cols[c].store == RT_I64) {
    double d = sqlite3_column_double(s->st, c);
    int whole = d == floor(d);
    return rt_errorf(err, -1, "%s: column '%s' has a real value %s in row %lld, "
                     "but its type is integer", s->stage, s->cols[c].name,
                     whole ? "out of the integer range" : "with a fraction", (long long)row);
  }
  return rt_errorf(err, -1, "%s: column '%s' has %s value in row %lld, but its type is %s",
                   s->stage, s->cols[c].name, value_word(sqlite_type), (long long)row,
                   type_word(s->cols[c].store));
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

static uint32_t intern_text(rt_sqlsrc *s, sqlcol *col, sqlite3_value *val) {
  const char *txt = (const char *)sqlite3_value_text(val);
  size_t len = (size_t)sqlite3_value_bytes(val);
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

int rt_sqlsrc_next(rt_sqlsrc *s, rt_view *views, uint32_t *n, rt_err *err) {
  *n = 0;
  if (s->failed) return -1;
  if (s->done) return 0;
  const int ncols = s->ncols;
  sqlcol *cols = s->cols;
  sqlite3_stmt *st = s->st;
  uint8_t any_null[ncols ? ncols : 1];
  for (int c = 0; c < ncols; c++) {
    memset(cols[c].valid, 0, RT_BITWORDS(RT_BATCH) * sizeof(uint64_t));
    any_null[c] = 0;
  }

  uint32_t r = 0;
  while (r < RT_BATCH) {
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
    const uint64_t bit = 1ull << (r & 63);
    const uint32_t w = r >> 6;
    for (int c = 0; c < ncols; c++) {
      sqlcol *col = &cols[c];
      /* One column lookup per value: sqlite3_column_* would each take the
       * connection's mutex and find the column again. The value is
       * "unprotected", which only matters across threads; the engine is
       * used by one thread at a time. */
      sqlite3_value *val = sqlite3_column_value(st, c);
      int t = sqlite3_value_type(val);
      if (t == SQLITE_NULL) {
        any_null[c] = 1;
        /* Zero the slot so a NULL never exposes a stale value. */
        if (col->store == RT_STR) ((uint32_t *)col->data)[r] = 0;
        else ((int64_t *)col->data)[r] = 0;
        continue;
      }
      switch (col->store) {
      case RT_I64: {
        int64_t v;
        if (t == SQLITE_INTEGER) v = sqlite3_value_int64(val);
        else if (t != SQLITE_FLOAT || !real_to_int(sqlite3_value_double(val), &v))
          return value_error(s, c, t, s->rows, err), -1;
        ((int64_t *)col->data)[r] = v;
        break;
      }
      case RT_F64:
        if (t == SQLITE_FLOAT) ((double *)col->data)[r] = sqlite3_value_double(val);
        else if (t == SQLITE_INTEGER) ((double *)col->data)[r] = (double)sqlite3_value_int64(val);
        else return value_error(s, c, t, s->rows, err), -1;
        break;
      default:
        if (t != SQLITE_TEXT) return value_error(s, c, t, s->rows, err), -1;
        if ((((uint32_t *)col->data)[r] = intern_text(s, col, val)) == RT_STR_FAILED) {
          s->failed = 1;
          return rt_errorf(err, -1, "%s: column '%s' in row %lld: %s", s->stage, col->name,
                           (long long)s->rows, rt_strpool_error(s->sp)), -1;
        }
        break;
      }
      col->valid[w] |= bit;
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
  free(s);
}
