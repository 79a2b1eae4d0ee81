/*
 * pipejit_sqlite.c — the SQLite loadable extension (build/pipejit_sqlite.so).
 *
 *   .load ./build/pipejit_sqlite
 *   SELECT * FROM pipeline('FROM t |> TREE ACCUMULATE UP SUM(v) AS s');
 *   SELECT * FROM pipeline('FROM slice |> WHERE dur > ?', 1000);
 *   CREATE VIRTUAL TABLE temp.big USING pipeline('FROM slice |> WHERE dur > ?');
 *   SELECT name FROM big(1000);
 *   SELECT pipeline_columns('FROM slice |> …');   -- 'id, ts, …' (see below)
 *   SELECT pipeline_view('long', 'FROM slice |> WHERE dur > 1000');
 *   CREATE VIEW v AS SELECT name FROM long;       -- views/triggers: named tables
 *   SELECT pipeline_mode('jit');                  -- or 'interp', 'auto'
 *
 * Each connection that loads the extension gets an engine attached to it
 * (pj__engine_attach: pipelines read the connection's own tables and views
 * through SQLite) and a cache of compiled pipelines keyed by text, so a
 * text compiles once per connection (and its JIT code is reused).
 *
 * Why the columns of `pipeline(text)` work although SQLite fixes a virtual
 * table's columns before any argument is known: SQLite resolves the names
 * of a statement while preparing it, from the schema the module declared
 * when the table was connected, and only hands the text to xBestIndex and
 * xFilter afterwards. So the eponymous table `pipeline` declares the
 * columns of the connection's current "shape" (the output columns of the
 * last pipeline it ran), plus hidden columns for the text and up to
 * PX_MAXARGS parameters. When xFilter gets a text whose output columns
 * differ from the table's, it makes that text's columns the shape,
 * registers the module again (which drops the eponymous table, so the next
 * use connects it again with the new columns) and returns SQLITE_SCHEMA:
 * sqlite3_step then prepares the statement again by itself, and it runs
 * with the pipeline's columns. Limits, which follow from the above:
 *  - a statement that names a column of a text the connection has not run
 *    yet fails in prepare ("no such column"): there is no hook before name
 *    resolution. SELECT * works at once; a named table (CREATE VIRTUAL
 *    TABLE … USING pipeline('…')) or pipeline_columns('…') declares the
 *    columns ahead;
 *  - one statement can use pipeline() with texts of one shape only (two
 *    shapes would re-prepare each other forever; this is detected and
 *    reported after PX_MAX_SWITCHES switches in a row).
 *  - a client that prepares with the legacy sqlite3_prepare() (no
 *    automatic re-prepare) sees "database schema has changed" once.
 * A named table has fixed columns, computed from its text in xCreate and
 * xConnect; its hidden columns take the parameters (big(1000) above).
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "api/engine.h"
#include "ir/plan.h"

#define PX_MAXARGS 16        /* parameters a pipeline() call can pass */
#define PX_CACHE 32          /* compiled pipelines kept per connection */
#define PX_MAX_SWITCHES 3    /* shape changes in a row without a matching run */

/* ---- per-connection state ---------------------------------------------- */

typedef struct px_entry {
  char *text;                /* cache key (malloc'd) */
  pj_query *q;
  uint64_t used;             /* LRU tick */
} px_entry;

/* Shared by every registration of the module on one connection (each
 * registration holds a reference: re-registering releases the old one). */
typedef struct px_conn {
  int refs;
  sqlite3 *db;
  pj_engine *e;
  px_entry cache[PX_CACHE];
  uint64_t tick;
  int nshape;                /* the eponymous table's columns */
  char **shape;
  int switches;              /* shape changes since the last matching run */
} px_conn;

static void names_free(char **names, int n) {
  for (int i = 0; i < n; i++) sqlite3_free(names[i]);
  sqlite3_free(names);
}

/* A copy of names[0..n) (sqlite3_malloc'd), or NULL when out of memory
 * (n == 0 gives a 1-byte allocation so NULL always means failure). */
static char **names_dup(const char *const *names, int n) {
  char **out = sqlite3_malloc64(sizeof *out * (size_t)(n ? n : 1));
  if (!out) return NULL;
  for (int i = 0; i < n; i++) {
    out[i] = sqlite3_mprintf("%s", names[i]);
    if (!out[i]) {
      names_free(out, i);
      return NULL;
    }
  }
  return out;
}

