/*
 * vtab.c — the pipejit SQLite virtual tables: the "pipejit" module over
 * catalog tables (temp."name"), the eponymous module per exposed table,
 * and eponymous modules over any rt_vsource (vtab.h).
 *
 * Every virtual table reads through a source: a catalog source looks its
 * table up by name at each scan (so a replaced table is seen by the next
 * statement) and checks the columns are still the declared ones; other
 * sources are their registrant's. Values are read from the columnar arrays
 * in place (strings straight from the pool, which never moves its bytes,
 * so they are handed to SQLite as SQLITE_STATIC). Planning and the rows a
 * scan reads are vtab_plan.c's.
 */
#include <pthread.h>
#include <stdlib.h>

#include "vtab.h"
#include "vtab_plan.h"

/* ---- per-connection state of the catalog module ------------------------------ */

/* The catalog a connection's "pipejit" module reads, found again by
 * rt_vtab_expose (which is given only the connection) in a short list. */
typedef struct vt_aux {
  sqlite3 *db;
  rt_catalog *cat;
  rt_strpool *sp;
  rt_vtab_stats *stats;
  struct vt_aux *next;
} vt_aux;

static pthread_mutex_t g_aux_lock = PTHREAD_MUTEX_INITIALIZER;
static vt_aux *g_auxes;

static void aux_free(void *p) {
  vt_aux *aux = p;
  pthread_mutex_lock(&g_aux_lock);
  for (vt_aux **at = &g_auxes; *at; at = &(*at)->next)
    if (*at == aux) {
      *at = aux->next;
      break;
    }
  pthread_mutex_unlock(&g_aux_lock);
  free(aux);
}

static vt_aux *aux_find(sqlite3 *db) {
  pthread_mutex_lock(&g_aux_lock);
  vt_aux *a = g_auxes;
  while (a && a->db != db) a = a->next;
  pthread_mutex_unlock(&g_aux_lock);
  return a;
}

/* ---- catalog sources ------------------------------------------------------------ */

typedef struct cat_src {
  rt_vsource base;
  vt_aux *aux;
  char *name;
  char **names;
  rt_type *types;
} cat_src;

static const char *sql_type(rt_type t) {
  return t == RT_F64 ? "REAL" : t == RT_STR ? "TEXT" : "INTEGER";
}

static rt_table *cat_peek(rt_vsource *self) {
  cat_src *s = (cat_src *)self;
  return rt_catalog_get(s->aux->cat, s->name);
}

static rt_table *cat_open(rt_vsource *self, sqlite3_value **args, char **msg) {
  (void)args;
  cat_src *s = (cat_src *)self;
  rt_table *t = rt_catalog_get(s->aux->cat, s->name);
  if (!t) {
    *msg = sqlite3_mprintf("columnar table %s no longer exists", s->name);
    return NULL;
  }
  /* After CREATE OR REPLACE the columns may differ from the declared ones;
   * SQLite compiled the statement against the declaration. */
  int same = t->ncols == self->ncols;
  for (int c = 0; same && c < t->ncols; c++)
    same = strcmp(t->cols[c].name, s->names[c]) == 0 &&
           strcmp(sql_type(t->cols[c].type), sql_type(s->types[c])) == 0;
  if (!same) {
    *msg = sqlite3_mprintf("columnar table %s changed its columns; expose it again", s->name);
    return NULL;
  }
  return rt_table_ref(t);
}

static void cat_destroy(rt_vsource *self) {
  cat_src *s = (cat_src *)self;
  for (int c = 0; c < self->ncols; c++) sqlite3_free(s->names[c]);
  sqlite3_free(s->names);
  sqlite3_free(s->types);
  sqlite3_free(s->name);
  sqlite3_free(s);
}

/* A source over catalog table `name` with t's columns (NULL when out of
 * memory). */
