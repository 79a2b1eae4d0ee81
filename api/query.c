/*
 * query.c — compiled query handles: parse once, bind to a plan, run many
 * times with either backend.
 *
 * A handle keeps the AST, so it can bind again. It does so before a run
 * when the plan no longer fits:
 *  - the type of a bound parameter value differs from the one the plan
 *    assumed (a plan types an unbound `?` as an integer, or from its
 *    context: binding 1.5 after 1 rebinds, and drops the JIT code; binding
 *    NULL never does, NULL fits every type);
 *  - a columnar table the plan scans is no longer the one the catalog
 *    names (CREATE OR REPLACE PERFETTO TABLE replaced it): every run reads
 *    the current data. The handle holds a reference to each scanned table,
 *    so comparing pointers is safe;
 *  - the plan reads SQLite and the connection's schema changed since it
 *    was bound (DROP/CREATE/ALTER of a table it reads, a new view, a new
 *    catalog table that now shadows a SQLite one: any DDL, on this
 *    connection or another). A plan reads SQLite columns by position and
 *    with the types they had, so running it over the new schema would
 *    answer from the old one. A plan whose SQLite column types were
 *    sampled from the values also binds again when the data changed.
 *    When the query no longer binds, the run fails with the bind error
 *    (and tries again the next time).
 *
 * Backends (exec/backend.h): interp runs every segment with the
 * interpreter (vm_backend); jit compiles the
 * plan once (the engine's LLJIT is created on first use) and runs the
 * generated batch functions; auto (exec/adaptive.h) runs the interpreter
 * at once and, when the estimated input is at least the engine's
 * auto_rows (PJ_AUTO_JIT_ROWS), compiles on the engine's background
 * thread and switches to the compiled code at the next batch after it is
 * ready. A compile not finished when the run ends goes on for the
 * handle's next run (and the cache); freeing or rebinding the handle
 * cancels it only if the compile thread has not begun it. Compiled
 * code comes from and goes to the engine's compile cache (key:
 * ex_cache_key), in modes jit and auto.
 */
#include <stdio.h>
#include <stdlib.h>

#include "codegen/cg.h"
#include "exec/adaptive.h"
#include "interp/vm.h"
#include "runtime/sqlite/sqlsrc.h"
#include "defs.h"

/* The type a parameter's value asks of the plan; RT_NULLT (unbound or
 * NULL) fits a plan of any type, since NULL compares and computes alike in
 * every type. */
static rt_type bound_type(const ex_value *v) {
  return v->type == RT_I64 || v->type == RT_F64 || v->type == RT_STR ? v->type : RT_NULLT;
}

static void drop_plan(pj_query *q) {
  /* the background compile may be reading the plan: first let it go */
  ex_job_release(q->job);
  q->job = NULL;
  free(q->key);
  q->key = NULL;
  q->miss_gen = 0;
  if (q->code) cg_module_free(q->code);
  q->code = NULL;
  if (q->plan) ir_plan_free(q->plan);
  q->plan = NULL;
  for (int i = 0; i < q->ntables; i++) rt_table_unref(q->tables[i]);
  free(q->tables);
  q->tables = NULL;
  q->ntables = 0;
  q->plan_text.len = 0;
  q->plan_text.failed = false;
  if (q->plan_text.data) q->plan_text.data[0] = 0;   /* no plan: pj_query_plan says "" */
}

/* The columnar tables plan p reads (its scans, the tables of its engine
 * functions such as EXTRACT_ARG's args, and those of its pipeline
 * subqueries' plans): counted when out is NULL, else stored with a
 * reference each. */
static int plan_tables(const ir_plan *p, rt_table **out) {
  int n = 0;
  for (int i = 0; i < p->nops; i++) {
    ir_op *op = p->ops[i];
    if (op->kind == IR_SCAN_TABLE && op->scan.table) {
      if (out) out[n] = rt_table_ref(op->scan.table);
      n++;
    }
  }
  for (int i = 0; i < p->ncallouts; i++) {
    if (!p->callouts[i].table) continue;
    if (out) out[n] = rt_table_ref(p->callouts[i].table);
    n++;
  }
  for (int i = 0; i < p->nsubqs; i++)
    if (p->subqs[i].plan) n += plan_tables(p->subqs[i].plan, out ? out + n : NULL);
  return n;
}