static void conn_unref(void *p) {
  px_conn *c = p;
  if (--c->refs > 0) return;
  for (int i = 0; i < PX_CACHE; i++) {
    pj_query_free(c->cache[i].q);
    free(c->cache[i].text);
  }
  pj_engine_close(c->e);
  names_free(c->shape, c->nshape);
  sqlite3_free(c);
}

/* The output column names of a compiled pipeline (owned by its plan). */
static int out_columns(const pj_query *q, const char *const **names) {
  const ir_op *out = q->plan->segs[q->plan->nsegs - 1].sink;
  *names = out->output.out_names;
  return out->output.nout;
}

/* The compiled pipeline for text, from the cache or compiled now. On error
 * returns NULL with *err set (sqlite3_malloc'd). */
/* The engine's last error as a message for SQLite (sqlite3_malloc'd). */
static char *engine_error(px_conn *c, pj_status s) {
  if (s == PJ_NOMEM) return sqlite3_mprintf("pipeline(): out of memory");
  if (pj_engine_errline(c->e) > 0)
    return sqlite3_mprintf("%s (line %d, column %d)", pj_engine_errmsg(c->e),
                           pj_engine_errline(c->e), pj_engine_errcol(c->e));
  return sqlite3_mprintf("%s", pj_engine_errmsg(c->e));
}

static void conn_forget(px_conn *c, pj_query *q);

/* SQLite needs distinct column names, and the hidden ones are ours. */
static int names_usable(const pj_query *q, char **err) {
  const char *const *names;
  int n = out_columns(q, &names);
  for (int i = 0; i < n; i++) {
    int clash = !sqlite3_strnicmp(names[i], "__pj_", 5);
    for (int j = 0; j < i && !clash; j++) clash = !sqlite3_stricmp(names[i], names[j]);
    if (clash) {
      *err = sqlite3_mprintf("pipeline(): the output has two columns named '%s' (rename one with "
                             "AS)", names[i]);
      return 0;
    }
  }
  return 1;
}

/* A cached pipeline is bound again when what it read changed (a table of
 * the connection was dropped and created again with other columns, say),
 * so its output columns are the ones a run would give. */
static pj_query *conn_query(px_conn *c, const char *text, char **err) {
  int victim = 0;
  for (int i = 0; i < PX_CACHE; i++) {
    if (c->cache[i].text && !strcmp(c->cache[i].text, text)) {
      pj_query *q = c->cache[i].q;
      pj_status s = pj__query_refresh(q);
      if (s != PJ_OK || !names_usable(q, err)) {
        if (s != PJ_OK) *err = engine_error(c, s);
        conn_forget(c, q);
        return NULL;
      }
      c->cache[i].used = ++c->tick;
      return q;
    }
    if (c->cache[i].used < c->cache[victim].used) victim = i;
  }
  pj_query *q = NULL;
  pj_status s = pj_query_compile(c->e, text, &q);
  if (s != PJ_OK) {
    *err = engine_error(c, s);
    return NULL;
  }
  if (!names_usable(q, err)) {
    pj_query_free(q);
    return NULL;
  }
  char *key = strdup(text);
  if (!key) {
    pj_query_free(q);
    *err = sqlite3_mprintf("pipeline(): out of memory");
    return NULL;
  }
  pj_query_free(c->cache[victim].q);
  free(c->cache[victim].text);
  c->cache[victim] = (px_entry){.text = key, .q = q, .used = ++c->tick};
  return q;
}

/* Drops q from the cache: after a failed bind or run its plan may be gone
 * (a rebind for new parameter types failed), so it compiles afresh next
 * time. */
static void conn_forget(px_conn *c, pj_query *q) {
  for (int i = 0; i < PX_CACHE; i++) {
    if (c->cache[i].q != q) continue;
    pj_query_free(q);
    free(c->cache[i].text);
    c->cache[i] = (px_entry){0};
    return;
  }
}

static int same_names(char *const *a, int na, const char *const *b, int nb) {
  if (na != nb) return 0;
  for (int i = 0; i < na; i++)
    if (strcmp(a[i], b[i])) return 0;
  return 1;
}

/* ---- the virtual table -------------------------------------------------- */

static const sqlite3_module px_module;   /* defined below; registered again by switch_shape */