static rt_vsource *cat_src_new(vt_aux *aux, const rt_table *t, const char *name) {
  cat_src *s = sqlite3_malloc(sizeof *s);
  if (!s) return NULL;
  memset(s, 0, sizeof *s);
  s->aux = aux;
  s->name = sqlite3_mprintf("%s", name);
  s->names = sqlite3_malloc64(sizeof *s->names * (size_t)(t->ncols + 1));
  s->types = sqlite3_malloc64(sizeof *s->types * (size_t)(t->ncols + 1));
  if (!s->name || !s->names || !s->types) {
    sqlite3_free(s->name);
    sqlite3_free(s->names);
    sqlite3_free(s->types);
    sqlite3_free(s);
    return NULL;
  }
  for (int c = 0; c < t->ncols; c++) {
    s->names[c] = sqlite3_mprintf("%s", t->cols[c].name);
    s->types[c] = t->cols[c].type;
    if (!s->names[c]) {
      s->base.ncols = c;
      cat_destroy(&s->base);
      return NULL;
    }
  }
  rt_vsource *b = &s->base;
  b->ncols = t->ncols;
  b->names = (const char *const *)s->names;
  b->types = s->types;
  b->what = s->name;
  b->sp = aux->sp;
  b->stats = aux->stats;
  b->peek = cat_peek;
  b->open = cat_open;
  b->destroy = cat_destroy;
  return b;
}

/* ---- the virtual table ------------------------------------------------------------ */

typedef struct vt_tab {
  sqlite3_vtab base;
  rt_vsource *src;
  int owns_src;           /* a temp."name" table's own catalog source */
} vt_tab;

/* An argument value a table was opened with, kept without a SQLite value
 * of its own (a copy per call was a malloc and a free per row of a join):
 * numbers in place, text and blobs in a buffer the cursor reuses. */
typedef struct vt_arg {
  int type;               /* SQLITE_INTEGER, _FLOAT, _TEXT, _BLOB or _NULL */
  sqlite3_int64 i;
  double f;
  char *bytes;            /* TEXT, BLOB (sqlite3_malloc'd, cap bytes) */
  int n, cap;
} vt_arg;

typedef struct vt_cursor {
  sqlite3_vtab_cursor base;
  rt_table *t;            /* referenced while the cursor keeps it */
  vt_arg *args;           /* the arguments t was opened with (nargs; kept
                             across scans) */
  vt_rows rows;
  int64_t pos;
} vt_cursor;

/* CREATE TABLE x("a" INTEGER, …, "arg" HIDDEN, …) */
static int declare(sqlite3 *db, const rt_vsource *src, char **err) {
  if (src->ncols <= 0) {
    *err = sqlite3_mprintf("%s has no columns", src->what ? src->what : "the table");
    return SQLITE_ERROR;
  }
  sqlite3_str *s = sqlite3_str_new(db);
  sqlite3_str_appendall(s, "CREATE TABLE x(");
  for (int c = 0; c < src->ncols; c++)
    sqlite3_str_appendf(s, "%s\"%w\" %s", c ? ", " : "", src->names[c], sql_type(src->types[c]));
  for (int k = 0; k < src->nargs; k++) {
    if (src->arg_names) sqlite3_str_appendf(s, ", \"%w\" HIDDEN", src->arg_names[k]);
    else sqlite3_str_appendf(s, ", __pj_arg%d HIDDEN", k + 1);
  }
  sqlite3_str_appendall(s, ")");
  char *sql = sqlite3_str_finish(s);
  if (!sql) return SQLITE_NOMEM;
  int rc = sqlite3_declare_vtab(db, sql);
  sqlite3_free(sql);
  if (rc != SQLITE_OK)
    *err = sqlite3_mprintf("cannot declare %s: %s", src->what ? src->what : "the table",
                           sqlite3_errmsg(db));
  /* Reading a table has no side effects, so it is safe in views and
   * triggers even with trusted_schema off. */
  else sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  return rc;
}