/* Keeps a reference to every columnar table the plan reads (what tells a
 * stale plan); 0 when out of memory. */
static int collect_tables(pj_query *q) {
  int n = plan_tables(q->plan, NULL);
  if (!n) return 1;
  q->tables = calloc((size_t)n, sizeof *q->tables);
  if (!q->tables) return 0;
  q->ntables = plan_tables(q->plan, q->tables);
  return 1;
}

/* Binds the AST into a plan typed for the current parameter values. */
static pj_status build_plan(pj_query *q) {
  pj_engine *e = q->e;
  drop_plan(q);
  rt_type *types = calloc((size_t)q->nparams + 1, sizeof *types);
  if (!types) return pj__nomem_msg(e, PJ_NOMEM);
  /* Unbound parameters go as RT_NULLT: the binder types them (as integers,
   * or from their context). */
  for (int i = 1; i <= q->nparams; i++) types[i] = bound_type(&q->params[i]);
  ir_env env = {
      .catalog = e->catalog,
      .db = e->db,
      .strings = e->strings,
      .nparam_types = q->nparams,
      .param_types = types + 1,   /* [0] is parameter 1 */
      .defs = &e->ir_defs,
      .sqlin = &e->ir_sqlin,
  };
  rt_err err = {.offset = -1};
  int64_t t0 = rt_now_ns();
  q->plan = ir_build(q->ast, q->src, &env, &err);
  /* Taken only for plans that read SQLite (the engine's thread is the
   * only one that changes its connection between bind and here). */
  if (q->plan && q->plan->reads_sql) q->schema_cookie = rt_sql_schema_cookie(e->db);
  if (q->plan && q->plan->sql_sampled) q->data_cookie = rt_sql_data_cookie(e->db);
  q->defs_gen = q->plan && q->plan->reads_defs ? e->defs->gen + 1 : 0;
  e->timing.bind_ns += rt_now_ns() - t0;
  if (!q->plan) {
    free(types);
    return pj__fail(e, &err, q->src);
  }
  if (!q->params) {
    /* First bind: now the parameter count is known. */
    q->nparams = q->plan->nparams;
    q->params = calloc((size_t)q->nparams + 1, sizeof *q->params);
    q->param_types = calloc((size_t)q->nparams + 1, sizeof *q->param_types);
    q->bound = calloc((size_t)q->nparams + 1, 1);
    if (!q->params || !q->param_types || !q->bound) {
      free(types);
      return pj__nomem_msg(e, PJ_NOMEM);
    }
    for (int i = 0; i <= q->nparams; i++) q->params[i].type = RT_NULLT;
  }
  /* What the plan assumed, which may differ from what was asked. */
  for (int i = 1; i <= q->nparams; i++) q->param_types[i] = q->plan->params[i - 1].type;
  free(types);
  if (collect_tables(q)) {
    ir_print(q->plan, &q->plan_text);
    rt_buf_append(&q->plan_text, "", 1);   /* NUL-terminate */
  }
  if (!q->plan_text.data || q->plan_text.failed) {
    drop_plan(q);
    return pj__nomem_msg(e, PJ_NOMEM);
  }
  q->plan_text.len--;
  return PJ_OK;
}

/* True when the plan must be bound again before running (see banner). */
static int plan_stale(pj_query *q) {
  if (!q->plan) return 1;
  for (int i = 1; i <= q->nparams; i++) {
    rt_type t = bound_type(&q->params[i]);
    if (t != RT_NULLT && t != q->param_types[i]) return 1;
  }
  for (int i = 0; i < q->ntables; i++)
    if (rt_catalog_get(q->e->catalog, q->tables[i]->name) != q->tables[i]) return 1;
  if (q->plan->reads_sql && rt_sql_schema_cookie(q->e->db) != q->schema_cookie) return 1;
  if (q->plan->sql_sampled && rt_sql_data_cookie(q->e->db) != q->data_cookie) return 1;
  /* a view or function it inlined was replaced */
  if (q->defs_gen && q->defs_gen != q->e->defs->gen + 1) return 1;
  return 0;
}