typedef struct px_tab {
  sqlite3_vtab base;
  px_conn *c;
  char *text;                /* named table: its pipeline (sqlite3_malloc'd);
                                eponymous: NULL, the text is an argument */
  int ncols;                 /* visible columns */
  char **cols;
} px_tab;

typedef struct px_cursor {
  sqlite3_vtab_cursor base;
  pj_result *r;
  int64_t row, nrows;
} px_cursor;

/* Hidden columns follow the visible ones: the text (eponymous only), then
 * the parameters. */
static int first_hidden(const px_tab *t) { return t->ncols; }
static int first_arg(const px_tab *t) { return t->ncols + (t->text ? 0 : 1); }

/* Undoes SQL quoting of a module argument: 'a''b' → a'b. */
static char *dequote(const char *arg) {
  while (*arg == ' ') arg++;
  char q = *arg;
  size_t n = strlen(arg);
  while (n && arg[n - 1] == ' ') n--;
  if ((q != '\'' && q != '"') || n < 2 || arg[n - 1] != q) return sqlite3_mprintf("%.*s", (int)n, arg);
  char *out = sqlite3_malloc64(n);
  if (!out) return NULL;
  size_t j = 0;
  for (size_t i = 1; i + 1 < n; i++) {
    out[j++] = arg[i];
    if (arg[i] == q && arg[i + 1] == q) i++;
  }
  out[j] = 0;
  return out;
}

static int declare(sqlite3 *db, px_tab *t) {
  sqlite3_str *s = sqlite3_str_new(db);
  sqlite3_str_appendall(s, "CREATE TABLE x(");
  for (int i = 0; i < t->ncols; i++) sqlite3_str_appendf(s, "\"%w\", ", t->cols[i]);
  if (!t->text) sqlite3_str_appendall(s, "__pj_text HIDDEN, ");
  for (int i = 1; i <= PX_MAXARGS; i++)
    sqlite3_str_appendf(s, "__pj_arg%d HIDDEN%s", i, i < PX_MAXARGS ? ", " : ")");
  char *sql = sqlite3_str_finish(s);
  if (!sql) return SQLITE_NOMEM;
  int rc = sqlite3_declare_vtab(db, sql);
  sqlite3_free(sql);
  return rc;
}

/* xCreate and xConnect. argv: module, schema, table name[, 'pipeline text'].
 * Without the text argument this is the eponymous table pipeline(). */
static int px_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **err) {
  px_conn *c = aux;
  px_tab *t = sqlite3_malloc(sizeof *t);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  t->c = c;
  int rc = SQLITE_OK;
  if (argc > 4) {
    *err = sqlite3_mprintf("pipeline: CREATE VIRTUAL TABLE … USING pipeline('text') takes one "
                           "argument, the pipeline text");
    rc = SQLITE_ERROR;
  } else if (argc < 4 && sqlite3_stricmp(argv[2], argv[0])) {
    /* a named table without its text (the eponymous table is named after
     * the module): nothing to run */
    *err = sqlite3_mprintf("pipeline: CREATE VIRTUAL TABLE %s USING pipeline needs the pipeline "
                           "text: USING pipeline('FROM …')", argv[2]);
    rc = SQLITE_ERROR;
  } else if (argc == 4) {
    t->text = dequote(argv[3]);
    pj_query *q = t->text ? conn_query(c, t->text, err) : NULL;
    if (!t->text) rc = SQLITE_NOMEM;
    else if (!q) rc = SQLITE_ERROR;
    else {
      const char *const *names;
      t->ncols = out_columns(q, &names);
      t->cols = names_dup(names, t->ncols);
      if (!t->cols) rc = SQLITE_NOMEM;
    }
  } else {
    t->ncols = c->nshape;
    t->cols = names_dup((const char *const *)c->shape, c->nshape);
    if (!t->cols) rc = SQLITE_NOMEM;
  }
  if (rc == SQLITE_OK) rc = declare(db, t);
  if (rc != SQLITE_OK) {
    names_free(t->cols, t->cols ? t->ncols : 0);
    sqlite3_free(t->text);
    sqlite3_free(t);
    return rc;
  }
  *out = &t->base;
  return SQLITE_OK;
}

static int px_disconnect(sqlite3_vtab *base) {
  px_tab *t = (px_tab *)base;
  names_free(t->cols, t->ncols);
  sqlite3_free(t->text);
  sqlite3_free(t);
  return SQLITE_OK;
}