static int tab_new(sqlite3 *db, rt_vsource *src, int owns, sqlite3_vtab **out, char **err) {
  int rc = declare(db, src, err);
  vt_tab *v = rc == SQLITE_OK ? sqlite3_malloc(sizeof *v) : NULL;
  if (!v) {
    if (owns) src->destroy(src);
    return rc == SQLITE_OK ? SQLITE_NOMEM : rc;
  }
  memset(v, 0, sizeof *v);
  v->src = src;
  v->owns_src = owns;
  *out = &v->base;
  return SQLITE_OK;
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

/* "pipejit" xCreate and xConnect: argv = module, schema, table name[,
 * catalog name]. */
static int named_connect(sqlite3 *db, void *auxp, int argc, const char *const *argv,
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
  rt_vsource *src = cat_src_new(aux, t, name);
  sqlite3_free(name);
  if (!src) return SQLITE_NOMEM;
  return tab_new(db, src, 1, out, err);
}

/* Eponymous modules: the source is the module's. */
static int source_connect(sqlite3 *db, void *auxp, int argc, const char *const *argv,
                          sqlite3_vtab **out, char **err) {
  (void)argc;
  (void)argv;
  return tab_new(db, auxp, 0, out, err);
}

static int vt_disconnect(sqlite3_vtab *base) {
  vt_tab *v = (vt_tab *)base;
  if (v->owns_src) v->src->destroy(v->src);
  sqlite3_free(v);
  return SQLITE_OK;
}

static int vt_best_index_cb(sqlite3_vtab *base, sqlite3_index_info *info) {
  rt_vsource *src = ((vt_tab *)base)->src;
  vt_shape sh = {src->ncols, src->names, src->types, src->nargs};
  rt_table *t = src->peek ? src->peek(src) : NULL;
  return vt_best_index(&sh, t, src->est_rows, info);
}

/* ---- scanning ------------------------------------------------------------------------ */

static int vt_open(sqlite3_vtab *base, sqlite3_vtab_cursor **out) {
  (void)base;
  vt_cursor *cur = sqlite3_malloc(sizeof *cur);
  if (!cur) return SQLITE_NOMEM;
  memset(cur, 0, sizeof *cur);
  *out = &cur->base;
  return SQLITE_OK;
}

static void drop_table(vt_cursor *cur) {
  rt_table_unref(cur->t);
  cur->t = NULL;
}

static int vt_close(sqlite3_vtab_cursor *base) {
  vt_cursor *cur = (vt_cursor *)base;
  drop_table(cur);
  for (int k = 0; cur->args && k < ((vt_tab *)base->pVtab)->src->nargs; k++)
    sqlite3_free(cur->args[k].bytes);
  sqlite3_free(cur->args);
  free(cur->rows.owned);
  sqlite3_free(cur);
  return SQLITE_OK;
}

/* The bytes of a TEXT or BLOB value (never NULL when n > 0). */
static const void *value_bytes(sqlite3_value *v, int type, int *n) {
  const void *p = type == SQLITE_TEXT ? (const void *)sqlite3_value_text(v) : sqlite3_value_blob(v);
  *n = sqlite3_value_bytes(v);
  return p;
}

/* The kept argument is the value b: the same call (same type and bytes). */
static int same_value(const vt_arg *a, sqlite3_value *b) {
  int t = sqlite3_value_type(b);
  if (t != a->type) return 0;
  switch (t) {
  case SQLITE_NULL: return 1;
  case SQLITE_INTEGER: return sqlite3_value_int64(b) == a->i;
  case SQLITE_FLOAT: {
    double y = sqlite3_value_double(b);
    return memcmp(&a->f, &y, sizeof y) == 0;
  }
  default: {
    int n;
    const void *q = value_bytes(b, t, &n);
    return n == a->n && (n == 0 || memcmp(a->bytes, q, (size_t)n) == 0);
  }
  }
}

/* Keeps value v as argument a; 0 when out of memory. */
static int keep_value(vt_arg *a, sqlite3_value *v) {
  a->type = sqlite3_value_type(v);
  a->n = 0;
  switch (a->type) {
  case SQLITE_INTEGER: a->i = sqlite3_value_int64(v); return 1;
  case SQLITE_FLOAT: a->f = sqlite3_value_double(v); return 1;
  case SQLITE_TEXT:
  case SQLITE_BLOB: {
    int n;
    const void *p = value_bytes(v, a->type, &n);
    if (n > a->cap) {
      char *b = sqlite3_realloc64(a->bytes, (sqlite3_uint64)n);
      if (!b) return 0;
      a->bytes = b;
      a->cap = n;
    }
    if (n) memcpy(a->bytes, p, (size_t)n);
    a->n = n;
    return 1;
  }
  default: return 1;
  }
}

static void arg_result(sqlite3_context *ctx, const vt_arg *a) {
  switch (a->type) {
  case SQLITE_INTEGER: sqlite3_result_int64(ctx, a->i); break;
  case SQLITE_FLOAT: sqlite3_result_double(ctx, a->f); break;
  case SQLITE_TEXT: sqlite3_result_text(ctx, a->n ? a->bytes : "", a->n, SQLITE_TRANSIENT); break;
  case SQLITE_BLOB: sqlite3_result_blob(ctx, a->n ? a->bytes : "", a->n, SQLITE_TRANSIENT); break;
  default: sqlite3_result_null(ctx); break;
  }
}

static int tab_error(vt_tab *v, int rc, char *msg) {
  sqlite3_free(v->base.zErrMsg);
  v->base.zErrMsg = msg;
  return rc;
}

static int vt_filter(sqlite3_vtab_cursor *base, int idx, const char *idx_str, int argc,
                     sqlite3_value **argv) {
  vt_cursor *cur = (vt_cursor *)base;
  vt_tab *v = (vt_tab *)base->pVtab;
  rt_vsource *src = v->src;
  int nargs = src->nargs;
  free(cur->rows.owned);
  memset(&cur->rows, 0, sizeof cur->rows);
  cur->pos = 0;
  if ((idx & VT_MISSING_ARGS) || argc < nargs)
    return tab_error(v, SQLITE_ERROR,
                     sqlite3_mprintf("%s takes %d argument%s", src->what ? src->what : "the table",
                                     nargs, nargs == 1 ? "" : "s"));
  /* The same arguments as the table the cursor holds: read it again. */
  int reuse = cur->t != NULL;
  for (int k = 0; reuse && k < nargs; k++) reuse = same_value(&cur->args[k], argv[k]);
  if (!reuse) {
    drop_table(cur);
    if (nargs && !cur->args) {
      cur->args = sqlite3_malloc64(sizeof *cur->args * (size_t)nargs);
      if (!cur->args) return SQLITE_NOMEM;
      memset(cur->args, 0, sizeof *cur->args * (size_t)nargs);
    }
    char *msg = NULL;
    rt_table *t = src->open(src, argv, &msg);
    if (!t) return msg ? tab_error(v, SQLITE_ERROR, msg) : SQLITE_NOMEM;
    if (src->stats) src->stats->opens++;
    if (t->ncols != src->ncols) {
      rt_table_unref(t);
      return tab_error(v, SQLITE_ERROR,
                       sqlite3_mprintf("%s now has %d columns, but the statement was prepared "
                                       "for %d", src->what ? src->what : "the table",
                                       t->ncols, src->ncols));
    }
    for (int k = 0; k < nargs; k++)
      if (!keep_value(&cur->args[k], argv[k])) {
        rt_table_unref(t);   /* the cursor holds no table: the next scan opens one */
        return SQLITE_NOMEM;
      }
    cur->t = t;
  }
  int rc = vt_select(cur->t, src->sp, idx, idx_str, argc - nargs, argv + nargs, src->stats,
                     &cur->rows);
  if (rc != SQLITE_OK) return rc;
  cur->pos = cur->rows.desc ? cur->rows.hi - 1 : cur->rows.lo;
  return SQLITE_OK;
}

static int vt_next(sqlite3_vtab_cursor *base) {
  vt_cursor *cur = (vt_cursor *)base;
  cur->pos += cur->rows.desc ? -1 : 1;
  return SQLITE_OK;
}

static int vt_eof(sqlite3_vtab_cursor *base) {
  vt_cursor *cur = (vt_cursor *)base;
  return !cur->t || cur->pos < cur->rows.lo || cur->pos >= cur->rows.hi;
}

static int64_t cur_row(const vt_cursor *cur) {
  return cur->rows.rows ? cur->rows.rows[cur->pos] : cur->pos;
}

void rt_vtab_result(sqlite3_context *ctx, const rt_table *t, int c, int64_t r,
                    const rt_strpool *sp) {
  const rt_column *col = &t->cols[c];
  if (col->valid && !rt_bit(col->valid, (uint32_t)r)) return;  /* NULL */
  switch (col->type) {
  case RT_ID: sqlite3_result_int64(ctx, r); break;
  case RT_U32: sqlite3_result_int64(ctx, ((const uint32_t *)col->data)[r]); break;
  case RT_I32: sqlite3_result_int64(ctx, ((const int32_t *)col->data)[r]); break;
  case RT_F64: sqlite3_result_double(ctx, ((const double *)col->data)[r]); break;
  case RT_STR: {
    size_t len;
    /* Pool bytes never move or die while the engine lives. */
    const char *s = rt_str_get(sp, ((const uint32_t *)col->data)[r], &len);
    sqlite3_result_text64(ctx, s, len, SQLITE_STATIC, SQLITE_UTF8);
    break;
  }
  default: sqlite3_result_int64(ctx, ((const int64_t *)col->data)[r]); break;
  }
}

static int vt_column(sqlite3_vtab_cursor *base, sqlite3_context *ctx, int c) {
  vt_cursor *cur = (vt_cursor *)base;
  rt_vsource *src = ((vt_tab *)base->pVtab)->src;
  if (c >= src->ncols) {   /* a hidden argument: what was passed */
    int k = c - src->ncols;
    if (cur->t && cur->args && k < src->nargs) arg_result(ctx, &cur->args[k]);
    return SQLITE_OK;
  }
  rt_vtab_result(ctx, cur->t, c, cur_row(cur), src->sp);
  return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *base, sqlite3_int64 *out) {
  *out = cur_row((vt_cursor *)base);
  return SQLITE_OK;
}

/* The two modules differ only in how a table comes to be: one method
 * table for planning and scanning serves both. */
#define VT_SCAN_METHODS                                                                   \
  .xBestIndex = vt_best_index_cb, .xDisconnect = vt_disconnect, .xDestroy = vt_disconnect, \
  .xOpen = vt_open, .xClose = vt_close, .xFilter = vt_filter, .xNext = vt_next,            \
  .xEof = vt_eof, .xColumn = vt_column, .xRowid = vt_rowid

static const sqlite3_module vt_named_module = {
    .iVersion = 1,
    .xCreate = named_connect,
    .xConnect = named_connect,
    VT_SCAN_METHODS,
};

/* xCreate NULL: eponymous only (no CREATE VIRTUAL TABLE … USING name). */
static const sqlite3_module vt_source_module = {
    .iVersion = 1,
    .xCreate = NULL,
    .xConnect = source_connect,
    VT_SCAN_METHODS,
};

/* ---- registration and exposure ------------------------------------------------------ */

int rt_vtab_register(sqlite3 *db, rt_catalog *cat, rt_strpool *sp, rt_vtab_stats *stats) {
  vt_aux *aux = malloc(sizeof *aux);
  if (!aux) return SQLITE_NOMEM;
  *aux = (vt_aux){db, cat, sp, stats, NULL};
  pthread_mutex_lock(&g_aux_lock);
  aux->next = g_auxes;
  g_auxes = aux;
  pthread_mutex_unlock(&g_aux_lock);
  /* SQLite calls aux_free when the module goes, even if this fails. */
  return sqlite3_create_module_v2(db, "pipejit", &vt_named_module, aux, aux_free);
}

static void source_free(void *p) {
  rt_vsource *src = p;
  src->destroy(src);
}

int rt_vtab_register_source(sqlite3 *db, const char *module, rt_vsource *src) {
  return sqlite3_create_module_v2(db, module, &vt_source_module, src, source_free);
}

int rt_vtab_unregister(sqlite3 *db, const char *module) {
  return sqlite3_create_module_v2(db, module, NULL, NULL, NULL);
}

/* Module names a table must not take over: SQLite's own (eponymous or
 * not), the extension's and ours. */
static int reserved_module(const char *name) {
  static const char *const names[] = {
      "pipejit", "pipeline", "json_each", "json_tree", "fts3", "fts4", "fts5", "fts5vocab",
      "fts3tokenize", "rtree", "rtree_i32", "geopoly", "dbstat", "sqlite_dbpage",
      "sqlite_stmt", "zipfile", "generate_series", "carray", "completion", "csv", "series",
  };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (sqlite3_stricmp(name, names[i]) == 0) return 1;
  return sqlite3_strnicmp(name, "pragma_", 7) == 0 || sqlite3_strnicmp(name, "sqlite_", 7) == 0 ||
         sqlite3_strnicmp(name, "__pj_", 5) == 0;
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
  int what = temp_object(db, name, &rc);
  if (rc != SQLITE_OK) return set_err(errmsg, sqlite3_mprintf("%s", sqlite3_errmsg(db)));
  if (what != 1) return SQLITE_OK;
  if (!reserved_module(name)) rt_vtab_unregister(db, name);
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
  if (rc != SQLITE_OK || reserved_module(name)) return rc;
  /* The eponymous table, for the main schema's views and triggers. */
  vt_aux *aux = aux_find(db);
  rt_table *t = aux ? rt_catalog_get(aux->cat, name) : NULL;
  if (!t) return SQLITE_OK;
  rt_vsource *src = cat_src_new(aux, t, name);
  if (!src) return SQLITE_NOMEM;
  return rt_vtab_register_source(db, name, src);
}

int rt_vtab_expose_all(sqlite3 *db, rt_catalog *cat, char **errmsg) {
  for (int i = 0; i < rt_catalog_count(cat); i++) {
    int rc = rt_vtab_expose(db, rt_catalog_at(cat, i)->name, errmsg);
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}