/* After a bind that no run follows at once: the SQL sources the binder
 * left open with their first rows (ir_op.primed) are closed, since an open
 * query holds a read transaction (a DROP TABLE in between would fail);
 * the first run then reads those rows again. */
static void release_primed(pj_query *q) {
  if (q->plan) ir_plan_release_primed(q->plan);
}

static pj_status new_query(pj_engine *e, const char *src, fe_pipeline *ast, pj_query **out,
                           int run_next) {
  *out = NULL;
  pj_query *q = calloc(1, sizeof *q);
  if (!q) return pj__nomem_msg(e, PJ_NOMEM);
  q->e = e;
  q->src = src;
  q->ast = ast;
  rt_arena_init(&q->ast_arena);
  pj_status s = build_plan(q);
  /* The first bind finds the parameters; an engine value of another type
   * than the binder assumed binds once more, typed for it. */
  if (s == PJ_OK && q->nparams && e->nparams) {
    s = pj__query_engine_params(q);
    if (s == PJ_OK && plan_stale(q)) s = build_plan(q);
  }
  if (s != PJ_OK) {
    pj_query_free(q);
    return s;
  }
  if (!run_next) release_primed(q);
  *out = q;
  return PJ_OK;
}

pj_status pj__query_from_ast(pj_engine *e, const char *text, fe_pipeline *ast, pj_query **out) {
  return new_query(e, text, ast, out, 0);
}

pj_status pj__query_from_ast_run(pj_engine *e, const char *text, fe_pipeline *ast,
                                 pj_query **out) {
  return new_query(e, text, ast, out, 1);
}

pj_status pj_query_compile(pj_engine *e, const char *text, pj_query **out) {
  *out = NULL;
  pj__clear_error(e);
  memset(&e->timing, 0, sizeof e->timing);
  char *copy = strdup(text);
  if (!copy) return pj__nomem_msg(e, PJ_NOMEM);
  rt_arena a;
  rt_arena_init(&a);
  rt_err err = {.offset = -1};
  int64_t t0 = rt_now_ns();
  fe_pipeline *ast = fe_parse_pipeline(&a, copy, strlen(copy), &err);
  e->timing.parse_ns = rt_now_ns() - t0;
  if (!ast) {
    pj__fail(e, &err, text);
    e->errtext = NULL;   /* the copy goes now; line/column are computed */
    rt_arena_free(&a);
    free(copy);
    return PJ_ERROR;
  }
  pj_query *q = NULL;
  pj_status s = new_query(e, copy, ast, &q, 0);
  if (s != PJ_OK) {
    e->errtext = NULL;
    rt_arena_free(&a);
    free(copy);
    return pj__nomem_msg(e, s);
  }
  q->text = copy;
  q->ast_arena = a;   /* the handle owns the AST from now on */
  *out = q;
  return PJ_OK;
}

void pj_query_free(pj_query *q) {
  if (!q) return;
  drop_plan(q);
  rt_buf_free(&q->plan_text);
  free(q->params);
  free(q->param_types);
  free(q->bound);
  rt_arena_free(&q->ast_arena);
  free(q->text);
  free(q);
}

/* ---- parameters ------------------------------------------------------- */

int pj_query_param_count(const pj_query *q) { return q->nparams; }

int pj_query_param_index(const pj_query *q, const char *name) {
  if (!q->plan || !name) return 0;
  int prefixed = name[0] == '$' || name[0] == ':' || name[0] == '@';
  for (int i = 0; i < q->plan->nparams; i++) {
    const char *pn = q->plan->params[i].name;
    if (!pn) continue;
    if (prefixed ? strcmp(pn, name) == 0 : strcmp(pn + 1, name) == 0) return i + 1;
  }
  return 0;
}

/* Parameter idx takes value v (every pj_query_bind_* comes here). */
static pj_status bind_value(pj_query *q, int idx, ex_value v) {
  pj__clear_error(q->e);
  if (idx < 1 || idx > q->nparams) {
    return pj__failf(q->e, "bind: parameter %d does not exist (the query has %d)", idx,
                     q->nparams);
  }
  q->params[idx] = v;
  q->bound[idx] = 1;
  return PJ_OK;
}

void pj_query_clear_bindings(pj_query *q) {
  for (int i = 1; i <= q->nparams; i++) {
    memset(&q->params[i], 0, sizeof q->params[i]);
    q->params[i].type = RT_NULLT;
    q->bound[i] = 0;
  }
}