/* idxNum: bit 0 = the text is argument 1; bit k (1..PX_MAXARGS) =
 * parameter k is passed. Arguments come in that order. The eponymous
 * table cannot run without its text: such a plan is refused
 * (SQLITE_CONSTRAINT), so SQLite picks one that passes it. */
static int px_best_index(sqlite3_vtab *base, sqlite3_index_info *info) {
  px_tab *t = (px_tab *)base;
  int slot[PX_MAXARGS + 1];
  for (int i = 0; i <= PX_MAXARGS; i++) slot[i] = -1;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *k = &info->aConstraint[i];
    if (k->iColumn < first_hidden(t)) continue;
    int which = t->text ? k->iColumn - first_arg(t) + 1 : k->iColumn - first_hidden(t);
    if (which < 0 || which > PX_MAXARGS) continue;
    if (k->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (!k->usable) return SQLITE_CONSTRAINT;
    slot[which] = i;
  }
  if (!t->text && slot[0] < 0) {
    /* A text that is there but not usable yet (a join that supplies it):
     * another plan will pass it. No text at all (FROM pipeline): a plan
     * whose xFilter says so, rather than SQLite's "no query solution". */
    for (int i = 0; i < info->nConstraint; i++)
      if (info->aConstraint[i].iColumn == first_hidden(t)) return SQLITE_CONSTRAINT;
    info->idxNum = 0;
    info->estimatedCost = 1e12;
    return SQLITE_OK;
  }
  int argn = 0, idx = 0;
  for (int w = 0; w <= PX_MAXARGS; w++) {
    if (slot[w] < 0) continue;
    idx |= 1 << w;
    info->aConstraintUsage[slot[w]].argvIndex = ++argn;
    info->aConstraintUsage[slot[w]].omit = 1;
  }
  info->idxNum = idx;
  info->estimatedCost = 1e6;
  info->estimatedRows = 100000;
  return SQLITE_OK;
}

static int px_open(sqlite3_vtab *base, sqlite3_vtab_cursor **out) {
  px_cursor *cur = sqlite3_malloc(sizeof *cur);
  if (!cur) return SQLITE_NOMEM;
  memset(cur, 0, sizeof *cur);
  *out = &cur->base;
  return SQLITE_OK;
}