/* The engine's parameters (params.c) fill the named parameters the
 * handle did not bind itself (bound[i] 2: the engine's), read afresh
 * before every run so a changed or removed engine value is seen. */
pj_status pj__query_engine_params(pj_query *q) {
  pj_engine *e = q->e;
  for (int i = 1; i <= q->nparams; i++) {
    if (q->bound[i] == 1) continue;
    const pj__param *p = pj__param_find(e, q->plan ? q->plan->params[i - 1].name : NULL);
    ex_value v = {.type = RT_NULLT};
    if (p && !p->v.is_null && p->v.type == PJ_TYPE_INT64) v.type = RT_I64, v.i = p->v.i;
    else if (p && !p->v.is_null && p->v.type == PJ_TYPE_DOUBLE) v.type = RT_F64, v.f = p->v.d;
    else if (p && !p->v.is_null) {
      v.type = RT_STR;
      v.s = rt_str_intern(e->strings, p->v.s, p->v.len);
      if (v.s == 0 && p->v.len > 0)
        return pj__failf(e, "parameter %s: %s", q->plan->params[i - 1].name,
                         rt_strpool_error(e->strings));
    }
    q->params[i] = v;
    q->bound[i] = p ? 2 : 0;
  }
  return PJ_OK;
}

/* LANGUAGE.md §5: running with a parameter never bound is an error naming
 * it, at its first use ("WHERE: parameter $min is not bound"), rather than
 * a silent NULL. A handle still compiles unbound. */
static pj_status check_bound(pj_query *q) {
  for (int i = 1; i <= q->nparams; i++) {
    if (q->bound[i]) continue;
    const ir_param *pp = &q->plan->params[i - 1];
    char num[24];
    snprintf(num, sizeof num, "?%d", i);
    rt_err err = {.offset = pp->pos};
    rt_errorf(&err, pp->pos, "%s%sparameter %s is not bound", pp->stage ? pp->stage : "",
              pp->stage ? ": " : "", pp->name ? pp->name : num);
    return pj__fail(q->e, &err, q->src);
  }
  return PJ_OK;
}

pj_status pj_query_bind_int64(pj_query *q, int idx, int64_t x) {
  return bind_value(q, idx, (ex_value){.type = RT_I64, .i = x});
}

pj_status pj_query_bind_double(pj_query *q, int idx, double x) {
  return bind_value(q, idx, (ex_value){.type = RT_F64, .f = x});
}

pj_status pj_query_bind_text(pj_query *q, int idx, const char *s, size_t len) {
  /* a refused string (too long, out of memory) is an error, never '':
   * the parameter keeps what it had */
  uint32_t id = rt_str_intern(q->e->strings, s, len);
  if (id == 0 && len > 0) {
    pj__clear_error(q->e);
    return pj__failf(q->e, "parameter %d: %s", idx, rt_strpool_error(q->e->strings));
  }
  return bind_value(q, idx, (ex_value){.type = RT_STR, .s = id});
}

pj_status pj_query_bind_null(pj_query *q, int idx) {
  return bind_value(q, idx, (ex_value){.type = RT_NULLT});
}

/* ---- backends --------------------------------------------------------- */

/* Rows the plan will read: columnar tables by their size; a SQLite source
 * cannot be sized cheaply, so it counts as large. */
int64_t pj__plan_estimate_rows(const ir_plan *p) {
  int64_t n = 0;
  for (int i = 0; i < p->nops; i++) {
    const ir_op *op = p->ops[i];
    if (op->dead) continue;
    if (op->kind == IR_SCAN_SQL) return INT64_MAX / 2;
    if (op->kind == IR_SCAN_TABLE && op->scan.table) n += op->scan.table->nrows;
  }
  return n;
}

/* The compile-cache key of the current plan at the engine's opt level
 * (owned by the handle; NULL without a JIT, which means an empty cache
 * anyway, or when out of memory). */
static const char *code_key(pj_query *q) {
  pj_engine *e = q->e;
  if (!e->jit) return NULL;
  if (q->key && q->key_opt == e->opt_level) return q->key;
  free(q->key);
  const char *text = q->src ? q->src : "";
  size_t len = strlen(text);
  if (q->ast && q->ast->pos >= 0 && q->ast->endpos > q->ast->pos &&
      (size_t)q->ast->endpos <= len) {
    text += q->ast->pos;
    len = (size_t)(q->ast->endpos - q->ast->pos);
  }
  q->key = ex_cache_key(text, len, q->plan, q->plan_text.data, e->opt_level,
                        cg_jit_passes(e->jit, e->opt_level));
  q->key_opt = e->opt_level;
  q->miss_gen = 0;
  return q->key;
}

/* The cached module for the current plan (a new reference), or NULL;
 * counts a hit in the timing. */
static cg_module *cache_lookup(pj_query *q) {
  pj_engine *e = q->e;
  const char *key = code_key(q);
  if (!key) return NULL;
  uint64_t gen = ex_cache_generation(e->adapt);
  if (q->miss_gen == gen + 1) return NULL;
  cg_module *m = ex_cache_get(e->adapt, key);
  if (m) e->timing.cache_hit = 1;
  else q->miss_gen = gen + 1;
  return m;
}

/* Takes the background compile's module when it is ready. */
static void adopt_job(pj_query *q) {
  cg_module *m = ex_job_ready(q->job);
  if (!m || q->code) return;
  q->code = cg_module_ref(m);
  ex_job_release(q->job);
  q->job = NULL;
}

/* Compiles the current plan with the JIT unless it already is: the code
 * of a background compile (waited for), of the cache, or a new compile
 * (cached). */
static pj_status ensure_code(pj_query *q) {
  if (q->code) return PJ_OK;
  pj_engine *e = q->e;
  if (pj__engine_jit(e) != PJ_OK) return PJ_ERROR;
  rt_err err = {.offset = -1};
  if (q->job) {
    int64_t t0 = rt_now_ns();
    q->code = ex_job_wait(q->job, &err);
    e->timing.compile_ns += rt_now_ns() - t0;
    ex_job_release(q->job);
    q->job = NULL;
    if (q->code) return PJ_OK;
    memset(&err, 0, sizeof err);   /* compile again below: same error, reported here */
    err.offset = -1;
  }
  q->code = cache_lookup(q);
  if (q->code) return PJ_OK;
  int64_t t0 = rt_now_ns();
  /* pj_engine_interrupt (--timeout, Ctrl-C) stops a compile too */
  q->code = cg_compile_interruptible(e->jit, q->plan, e->opt_level, &e->interrupt, &err);
  e->timing.compile_ns += rt_now_ns() - t0;
  if (!q->code) {
    if (pj__interrupted(e)) {
      pj__failf(e, "interrupted");
      return PJ_INTERRUPTED;
    }
    if (!err.set) rt_errorf(&err, -1, "JIT: compilation failed");
    return pj__fail(e, &err, q->src);
  }
  /* A shared module must not point at this handle's plan (see dumps). */
  cg_module_set_plan(q->code, NULL);
  ex_cache_put(e->adapt, code_key(q), q->code);
  return PJ_OK;
}

/* Mode auto before a run: code the handle already has or the cache
 * holds runs from the first batch; otherwise a large input starts a
 * background compile (once per plan: a failed compile is not retried, the
 * handle stays on the interpreter). */
static void auto_prepare(pj_query *q) {
  pj_engine *e = q->e;
  adopt_job(q);
  if (q->code || q->job) return;
  q->code = cache_lookup(q);
  if (q->code) return;
  int64_t rows = pj__plan_estimate_rows(q->plan);
  if (rows < e->auto_rows) return;
  /* Never a compile that costs more than interpreting the whole input
   * (a 20,000-WHEN CASE over a few rows): the interpreter's time is
   * estimated per row and expression node, the compile's per node. A
   * SQLite source counts as large (its size is unknown). Plans of usual
   * size compile at or beyond auto_rows (measured for them: see
   * engine.h); the estimate decides for big ones (cg.h's CG_BIG_PLAN). */
  int64_t nodes = cg_plan_size(q->plan) + 1;
  if (nodes > CG_BIG_PLAN && rows < INT64_MAX / 4 && rows < INT64_MAX / (nodes * PJ_INTERP_NS_PER_NODE) &&
      rows * nodes * PJ_INTERP_NS_PER_NODE < cg_compile_estimate_ns(q->plan, e->opt_level))
    return;
  if (pj__engine_jit(e) != PJ_OK) {
    pj__clear_error(e);   /* no LLVM: the interpreter does the work */
    return;
  }
  q->job = ex_job_submit(e->adapt, e->jit, q->plan, e->opt_level, code_key(q));
}