static int px_close(sqlite3_vtab_cursor *base) {
  px_cursor *cur = (px_cursor *)base;
  pj_result_free(cur->r);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int vtab_error(px_tab *t, int rc, char *msg) {
  sqlite3_free(t->base.zErrMsg);
  t->base.zErrMsg = msg;
  return rc;
}

static int bind_arg(pj_query *q, int idx, sqlite3_value *v) {
  switch (sqlite3_value_type(v)) {
  case SQLITE_INTEGER: return (int)pj_query_bind_int64(q, idx, sqlite3_value_int64(v));
  case SQLITE_FLOAT: return (int)pj_query_bind_double(q, idx, sqlite3_value_double(v));
  case SQLITE_NULL: return (int)pj_query_bind_null(q, idx);
  case SQLITE_TEXT: {
    const char *s = (const char *)sqlite3_value_text(v);
    return (int)pj_query_bind_text(q, idx, s ? s : "", (size_t)sqlite3_value_bytes(v));
  }
  default: return -1;   /* a blob */
  }
}

/* Makes the text's columns the eponymous table's: see the banner. */
static int switch_shape(px_tab *t, const char *const *names, int n) {
  px_conn *c = t->c;
  if (++c->switches > PX_MAX_SWITCHES) {
    c->switches = 0;
    return vtab_error(t, SQLITE_ERROR,
                      sqlite3_mprintf("pipeline(): one statement can only use pipelines with the "
                                      "same output columns; give the others a name with CREATE "
                                      "VIRTUAL TABLE temp.NAME USING pipeline('…')"));
  }
  char **copy = names_dup(names, n);
  if (!copy) return SQLITE_NOMEM;
  names_free(c->shape, c->nshape);
  c->shape = copy;
  c->nshape = n;
  c->refs++;
  int rc = sqlite3_create_module_v2(c->db, "pipeline", &px_module, c, conn_unref);
  if (rc != SQLITE_OK) return vtab_error(t, rc, sqlite3_mprintf("pipeline(): %s", sqlite3_errstr(rc)));
  return vtab_error(t, SQLITE_SCHEMA,
                    sqlite3_mprintf("pipeline(): the output columns changed, so the statement must be "
                                    "prepared again (automatic with sqlite3_prepare_v2); one "
                                    "statement can only use pipelines with the same output "
                                    "columns"));
}

static int px_filter(sqlite3_vtab_cursor *base, int idxNum, const char *idxStr, int argc,
                     sqlite3_value **argv) {
  px_cursor *cur = (px_cursor *)base;
  px_tab *t = (px_tab *)base->pVtab;
  px_conn *c = t->c;
  pj_result_free(cur->r);
  cur->r = NULL;
  cur->row = cur->nrows = 0;

  int a = 0;
  const char *text = t->text;
  if (!text) {
    if (!(idxNum & 1) || argc < 1)
      return vtab_error(t, SQLITE_ERROR,
                        sqlite3_mprintf("pipeline(): no pipeline text: write pipeline('FROM …'), "
                                        "or CREATE VIRTUAL TABLE temp.NAME USING pipeline('…')"));
    text = (const char *)sqlite3_value_text(argv[a++]);
    if (!text || sqlite3_value_type(argv[0]) != SQLITE_TEXT)
      return vtab_error(t, SQLITE_ERROR,
                        sqlite3_mprintf("pipeline(): the first argument must be the pipeline text"));
  }
  char *err = NULL;
  pj_query *q = conn_query(c, text, &err);
  if (!q) return vtab_error(t, err ? SQLITE_ERROR : SQLITE_NOMEM, err);
  const char *const *names;
  int n = out_columns(q, &names);
  if (!same_names(t->cols, t->ncols, names, n)) {
    if (t->text)   /* a named table: the tables it reads changed shape */
      return vtab_error(t, SQLITE_ERROR,
                        sqlite3_mprintf("pipeline(): the output columns of this table's pipeline "
                                        "changed; create the table again"));
    return switch_shape(t, names, n);
  }
  c->switches = 0;

  /* Parameters: the passed ones are bound afresh and the others left
   * unbound (the run then fails naming them), so nothing sticks from a
   * previous call of the same cached pipeline. */
  int np = pj_query_param_count(q);
  pj_query_clear_bindings(q);
  for (int k = 1; k <= PX_MAXARGS; k++) {
    int passed = (idxNum >> k) & 1;
    if (passed && k > np)
      return vtab_error(t, SQLITE_ERROR,
                        sqlite3_mprintf("pipeline(): argument %d is parameter %d, but the pipeline "
                                        "has %d parameter%s", k + 1, k, np, np == 1 ? "" : "s"));
    if (k > np) continue;
    if (!passed) continue;
    int rc = bind_arg(q, k, argv[a++]);
    if (rc != PJ_OK) {
      char *msg = rc < 0 ? sqlite3_mprintf("pipeline(): parameter %d is a blob", k)
                         : sqlite3_mprintf("%s", pj_engine_errmsg(c->e));
      conn_forget(c, q);
      return vtab_error(t, SQLITE_ERROR, msg);
    }
  }
  pj_status s = pj_query_run(q, &cur->r);
  if (s != PJ_OK) {
    char *msg = sqlite3_mprintf("%s", s == PJ_NOMEM ? "out of memory" : pj_engine_errmsg(c->e));
    conn_forget(c, q);
    return vtab_error(t, s == PJ_NOMEM ? SQLITE_NOMEM : SQLITE_ERROR, msg);
  }
  cur->nrows = pj_result_row_count(cur->r);
  return SQLITE_OK;
}

static int px_next(sqlite3_vtab_cursor *base) {
  ((px_cursor *)base)->row++;
  return SQLITE_OK;
}

static int px_eof(sqlite3_vtab_cursor *base) {
  px_cursor *cur = (px_cursor *)base;
  return cur->row >= cur->nrows;
}

static int px_column(sqlite3_vtab_cursor *base, sqlite3_context *ctx, int col) {
  px_cursor *cur = (px_cursor *)base;
  px_tab *t = (px_tab *)base->pVtab;
  if (col >= t->ncols || !cur->r || col >= pj_result_column_count(cur->r)) return SQLITE_OK;  /* hidden: NULL */
  if (pj_result_is_null(cur->r, cur->row, col)) return SQLITE_OK;
  switch (pj_result_column_type(cur->r, col)) {
  case PJ_TYPE_DOUBLE:
    sqlite3_result_double(ctx, pj_result_double(cur->r, cur->row, col));
    break;
  case PJ_TYPE_STRING: {
    size_t len = 0;
    const char *s = pj_result_text(cur->r, cur->row, col, &len);
    /* The pool never moves its bytes and outlives the row. */
    sqlite3_result_text64(ctx, s, len, SQLITE_STATIC, SQLITE_UTF8);
    break;
  }
  default:
    sqlite3_result_int64(ctx, pj_result_int64(cur->r, cur->row, col));
    break;
  }
  return SQLITE_OK;
}

static int px_rowid(sqlite3_vtab_cursor *base, sqlite3_int64 *rowid) {
  *rowid = ((px_cursor *)base)->row;
  return SQLITE_OK;
}

/* xCreate == xConnect: the module is eponymous (pipeline(text)) and can
 * also make named tables (SQLite makes the eponymous table only for a
 * module whose xCreate is its xConnect). */
static const sqlite3_module px_module = {
    .iVersion = 0,
    .xCreate = px_connect,
    .xConnect = px_connect,
    .xBestIndex = px_best_index,
    .xDisconnect = px_disconnect,
    .xDestroy = px_disconnect,
    .xOpen = px_open,
    .xClose = px_close,
    .xFilter = px_filter,
    .xNext = px_next,
    .xEof = px_eof,
    .xColumn = px_column,
    .xRowid = px_rowid,
};

/* ---- scalar functions --------------------------------------------------- */

/* pipeline_columns(text): the output column names, ', '-separated; also
 * makes them the columns of pipeline() for the statements that follow. */
static void fn_columns(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  px_conn *c = sqlite3_user_data(ctx);
  const char *text = (const char *)sqlite3_value_text(argv[0]);
  if (!text) {
    sqlite3_result_error(ctx, "pipeline_columns(): the argument must be a pipeline text", -1);
    return;
  }
  char *err = NULL;
  pj_query *q = conn_query(c, text, &err);
  if (!q) {
    sqlite3_result_error(ctx, err ? err : "out of memory", -1);
    sqlite3_free(err);
    return;
  }
  const char *const *names;
  int n = out_columns(q, &names);
  if (!same_names(c->shape, c->nshape, names, n)) {
    char **copy = names_dup(names, n);
    if (!copy) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
    names_free(c->shape, c->nshape);
    c->shape = copy;
    c->nshape = n;
    c->refs++;
    int rc = sqlite3_create_module_v2(c->db, "pipeline", &px_module, c, conn_unref);
    if (rc != SQLITE_OK) {
      sqlite3_result_error_code(ctx, rc);
      return;
    }
  }
  sqlite3_str *s = sqlite3_str_new(c->db);
  for (int i = 0; i < n; i++) sqlite3_str_appendf(s, "%s%s", i ? ", " : "", names[i]);
  sqlite3_result_text(ctx, sqlite3_str_finish(s), -1, sqlite3_free);
}

/* pipeline_view('name', 'text'): creates "name" as a named pipeline table
 * (CREATE VIRTUAL TABLE "name" USING pipeline('text')), whose
 * columns are fixed: the way to use a pipeline in a view or a trigger,
 * which cannot follow the eponymous pipeline()'s changing columns.
 * Returns the column names, ', '-separated. */
static void fn_view(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  px_conn *c = sqlite3_user_data(ctx);
  const char *name = (const char *)sqlite3_value_text(argv[0]);
  const char *text = (const char *)sqlite3_value_text(argv[1]);
  if (!name || !*name || !text) {
    sqlite3_result_error(ctx, "pipeline_view(): expected pipeline_view('name', 'pipeline text')",
                         -1);
    return;
  }
  char *err = NULL;
  pj_query *q = conn_query(c, text, &err);
  if (!q) {
    sqlite3_result_error(ctx, err ? err : "out of memory", -1);
    sqlite3_free(err);
    return;
  }
  /* in main, so views and triggers of main may read it (they cannot
   * read temp tables) */
  char *sql = sqlite3_mprintf("CREATE VIRTUAL TABLE \"%w\" USING pipeline('%q')", name, text);
  if (!sql) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  int rc = sqlite3_exec(c->db, sql, NULL, NULL, &err);
  sqlite3_free(sql);
  if (rc != SQLITE_OK) {
    char *msg = sqlite3_mprintf("pipeline_view(): %s", err ? err : sqlite3_errstr(rc));
    sqlite3_result_error(ctx, msg ? msg : "out of memory", -1);
    sqlite3_free(msg);
    sqlite3_free(err);
    return;
  }
  const char *const *names;
  int n = out_columns(q, &names);
  sqlite3_str *s = sqlite3_str_new(c->db);
  for (int i = 0; i < n; i++) sqlite3_str_appendf(s, "%s%s", i ? ", " : "", names[i]);
  sqlite3_result_text(ctx, sqlite3_str_finish(s), -1, sqlite3_free);
}

/* pipeline_mode('auto'|'interp'|'jit'): the backend of the connection's
 * pipelines; returns the mode now in force. */
static void fn_mode(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  px_conn *c = sqlite3_user_data(ctx);
  static const char *const modes[] = {"auto", "interp", "jit"};
  if (argc == 1) {
    const char *m = (const char *)sqlite3_value_text(argv[0]);
    int found = -1;
    for (int i = 0; i < 3 && m; i++)
      if (!sqlite3_stricmp(m, modes[i])) found = i;
    if (found < 0) {
      sqlite3_result_error(ctx, "pipeline_mode(): expected 'auto', 'interp' or 'jit'", -1);
      return;
    }
    pj_engine_set_mode(c->e, (pj_mode)found);
  }
  sqlite3_result_text(ctx, modes[pj_engine_mode(c->e)], -1, SQLITE_STATIC);
}

/* ---- entry point -------------------------------------------------------- */

/* SQLite derives the default entry point from the file name keeping only
 * its letters: pipejit_sqlite.so → sqlite3_pipejitsqlite_init. The
 * spelled-out sqlite3_pipejit_sqlite_init is the same function, for
 * clients that name the entry point (load_extension(file, entry)). */
#define PX_EXPORT __attribute__((visibility("default")))
PX_EXPORT int sqlite3_pipejit_sqlite_init(sqlite3 *db, char **errmsg,
                                          const sqlite3_api_routines *api);
PX_EXPORT int sqlite3_pipejitsqlite_init(sqlite3 *db, char **errmsg,
                                         const sqlite3_api_routines *api);
PX_EXPORT int sqlite3_pipejitsqlite_init(sqlite3 *db, char **errmsg,
                                         const sqlite3_api_routines *api) {
  return sqlite3_pipejit_sqlite_init(db, errmsg, api);
}

int sqlite3_pipejit_sqlite_init(sqlite3 *db, char **errmsg, const sqlite3_api_routines *api) {
  SQLITE_EXTENSION_INIT2(api);
  px_conn *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  c->db = db;
  /* Until the first pipeline runs, one placeholder column: SQLite refuses
   * SELECT * over a table with no visible column before xFilter could
   * change the shape. */
  static const char *const placeholder[] = {"__pj_none"};
  c->shape = names_dup(placeholder, 1);
  c->nshape = 1;
  if (!c->shape || pj__engine_attach(db, &c->e) != PJ_OK) {
    sqlite3_free(c->shape);
    sqlite3_free(c);
    return SQLITE_NOMEM;
  }
  /* The module's reference; the functions' references follow. */
  c->refs = 1;
  int rc = sqlite3_create_module_v2(db, "pipeline", &px_module, c, conn_unref);
  if (rc == SQLITE_OK) {
    c->refs++;
    rc = sqlite3_create_function_v2(db, "pipeline_columns", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY, c,
                                    fn_columns, NULL, NULL, conn_unref);
  }
  if (rc == SQLITE_OK) {
    c->refs++;
    rc = sqlite3_create_function_v2(db, "pipeline_view", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY, c,
                                    fn_view, NULL, NULL, conn_unref);
  }
  /* Each registration holds a reference, released by SQLite (also when
   * the registration fails). */
  for (int nargs = 0; nargs <= 1 && rc == SQLITE_OK; nargs++) {
    c->refs++;
    rc = sqlite3_create_function_v2(db, "pipeline_mode", nargs, SQLITE_UTF8 | SQLITE_DIRECTONLY, c,
                                    fn_mode, NULL, NULL, conn_unref);
  }
  if (rc != SQLITE_OK && errmsg) *errmsg = sqlite3_mprintf("pipejit: %s", sqlite3_errstr(rc));
  return rc;
}