/* ---- running ---------------------------------------------------------- */

pj_status pj__query_refresh(pj_query *q) {
  pj__clear_error(q->e);
  if (pj__query_engine_params(q) != PJ_OK) return PJ_ERROR;
  if (!plan_stale(q)) return PJ_OK;
  pj_status s = build_plan(q);
  release_primed(q);
  return s;
}

/* Runs q into *rows (see pj__query_run_rows); with `timed`, e->timing
 * gets the run's numbers and *t0 when it started. */
static pj_status run_rows(pj_query *q, rt_rowbuf *rows, bool kept, bool timed, int64_t *t0) {
  pj_engine *e = q->e;
  pj__clear_error(e);
  if (timed) memset(&e->timing, 0, sizeof e->timing);
  if (pj__query_engine_params(q) != PJ_OK) return PJ_ERROR;
  if (plan_stale(q)) {
    pj_status s = build_plan(q);
    if (s != PJ_OK) return s;
  }
  if (check_bound(q) != PJ_OK) return PJ_ERROR;
  e->sqltab_err.set = 0;
  ex_picker pk = {.interp = &vm_backend, .jit = &cg_backend};
  if (e->mode == PJ_MODE_JIT || (e->mode == PJ_MODE_AUTO && e->force_switch)) {
    pj_status cs = ensure_code(q);
    if (cs != PJ_OK) return cs;
    pk.code = q->code;
    pk.force_switch = e->force_switch;
  } else if (e->mode == PJ_MODE_AUTO) {
    auto_prepare(q);
    pk.code = q->code;
    pk.job = q->job;
    /* started interpreted: keep the faster backend per segment once the
     * code is ready (ex_pick, exec/adaptive.c) */
    pk.judge = pk.job && !pk.code;
  }

  ex_run run;
  ex_run_init(&run, q->plan, e->strings, e->db, q->nparams, q->params);
  run.run_from = vm_run_from;   /* RIGHT / FULL JOIN's unmatched rows */
  run.interrupt = &e->interrupt;
  run.budget.limit = e->max_memory;
  run.interp = &vm_backend;   /* for pipeline subqueries */
  run.threads = e->threads;
  run.pool = pj__engine_pool(e);
  run.batch_rows = e->batch_rows;
  if (kept) {
    run.result = *rows;
    run.result_kept = true;
  }
  *t0 = timed ? rt_now_ns() : 0;
  int rc = ex_run_plan(&run, ex_pick, &pk);
  int64_t t1 = timed ? rt_now_ns() : 0;
  /* A background compile that finished during the run: its code is the
   * handle's from now on, and its time is this run's compile time. */
  if (q->job && ex_job_ready(q->job)) {
    if (pk.jit_batches > 0) e->timing.compile_ns = ex_job_compile_ns(q->job);
    adopt_job(q);
  }
  if (timed) {
    e->timing.used_jit = pk.jit_batches > 0;
    e->timing.batches = pk.batches;
    e->timing.jit_batches = pk.jit_batches;
    e->timing.rows_in = run.rows_in;
    e->timing.mem_peak = run.budget.peak;
    e->timing.threads = run.threads_used > 1 ? run.threads_used : 1;
  }
  if (rc != 0) {
    if (timed) e->timing.run_ns = t1 - *t0;
    if (!run.err.set) rt_errorf(&run.err, -1, "run: the query failed");
    /* The input of a SQL stage (sqltab.c) that failed says what and where. */
    if (e->sqltab_err.set && strstr(run.err.msg, e->sqltab_err.msg)) {
      rt_err in = e->sqltab_err;
      pj__fail(e, &in, e->sqltab_errtext);
    } else {
      pj__fail(e, &run.err, q->src);
    }
    ex_run_free(&run);   /* frees the result, a kept one too */
    memset(rows, 0, sizeof *rows);
    return pj__interrupted(e) ? PJ_INTERRUPTED : PJ_ERROR;
  }
  *rows = run.result;
  ex_run_free(&run);
  return PJ_OK;
}

pj_status pj__query_run_rows(pj_query *q, rt_rowbuf *rows) {
  int64_t t0;
  return run_rows(q, rows, rows->types != NULL, false, &t0);
}

rt_table *pj__query_rows_table(const pj_query *q, rt_rowbuf *rows, const char *name) {
  const ir_op *output = q->plan->segs[q->plan->nsegs - 1].sink;
  bool bools[output->output.nout > 0 ? output->output.nout : 1];
  for (int j = 0; j < output->output.nout; j++) bools[j] = q->plan->cols[output->output.out[j]].type == RT_BOOL;
  return rt_rowbuf_to_table(rows, name, output->output.out_names, bools);
}

pj_status pj__query_run_table(pj_query *q, const char *name, rt_table **out) {
  pj_engine *e = q->e;
  *out = NULL;
  rt_rowbuf rows = {0};
  int64_t t0;
  pj_status s = run_rows(q, &rows, false, true, &t0);
  if (s != PJ_OK) return s;
  rt_table *t = pj__query_rows_table(q, &rows, name);
  e->timing.run_ns = rt_now_ns() - t0;
  if (!t) return pj__failf(e, "run: out of memory");
  e->timing.rows_out = t->nrows;
  *out = t;
  return PJ_OK;
}

pj_status pj_query_run(pj_query *q, pj_result **out) {
  *out = NULL;
  pj__begin_run(q->e);
  rt_table *t = NULL;
  pj_status s = pj__query_run_table(q, "result", &t);
  if (s != PJ_OK) return pj__nomem_msg(q->e, s);
  *out = pj__result_new(t, q->e->strings);
  if (!*out) {
    rt_table_unref(t);
    return pj__nomem_msg(q->e, PJ_NOMEM);
  }
  return PJ_OK;
}

/* ---- dumps ------------------------------------------------------------ */

const char *pj_query_plan(pj_query *q) { return q->plan_text.data ? q->plan_text.data : ""; }

/* Dumps describe the code for the current plan, so a stale plan is bound
 * again first (as the next run would). */
static const cg_module *code_for_dump(pj_query *q) {
  pj__clear_error(q->e);
  if (pj__query_engine_params(q) != PJ_OK) return NULL;
  if (plan_stale(q)) {
    if (build_plan(q) != PJ_OK) return NULL;
    release_primed(q);
  }
  if (ensure_code(q) != PJ_OK) return NULL;
  return q->code;
}

const char *pj_query_llvm_ir(pj_query *q, int optimized) {
  cg_module *m = (cg_module *)code_for_dump(q);
  if (!m) return NULL;
  /* The raw IR is emitted again from a plan: this handle's, which equals
   * the one the (possibly shared) module was compiled from. */
  cg_module_set_plan(m, q->plan);
  const char *text = cg_ir_text(m, optimized);
  cg_module_set_plan(m, NULL);
  return text;
}

const char *pj_query_asm(pj_query *q) {
  return code_for_dump(q) ? cg_asm_text(q->code) : NULL;
}

/* ---- pipelines of a script ------------------------------------------- */

/* Compiles and runs one pipeline of the script; *out gets its rows as a
 * table named `name` (caller's reference). */
pj_status pj__exec_pipeline(pj_engine *e, const char *script, const fe_stmt *st,
                            fe_pipeline *pipe, const char *name, rt_table **out) {
  *out = NULL;
  pj_query *q = NULL;
  pj_status s = pj__query_from_ast_run(e, script, pipe, &q);
  if (s != PJ_OK) return s;
  pj_timing compiled = e->timing;
  if (e->hooks.before_run) {
    pj__clear_error(e);
    if (e->hooks.before_run(e->hooks.ctx, q, script + st->pos, (size_t)st->len,
                            (size_t)st->pos)) {
      pj_query_free(q);
      return e->err.set ? PJ_ERROR : PJ_INTERRUPTED;
    }
  }
  s = pj__query_run_table(q, name, out);
  /* Keep the first run's bind time (a hook may have run it already). */
  e->timing.bind_ns = compiled.bind_ns;
  pj_query_free(q);
  return s;
}
