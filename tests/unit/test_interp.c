/*
 * test_interp.c — the exec driver and the vectorized interpreter, on plans
 * built by hand (no parser or binder): filters and expressions with SQL's
 * NULL rules, checked arithmetic, lazy CASE/AND/COALESCE, string
 * functions, LIMIT across batch boundaries with early stop, SORT and
 * AGGREGATE breakers, and SCAN_BUF through a sort permutation.
 *
 * Results are compared as text, one column at a time: "1,NULL,'x',2.5".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "interp/vm.h"

static rt_strpool *sp;

/* ---- tables ----------------------------------------------------------------- */

static rt_type parse_type(const char *t) {
  if (!strcmp(t, "i64")) return RT_I64;
  if (!strcmp(t, "i32")) return RT_I32;
  if (!strcmp(t, "u32")) return RT_U32;
  if (!strcmp(t, "f64")) return RT_F64;
  if (!strcmp(t, "str")) return RT_STR;
  if (!strcmp(t, "bool")) return RT_BOOL;
  return RT_ID;
}

/* schema "a:i64,b:str"; cells row-major as text, "NULL" for NULL. */
static rt_table *mk_table(const char *schema, int nrows, const char *const *cells) {
  char names[16][32];
  const char *np[16] = {0};
  rt_type types[16] = {0};
  int nc = 0;
  const char *s = schema;
  while (*s) {
    const char *colon = strchr(s, ':');
    const char *end = strchr(s, ',');
    if (!end) end = s + strlen(s);
    snprintf(names[nc], sizeof names[nc], "%.*s", (int)(colon - s), s);
    char ty[8];
    snprintf(ty, sizeof ty, "%.*s", (int)(end - colon - 1), colon + 1);
    types[nc] = parse_type(ty);
    np[nc] = names[nc];
    nc++;
    s = *end ? end + 1 : end;
  }
  rt_table_builder *b = rt_tb_new("t", nc, np, types);
  for (int r = 0; r < nrows; r++) {
    for (int c = 0; c < nc; c++) {
      const char *v = cells[r * nc + c];
      if (!strcmp(v, "NULL")) rt_tb_append_null(b, c);
      else if (types[c] == RT_F64) rt_tb_append_f64(b, c, strtod(v, NULL));
      else if (types[c] == RT_STR) rt_tb_append_str(b, c, rt_str_intern(sp, v, strlen(v)));
      else rt_tb_append_i64(b, c, strtoll(v, NULL, 0));
    }
  }
  return rt_tb_finish(b);
}

/* One int64 column "a" holding 0..n-1 (not named id, so it stays stored). */
static rt_table *mk_seq(int64_t n) {
  const char *names[] = {"a"};
  rt_type types[] = {RT_I64};
  rt_table_builder *b = rt_tb_new("seq", 1, names, types);
  for (int64_t i = 0; i < n; i++) rt_tb_append_i64(b, 0, i);
  return rt_tb_finish(b);
}

/* ---- plans ------------------------------------------------------------------- */

static ir_plan *tp_new(void) {
  ir_plan *p = calloc(1, sizeof *p);
  rt_arena_init(&p->arena);
  p->ops = rt_arena_alloc(&p->arena, sizeof(ir_op *) * 64);
  return p;
}

static ir_op *tp_op(ir_plan *p, ir_opkind k, const char *stage) {
  ir_op *op = rt_arena_alloc(&p->arena, sizeof *op);
  op->kind = k;
  op->stage = stage;
  op->pos = 10 + p->nops;
  p->ops[p->nops++] = op;
  return op;
}

/* Scans every column of t into new plan columns (ids in table order when
 * the scan is the first thing made). */
static ir_op *tp_scan(ir_plan *p, rt_table *t) {
  ir_op *op = tp_op(p, IR_SCAN_TABLE, "FROM");
  op->scan.table = rt_table_ref(t);
  op->scan.nscan = t->ncols;
  op->scan.table_cols = rt_arena_alloc(&p->arena, sizeof(int) * (size_t)t->ncols);
  op->scan.out_cols = rt_arena_alloc(&p->arena, sizeof(int) * (size_t)t->ncols);
  for (int i = 0; i < t->ncols; i++) {
    op->scan.table_cols[i] = i;
    op->scan.out_cols[i] = ir_col_new(p, t->cols[i].name, t->cols[i].type, t->cols[i].nullable);
  }
  return op;
}

static ir_expr *tx_new(ir_plan *p, ir_exkind k, rt_type t) {
  ir_expr *e = rt_arena_alloc(&p->arena, sizeof *e);
  e->kind = k;
  e->type = t;
  e->nullable = true;
  e->pos = 99;
  return e;
}

static ir_expr *X(ir_plan *p, ir_exkind k, rt_type t, int nargs, ...) {
  ir_expr *e = tx_new(p, k, t);
  e->nargs = nargs;
  e->args = rt_arena_alloc(&p->arena, sizeof(ir_expr *) * (size_t)(nargs + 1));
  va_list ap;
  va_start(ap, nargs);
  for (int i = 0; i < nargs; i++) e->args[i] = va_arg(ap, ir_expr *);
  va_end(ap);
  return e;
}

static ir_expr *C(ir_plan *p, int col) {
  ir_expr *e = tx_new(p, IX_COL, p->cols[col].type);
  e->col = col;
  return e;
}

static ir_expr *I(ir_plan *p, int64_t v) {
  ir_expr *e = tx_new(p, IX_CONST, RT_I64);
  e->ival = v;
  e->nullable = false;
  return e;
}

static ir_expr *F(ir_plan *p, double v) {
  ir_expr *e = tx_new(p, IX_CONST, RT_F64);
  e->fval = v;
  e->nullable = false;
  return e;
}

static ir_expr *S(ir_plan *p, const char *s) {
  ir_expr *e = tx_new(p, IX_CONST, RT_STR);
  e->sval = rt_str_intern(sp, s, strlen(s));
  e->nullable = false;
  return e;
}

static ir_expr *N(ir_plan *p, rt_type t) {
  ir_expr *e = tx_new(p, IX_CONST, t);
  e->is_null = true;
  return e;
}

static ir_expr *P(ir_plan *p, int idx, rt_type t) {
  ir_expr *e = tx_new(p, IX_PARAM, t);
  e->param = idx;
  return e;
}

static ir_op *tp_filter(ir_plan *p, ir_expr *pred) {
  ir_op *op = tp_op(p, IR_FILTER, "WHERE");
  op->filter.pred = pred;
  return op;
}

/* EXTEND name = e: returns the new column id. */
static int tp_compute(ir_plan *p, const char *name, ir_expr *e) {
  ir_op *op = tp_op(p, IR_COMPUTE, "EXTEND");
  op->compute.out_col = ir_col_new(p, name, e->type == RT_NULLT ? RT_I64 : e->type, true);
  op->compute.expr = e;
  return op->compute.out_col;
}

static ir_op *tp_limit(ir_plan *p, ir_expr *limit, ir_expr *offset) {
  ir_op *op = tp_op(p, IR_LIMIT, "LIMIT");
  op->limit.count = limit;
  op->limit.offset = offset;
  return op;
}

static int *tp_ints(ir_plan *p, int n, const int *v) {
  int *a = rt_arena_alloc(&p->arena, sizeof(int) * (size_t)(n + 1));
  if (n > 0) memcpy(a, v, sizeof(int) * (size_t)n);
  return a;
}

/* ORDER BY: keys as (col, desc, nulls_first) triples; carries `carry`. */
static ir_op *tp_sort(ir_plan *p, int ncarry, const int *carry, int nkeys, const int *keys) {
  ir_op *op = tp_op(p, IR_SORT, "ORDER BY");
  op->sort.ncarry = ncarry;
  op->sort.carry = tp_ints(p, ncarry, carry);
  op->sort.nkeys = nkeys;
  op->sort.keys = rt_arena_alloc(&p->arena, sizeof(ir_sortkey) * (size_t)nkeys);
  for (int k = 0; k < nkeys; k++) {
    op->sort.keys[k].col = keys[3 * k];
    op->sort.keys[k].desc = keys[3 * k + 1];
    op->sort.keys[k].nulls_first = keys[3 * k + 2];
  }
  return op;
}

static ir_op *tp_agg(ir_plan *p, int ngroup, const int *group_cols) {
  ir_op *op = tp_op(p, IR_AGGREGATE, "AGGREGATE");
  op->agg.ngroup = ngroup;
  op->agg.group_cols = tp_ints(p, ngroup, group_cols);
  op->agg.group_out = rt_arena_alloc(&p->arena, sizeof(int) * (size_t)(ngroup + 1));
  for (int k = 0; k < ngroup; k++)
    op->agg.group_out[k] = ir_col_new(p, p->cols[group_cols[k]].name,
                                  rt_store_type(p->cols[group_cols[k]].type), true);
  op->agg.aggs = rt_arena_alloc(&p->arena, sizeof(ir_agg) * 16);
  return op;
}

/* Adds an aggregate; returns its output column. */
static int tp_agg_add(ir_plan *p, ir_op *op, rt_aggkind kind, int arg, bool live) {
  ir_agg *a = &op->agg.aggs[op->agg.naggs++];
  a->kind = kind;
  a->arg_col = arg;
  a->arg_type = arg >= 0 ? p->cols[arg].type : RT_I64;
  a->live = live;
  rt_type in = rt_store_type(a->arg_type);
  rt_type out = kind == RT_AGG_COUNT || kind == RT_AGG_COUNT_STAR ? RT_I64
                : kind == RT_AGG_AVG                               ? RT_F64
                                                                   : in;
  a->out_col = ir_col_new(p, ir_aggs[kind].printed, out, true);
  return a->out_col;
}

static ir_op *tp_output(ir_plan *p, int n, const int *cols) {
  ir_op *op = tp_op(p, IR_OUTPUT, "OUTPUT");
  op->output.nout = n;
  op->output.out = tp_ints(p, n, cols);
  op->output.out_names = rt_arena_alloc(&p->arena, sizeof(char *) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) op->output.out_names[i] = p->cols[cols[i]].name;
  return op;
}

/* Cuts the op list into segments, adding a SCAN_BUF after each breaker
 * (what ir/segment.c does, repeated here so the test stands alone). */
static void tp_segment(ir_plan *p) {
  ir_op **ops = rt_arena_alloc(&p->arena, sizeof(ir_op *) * (size_t)(2 * p->nops + 1));
  int nops = 0;
  for (int i = 0; i < p->nops; i++) {
    ir_op *op = p->ops[i];
    ops[nops++] = op;
    if (op->kind != IR_SORT && op->kind != IR_AGGREGATE) continue;
    ir_op *sb = rt_arena_alloc(&p->arena, sizeof *sb);
    sb->kind = IR_SCAN_BUF;
    sb->stage = op->stage;
    sb->scan.buf_op = op;
    sb->scan.out_cols = rt_arena_alloc(&p->arena, sizeof(int) * 32);
    if (op->kind == IR_SORT) {
      for (int k = 0; k < op->sort.ncarry; k++) sb->scan.out_cols[sb->scan.nscan++] = op->sort.carry[k];
    } else {
      for (int k = 0; k < op->agg.ngroup; k++) sb->scan.out_cols[sb->scan.nscan++] = op->agg.group_out[k];
      for (int k = 0; k < op->agg.naggs; k++)
        if (op->agg.aggs[k].live) sb->scan.out_cols[sb->scan.nscan++] = op->agg.aggs[k].out_col;
    }
    ops[nops++] = sb;
  }
  p->ops = ops;
  p->nops = nops;
  p->segs = rt_arena_alloc(&p->arena, sizeof(ir_segment) * (size_t)(nops + 1));
  ir_segment *seg = NULL;
  for (int i = 0; i < nops; i++) {
    ir_op *op = ops[i];
    switch (op->kind) {
    case IR_SCAN_TABLE:
    case IR_SCAN_SQL:
    case IR_SCAN_BUF:
      seg = &p->segs[p->nsegs++];
      seg->source = op;
      seg->steps = rt_arena_alloc(&p->arena, sizeof(ir_op *) * (size_t)(nops + 1));
      break;
    case IR_SORT:
    case IR_AGGREGATE:
    case IR_OUTPUT: seg->sink = op; break;
    default: seg->steps[seg->nsteps++] = op; break;
    }
  }
}

/* ---- running ----------------------------------------------------------------- */

typedef struct trun {
  rt_table *t;       /* result, or NULL on error */
  char err[512];
  int batches;       /* batch functions picked */
  int64_t rows_in;
} trun;

static ex_batch_fn count_pick(void *ctx, int seg) {
  (*(int *)ctx)++;
  return vm_run_batch;
}

static trun tp_run_params(ir_plan *p, int nparams, const ex_value *params, volatile int *intr) {
  trun r = {0};
  tp_segment(p);
  ex_run run;
  ex_run_init(&run, p, sp, NULL, nparams, params);
  run.interrupt = intr;
  if (ex_run_plan(&run, count_pick, &r.batches) == 0) {
    const ir_op *out = p->segs[p->nsegs - 1].sink;
    r.t = rt_rowbuf_to_table(&run.result, "result", out->output.out_names, NULL);
    assert_non_null(r.t);
  } else {
    assert_true(run.err.set);
    snprintf(r.err, sizeof r.err, "%s", run.err.msg);
  }
  r.rows_in = run.rows_in;
  ex_run_free(&run);
  ir_plan_free(p);
  return r;
}

static trun tp_run(ir_plan *p) { return tp_run_params(p, 0, NULL, NULL); }

/* Column c of a result as text: "1,NULL,'x',2.5". */
static const char *col_text(const rt_table *t, int c) {
  static char buf[1 << 16];
  size_t len = 0;
  buf[0] = 0;
  rt_view v;
  rt_table_view(t, c, 0, &v);
  for (int64_t r = 0; r < t->nrows && len < sizeof buf - 64; r++) {
    if (r) buf[len++] = ',';
    if (rt_view_is_null(&v, (uint32_t)r)) {
      len += (size_t)snprintf(buf + len, sizeof buf - len, "NULL");
    } else if (v.type == RT_F64) {
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%g", rt_view_f64(&v, (uint32_t)r));
    } else if (v.type == RT_STR) {
      size_t n;
      const char *s = rt_str_get(sp, rt_view_str(&v, (uint32_t)r), &n);
      len += (size_t)snprintf(buf + len, sizeof buf - len, "'%.*s'", (int)n, s);
    } else {
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%lld",
                              (long long)rt_view_i64(&v, (uint32_t)r));
    }
  }
  return buf;
}

static int setup(void **state) {
  sp = rt_strpool_new();
  return 0;
}

static int teardown(void **state) {
  rt_strpool_free(sp);
  return 0;
}

/* ---- tests ------------------------------------------------------------------- */

static rt_table *abs_table(void) {
  const char *cells[] = {
      "1", "0.5", "one",   "2", "1", "two",    "3", "1.5", "three", "4", "2", "four",
      "5", "2.5", "five",  "6", "3", "six",    "7", "3.5", "seven", "8", "4", "eight",
      "9", "4.5", "nine", "10", "5", "ten",
  };
  return mk_table("a:i64,b:f64,s:str", 10, cells);
}

static void test_filter_compute_output(void **state) {
  rt_table *t = abs_table();
  ir_plan *p = tp_new();
  tp_scan(p, t);
  tp_filter(p, X(p, IX_AND, RT_BOOL, 2, X(p, IX_GT, RT_BOOL, 2, C(p, 0), I(p, 3)),
                 X(p, IX_LE, RT_BOOL, 2, C(p, 0), I(p, 8))));
  int c = tp_compute(p, "c", X(p, IX_ADD, RT_I64, 2, X(p, IX_MUL, RT_I64, 2, C(p, 0), I(p, 10)), I(p, 1)));
  int d = tp_compute(p, "d", X(p, IX_MUL, RT_F64, 2, C(p, 1), F(p, 2.0)));
  int u = tp_compute(p, "u", X(p, IX_UPPER, RT_STR, 1, C(p, 2)));
  /* reads a computed column again, and a filter after a compute */
  int e = tp_compute(p, "e", X(p, IX_SUB, RT_I64, 2, C(p, c), C(p, 0)));
  tp_filter(p, X(p, IX_NE, RT_BOOL, 2, C(p, 0), I(p, 6)));
  tp_output(p, 5, (int[]){0, c, d, u, e});
  trun r = tp_run(p);
  assert_non_null(r.t);
  assert_int_equal(r.t->ncols, 5);
  assert_string_equal(col_text(r.t, 0), "4,5,7,8");
  assert_string_equal(col_text(r.t, 1), "41,51,71,81");
  assert_string_equal(col_text(r.t, 2), "4,5,7,8");
  assert_string_equal(col_text(r.t, 3), "'FOUR','FIVE','SEVEN','EIGHT'");
  assert_string_equal(col_text(r.t, 4), "37,46,64,73");
  assert_int_equal(r.rows_in, 10);
  assert_int_equal(r.batches, 1);
  rt_table_unref(r.t);
  rt_table_unref(t);
}

/* Every pair of {0, 1, NULL} as booleans. */
static rt_table *truth_table(void) {
  const char *v[] = {"0", "1", "NULL"};
  const char *cells[18];
  for (int i = 0; i < 9; i++) {
    cells[2 * i] = v[i / 3];
    cells[2 * i + 1] = v[i % 3];
  }
  return mk_table("x:bool,y:bool", 9, cells);
}

static void test_three_valued_logic(void **state) {
  rt_table *t = truth_table();
  ir_plan *p = tp_new();
  tp_scan(p, t);
  int and_ = tp_compute(p, "and", X(p, IX_AND, RT_BOOL, 2, C(p, 0), C(p, 1)));
  int or_ = tp_compute(p, "or", X(p, IX_OR, RT_BOOL, 2, C(p, 0), C(p, 1)));
  int not_ = tp_compute(p, "not", X(p, IX_NOT, RT_BOOL, 1, C(p, 0)));
  int eq = tp_compute(p, "eq", X(p, IX_EQ, RT_BOOL, 2, C(p, 0), C(p, 1)));
  int lt = tp_compute(p, "lt", X(p, IX_LT, RT_BOOL, 2, C(p, 0), C(p, 1)));
  int is = tp_compute(p, "is", X(p, IX_IS, RT_BOOL, 2, C(p, 0), C(p, 1)));
  int isnot = tp_compute(p, "isnot", X(p, IX_ISNOT, RT_BOOL, 2, C(p, 0), C(p, 1)));
  int isnull = tp_compute(p, "isnull", X(p, IX_ISNULL, RT_BOOL, 1, C(p, 0)));
  int notnull = tp_compute(p, "notnull", X(p, IX_NOTNULL, RT_BOOL, 1, C(p, 1)));
  /* x IN (y, 1): NULL unless a match; a NULL item makes a miss NULL */
  int in = tp_compute(p, "in", X(p, IX_IN, RT_BOOL, 3, C(p, 0), C(p, 1), I(p, 1)));
  int isnulllit = tp_compute(p, "isnulllit", X(p, IX_IS, RT_BOOL, 2, C(p, 0), N(p, RT_NULLT)));
  tp_output(p, 13, (int[]){0, 1, and_, or_, not_, eq, lt, is, isnot, isnull, notnull, in, isnulllit});
  trun r = tp_run(p);
  assert_non_null(r.t);
  /* rows: (0,0) (0,1) (0,N) (1,0) (1,1) (1,N) (N,0) (N,1) (N,N) */
  assert_string_equal(col_text(r.t, 2), "0,0,0,0,1,NULL,0,NULL,NULL");
  assert_string_equal(col_text(r.t, 3), "0,1,NULL,1,1,1,NULL,1,NULL");
  assert_string_equal(col_text(r.t, 4), "1,1,1,0,0,0,NULL,NULL,NULL");
  assert_string_equal(col_text(r.t, 5), "1,0,NULL,0,1,NULL,NULL,NULL,NULL");
  assert_string_equal(col_text(r.t, 6), "0,1,NULL,0,0,NULL,NULL,NULL,NULL");
  assert_string_equal(col_text(r.t, 7), "1,0,0,0,1,0,0,0,1");
  assert_string_equal(col_text(r.t, 8), "0,1,1,1,0,1,1,1,0");
  assert_string_equal(col_text(r.t, 9), "0,0,0,0,0,0,1,1,1");
  assert_string_equal(col_text(r.t, 10), "1,1,0,1,1,0,1,1,0");
  assert_string_equal(col_text(r.t, 11), "1,0,NULL,1,1,1,NULL,NULL,NULL");
  assert_string_equal(col_text(r.t, 12), "0,0,0,0,0,0,1,1,1");
  rt_table_unref(r.t);

  /* WHERE drops NULL and FALSE: x OR y is true on 5 rows */
  p = tp_new();
  tp_scan(p, t);
  tp_filter(p, X(p, IX_OR, RT_BOOL, 2, C(p, 0), C(p, 1)));
  tp_output(p, 2, (int[]){0, 1});
  r = tp_run(p);
  assert_string_equal(col_text(r.t, 0), "0,1,1,1,NULL");
  assert_string_equal(col_text(r.t, 1), "1,0,1,NULL,1");
  rt_table_unref(r.t);
  rt_table_unref(t);
}

static void test_in_lists(void **state) {
  const char *cells[] = {"1", "2", "3", "NULL"};
  rt_table *t = mk_table("x:i64", 4, cells);
  ir_plan *p = tp_new();
  tp_scan(p, t);
  int a = tp_compute(p, "a", X(p, IX_IN, RT_BOOL, 3, C(p, 0), I(p, 1), I(p, 3)));
  int b = tp_compute(p, "b", X(p, IX_IN, RT_BOOL, 3, C(p, 0), I(p, 2), N(p, RT_I64)));
  /* NOT IN with a NULL item is never TRUE */
  int c = tp_compute(p, "c", X(p, IX_NOT, RT_BOOL, 1, X(p, IX_IN, RT_BOOL, 3, C(p, 0), I(p, 2), N(p, RT_I64))));
  int d = tp_compute(p, "d", X(p, IX_IN, RT_BOOL, 2, X(p, IX_TOF64, RT_F64, 1, C(p, 0)), F(p, 3.0)));
  tp_output(p, 4, (int[]){a, b, c, d});
  trun r = tp_run(p);
  assert_string_equal(col_text(r.t, 0), "1,0,1,NULL");
  assert_string_equal(col_text(r.t, 1), "NULL,1,NULL,NULL");
  assert_string_equal(col_text(r.t, 2), "NULL,0,NULL,NULL");
  assert_string_equal(col_text(r.t, 3), "0,0,1,NULL");
  rt_table_unref(r.t);
  rt_table_unref(t);
}

/* Runs `EXTEND v = e(a, b)` over one row (a, b) and returns the error text
 * ("" on success; then *out holds the value as text). */
static const char *eval_row(ir_exkind k, rt_type ty, int nargs, const char *a, const char *b,
                            char *out) {
  static char err[512];
  const char *cells[] = {a, b};
  rt_table *t = mk_table(ty == RT_F64 ? "a:f64,b:f64" : "a:i64,b:i64", 1, cells);
  ir_plan *p = tp_new();
  tp_scan(p, t);
  ir_expr *e = nargs == 1 ? X(p, k, ty, 1, C(p, 0)) : X(p, k, ty, 2, C(p, 0), C(p, 1));
  int v = tp_compute(p, "v", e);
  tp_output(p, 1, (int[]){v});
  trun r = tp_run(p);
  snprintf(err, sizeof err, "%s", r.err);
  if (r.t) {
    strcpy(out, col_text(r.t, 0));
    rt_table_unref(r.t);
  }
  rt_table_unref(t);
  return err;
}

static void test_overflow_errors(void **state) {
  char out[64];
  assert_string_equal(eval_row(IX_ADD, RT_I64, 2, "9223372036854775807", "1", out), "EXTEND: integer overflow");
  assert_string_equal(eval_row(IX_SUB, RT_I64, 2, "-9223372036854775808", "1", out), "EXTEND: integer overflow");
  assert_string_equal(eval_row(IX_MUL, RT_I64, 2, "4611686018427387904", "2", out), "EXTEND: integer overflow");
  assert_string_equal(eval_row(IX_DIV, RT_I64, 2, "-9223372036854775808", "-1", out), "EXTEND: integer overflow");
  assert_string_equal(eval_row(IX_NEG, RT_I64, 1, "-9223372036854775808", "0", out), "EXTEND: integer overflow");
  assert_string_equal(eval_row(IX_ABS, RT_I64, 1, "-9223372036854775808", "0", out), "EXTEND: integer overflow");
  /* the edges that do fit */
  assert_string_equal(eval_row(IX_ADD, RT_I64, 2, "9223372036854775806", "1", out), "");
  assert_string_equal(out, "9223372036854775807");
  assert_string_equal(eval_row(IX_MUL, RT_I64, 2, "-4611686018427387904", "2", out), "");
  assert_string_equal(out, "-9223372036854775808");
  assert_string_equal(eval_row(IX_ABS, RT_I64, 1, "-5", "0", out), "");
  assert_string_equal(out, "5");
  /* a NULL operand never overflows */
  assert_string_equal(eval_row(IX_ADD, RT_I64, 2, "9223372036854775807", "NULL", out), "");
  assert_string_equal(out, "NULL");
}

static void test_division(void **state) {
  char out[64];
  struct { ir_exkind k; rt_type t; const char *a, *b, *want; } cases[] = {
      {IX_DIV, RT_I64, "7", "-2", "-3"},
      {IX_DIV, RT_I64, "7", "0", "NULL"},
      {IX_MOD, RT_I64, "-7", "3", "-1"},
      {IX_MOD, RT_I64, "7", "0", "NULL"},
      {IX_MOD, RT_I64, "-9223372036854775808", "-1", "0"},
      {IX_DIV, RT_I64, "-9223372036854775807", "-1", "9223372036854775807"},
      {IX_DIV, RT_F64, "1", "0", "NULL"},
      {IX_DIV, RT_F64, "1", "4", "0.25"},
      {IX_SUB, RT_F64, "1e308", "-1e308", "inf"},
      {IX_SHL, RT_I64, "1", "3", "8"},
      {IX_SHL, RT_I64, "1", "-1", "0"},
      {IX_SHL, RT_I64, "1", "64", "0"},
      {IX_SHR, RT_I64, "-8", "1", "-4"},
      {IX_SHR, RT_I64, "-1", "100", "-1"},
      {IX_SHR, RT_I64, "16", "-2", "64"},
      {IX_BITAND, RT_I64, "12", "10", "8"},
      {IX_BITOR, RT_I64, "12", "10", "14"},
      {IX_BITNOT, RT_I64, "12", "0", "-13"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int nargs = cases[i].k == IX_BITNOT ? 1 : 2;
    const char *err = eval_row(cases[i].k, cases[i].t, nargs, cases[i].a, cases[i].b, out);
    assert_string_equal(err, "");
    assert_string_equal(out, cases[i].want);
  }
}

static void test_lazy_case_and_coalesce(void **state) {
  const char *cells[] = {"1", "NULL", "9223372036854775807", "7", "NULL", "NULL"};
  rt_table *t = mk_table("a:i64,z:i64", 3, cells);
  ir_plan *p = tp_new();
  tp_scan(p, t);
  /* a*2 would overflow on row 1, which never reaches the THEN */
  int c = tp_compute(p, "c", X(p, IX_CASE, RT_I64, 3, X(p, IX_LT, RT_BOOL, 2, C(p, 0), I(p, 100)),
                                X(p, IX_MUL, RT_I64, 2, C(p, 0), I(p, 2)), I(p, -1)));
  int k = tp_compute(p, "k", X(p, IX_COALESCE, RT_I64, 2, C(p, 1), X(p, IX_MUL, RT_I64, 2, C(p, 0), I(p, 2))));
  int n = tp_compute(p, "n", X(p, IX_COALESCE, RT_I64, 2, C(p, 0), I(p, 5)));
  /* two WHENs, no ELSE (NULL) */
  int w = tp_compute(p, "w", X(p, IX_CASE, RT_STR, 5, X(p, IX_EQ, RT_BOOL, 2, C(p, 0), I(p, 1)), S(p, "one"),
                                X(p, IX_ISNULL, RT_BOOL, 1, C(p, 0)), S(p, "none"), N(p, RT_STR)));
  int ni = tp_compute(p, "ni", X(p, IX_NULLIF, RT_I64, 2, C(p, 0), I(p, 1)));
  int mx = tp_compute(p, "mx", X(p, IX_MAX, RT_I64, 3, C(p, 0), I(p, 3), I(p, -1)));
  int mn = tp_compute(p, "mn", X(p, IX_MIN, RT_I64, 2, C(p, 0), I(p, 3)));
  tp_filter(p, X(p, IX_OR, RT_BOOL, 2, X(p, IX_ISNULL, RT_BOOL, 1, C(p, 0)),
                 X(p, IX_AND, RT_BOOL, 2, X(p, IX_LT, RT_BOOL, 2, C(p, 0), I(p, 100)),
                   X(p, IX_GT, RT_BOOL, 2, X(p, IX_MUL, RT_I64, 2, C(p, 0), I(p, 2)), I(p, 0)))));
  tp_output(p, 8, (int[]){0, c, k, n, w, ni, mx, mn});
  trun r = tp_run(p);
  assert_string_equal(r.err, "");
  assert_string_equal(col_text(r.t, 0), "1,NULL");
  assert_string_equal(col_text(r.t, 1), "2,-1");
  assert_string_equal(col_text(r.t, 2), "2,NULL");
  assert_string_equal(col_text(r.t, 3), "1,5");
  assert_string_equal(col_text(r.t, 4), "'one','none'");
  assert_string_equal(col_text(r.t, 5), "NULL,NULL");
  assert_string_equal(col_text(r.t, 6), "3,NULL");
  assert_string_equal(col_text(r.t, 7), "1,NULL");
  rt_table_unref(r.t);

  /* the same product evaluated eagerly does fail */
  p = tp_new();
  tp_scan(p, t);
  int v = tp_compute(p, "v", X(p, IX_MUL, RT_I64, 2, C(p, 0), I(p, 2)));
  tp_output(p, 1, (int[]){v});
  r = tp_run(p);
  assert_null(r.t);
  assert_string_equal(r.err, "EXTEND: integer overflow");
  rt_table_unref(t);
}

static void test_strings(void **state) {
  const char *cells[] = {"Hello", "  pad  ", "", "NULL", "héllo"};
  rt_table *t = mk_table("s:str", 5, cells);
  ir_plan *p = tp_new();
  tp_scan(p, t);
  int len = tp_compute(p, "len", X(p, IX_LENGTH, RT_I64, 1, C(p, 0)));
  int up = tp_compute(p, "up", X(p, IX_UPPER, RT_STR, 1, C(p, 0)));
  int sub = tp_compute(p, "sub", X(p, IX_SUBSTR, RT_STR, 3, C(p, 0), I(p, 2), I(p, 3)));
  int tr = tp_compute(p, "tr", X(p, IX_TRIM, RT_STR, 1, C(p, 0)));
  int cat = tp_compute(p, "cat", X(p, IX_CONCAT, RT_STR, 2, C(p, 0), S(p, "!")));
  int like = tp_compute(p, "like", X(p, IX_LIKE, RT_BOOL, 2, C(p, 0), S(p, "h%")));
  int glob = tp_compute(p, "glob", X(p, IX_GLOB, RT_BOOL, 2, C(p, 0), S(p, "H*")));
  int ins = tp_compute(p, "ins", X(p, IX_INSTR, RT_I64, 2, C(p, 0), S(p, "l")));
  int lt = tp_compute(p, "lt", X(p, IX_LT, RT_BOOL, 2, C(p, 0), S(p, "Hz")));
  int eq = tp_compute(p, "eq", X(p, IX_EQ, RT_BOOL, 2, C(p, 0), S(p, "Hello")));
  int rtr = tp_compute(p, "rtr", X(p, IX_RTRIM, RT_STR, 2, C(p, 0), S(p, "o ")));
  tp_output(p, 11, (int[]){len, up, sub, tr, cat, like, glob, ins, lt, eq, rtr});
  trun r = tp_run(p);
  assert_string_equal(r.err, "");
  assert_string_equal(col_text(r.t, 0), "5,7,0,NULL,5");
  assert_string_equal(col_text(r.t, 1), "'HELLO','  PAD  ','',NULL,'HéLLO'");
  assert_string_equal(col_text(r.t, 2), "'ell',' pa','',NULL,'éll'");
  assert_string_equal(col_text(r.t, 3), "'Hello','pad','',NULL,'héllo'");
  assert_string_equal(col_text(r.t, 4), "'Hello!','  pad  !','!',NULL,'héllo!'");
  assert_string_equal(col_text(r.t, 5), "1,0,0,NULL,1");
  assert_string_equal(col_text(r.t, 6), "1,0,0,NULL,0");
  assert_string_equal(col_text(r.t, 7), "3,0,0,NULL,3");
  assert_string_equal(col_text(r.t, 8), "1,1,1,NULL,0");
  assert_string_equal(col_text(r.t, 9), "1,0,0,NULL,0");
  assert_string_equal(col_text(r.t, 10), "'Hell','  pad','',NULL,'héll'");
  rt_table_unref(r.t);
  rt_table_unref(t);
}

static void test_casts(void **state) {
  const char *cells[] = {"42", "1.5", "12abc", "-7", "-2.75", " 3.5e1x"};
  rt_table *t = mk_table("i:i64,f:f64,s:str", 2, cells);
  ir_plan *p = tp_new();
  tp_scan(p, t);
  int a = tp_compute(p, "a", X(p, IX_TOSTR, RT_STR, 1, C(p, 0)));
  int b = tp_compute(p, "b", X(p, IX_TOSTR, RT_STR, 1, C(p, 1)));
  int c = tp_compute(p, "c", X(p, IX_TOINT, RT_I64, 1, C(p, 2)));
  int d = tp_compute(p, "d", X(p, IX_TOINT, RT_I64, 1, C(p, 1)));
  int e = tp_compute(p, "e", X(p, IX_STRTOF64, RT_F64, 1, C(p, 2)));
  int f = tp_compute(p, "f", X(p, IX_ADD, RT_F64, 2, X(p, IX_TOF64, RT_F64, 1, C(p, 0)), C(p, 1)));
  tp_output(p, 6, (int[]){a, b, c, d, e, f});
  trun r = tp_run(p);
  assert_string_equal(r.err, "");
  assert_string_equal(col_text(r.t, 0), "'42','-7'");
  assert_string_equal(col_text(r.t, 1), "'1.5','-2.75'");
  assert_string_equal(col_text(r.t, 2), "12,3");
  assert_string_equal(col_text(r.t, 3), "1,-2");
  assert_string_equal(col_text(r.t, 4), "12,35");
  assert_string_equal(col_text(r.t, 5), "43.5,-9.75");
  rt_table_unref(r.t);
  rt_table_unref(t);
}

static void test_params(void **state) {
  rt_table *t = mk_seq(10);
  ir_plan *p = tp_new();
  tp_scan(p, t);
  tp_filter(p, X(p, IX_GE, RT_BOOL, 2, C(p, 0), P(p, 1, RT_I64)));
  int s = tp_compute(p, "s", X(p, IX_CONCAT, RT_STR, 2, P(p, 2, RT_STR), X(p, IX_TOSTR, RT_STR, 1, C(p, 0))));
  int n = tp_compute(p, "n", X(p, IX_ADD, RT_I64, 2, C(p, 0), P(p, 3, RT_I64)));
  tp_limit(p, P(p, 4, RT_I64), NULL);
  tp_output(p, 2, (int[]){s, n});
  ex_value params[5] = {{0}};
  params[1] = (ex_value){.type = RT_I64, .i = 7};
  params[2] = (ex_value){.type = RT_STR, .s = rt_str_intern(sp, "#", 1)};
  params[3] = (ex_value){.type = RT_NULLT};
  params[4] = (ex_value){.type = RT_I64, .i = 2};
  trun r = tp_run_params(p, 4, params, NULL);
  assert_string_equal(r.err, "");
  assert_string_equal(col_text(r.t, 0), "'#7','#8'");
  assert_string_equal(col_text(r.t, 1), "NULL,NULL");
  rt_table_unref(r.t);

  /* a negative count is an error of the LIMIT stage */
  p = tp_new();
  tp_scan(p, t);
  tp_limit(p, P(p, 1, RT_I64), NULL);
  tp_output(p, 1, (int[]){0});
  params[1] = (ex_value){.type = RT_I64, .i = -1};
  r = tp_run_params(p, 1, params, NULL);
  assert_null(r.t);
  assert_string_equal(r.err, "LIMIT: expected a count that is zero or more");
  rt_table_unref(t);
}

static void test_limit_offset_batches(void **state) {
  rt_table *t = mk_seq(20000);
  /* across the first batch boundary, stopping after the second batch */
  ir_plan *p = tp_new();
  tp_scan(p, t);
  tp_limit(p, I(p, 5), I(p, 8190));
  tp_output(p, 1, (int[]){0});
  trun r = tp_run(p);
  assert_string_equal(col_text(r.t, 0), "8190,8191,8192,8193,8194");
  assert_int_equal(r.batches, 2);
  assert_int_equal(r.rows_in, 2 * RT_BATCH);
  rt_table_unref(r.t);

  /* after a filter: even numbers, skip 4096 of them */
  p = tp_new();
  tp_scan(p, t);
  tp_filter(p, X(p, IX_EQ, RT_BOOL, 2, X(p, IX_MOD, RT_I64, 2, C(p, 0), I(p, 2)), I(p, 0)));
  tp_limit(p, I(p, 3), I(p, 4096));
  tp_output(p, 1, (int[]){0});
  r = tp_run(p);
  assert_string_equal(col_text(r.t, 0), "8192,8194,8196");
  assert_int_equal(r.batches, 2);
  rt_table_unref(r.t);

  /* two LIMITs: the inner one stops the source */
  p = tp_new();
  tp_scan(p, t);
  tp_limit(p, I(p, 10000), I(p, 100));
  tp_limit(p, I(p, 2), I(p, 9995));
  tp_output(p, 1, (int[]){0});
  r = tp_run(p);
  assert_string_equal(col_text(r.t, 0), "10095,10096");
  rt_table_unref(r.t);

  /* LIMIT 0 reads nothing; a LIMIT past the end reads everything */
  p = tp_new();
  tp_scan(p, t);
  tp_limit(p, I(p, 0), NULL);
  tp_output(p, 1, (int[]){0});
  r = tp_run(p);
  assert_int_equal(r.t->nrows, 0);
  assert_int_equal(r.batches, 0);
  rt_table_unref(r.t);

  p = tp_new();
  tp_scan(p, t);
  tp_limit(p, I(p, 100000), I(p, 19998));
  tp_output(p, 1, (int[]){0});
  r = tp_run(p);
  assert_string_equal(col_text(r.t, 0), "19998,19999");
  assert_int_equal(r.batches, 3);
  rt_table_unref(r.t);
  rt_table_unref(t);
}

static rt_table *sort_table(void) {
  const char *cells[] = {
      "3", "b", "0",  "NULL", "x", "1", "1", "a", "2", "3", "a", "3",
      "NULL", "y", "4", "2", "z", "5",  "1", "a", "6",
  };
  return mk_table("k1:i64,k2:str,seq:i64", 7, cells);
}

static const char *sorted_seq(const int *keys, int nkeys) {
  static char out[256];
  rt_table *t = sort_table();
  ir_plan *p = tp_new();
  tp_scan(p, t);
  tp_sort(p, 3, (int[]){0, 1, 2}, nkeys, keys);
  tp_output(p, 1, (int[]){2});
  trun r = tp_run(p);
  assert_non_null(r.t);
  snprintf(out, sizeof out, "%s", col_text(r.t, 0));
  rt_table_unref(r.t);
  rt_table_unref(t);
  return out;
}

static void test_sort(void **state) {
  /* k1 ASC (NULLs first), stable among equal keys */
  assert_string_equal(sorted_seq((int[]){0, 0, 1}, 1), "1,4,2,6,5,0,3");
  /* k1 DESC NULLS LAST, k2 ASC */
  assert_string_equal(sorted_seq((int[]){0, 1, 0, 1, 0, 0}, 2), "3,0,5,2,6,1,4");
  /* k1 ASC NULLS LAST */
  assert_string_equal(sorted_seq((int[]){0, 0, 0}, 1), "2,6,5,0,3,1,4");
  /* k2 DESC: strings in binary order */
  assert_string_equal(sorted_seq((int[]){1, 1, 0}, 1), "5,4,1,0,2,3,6");
}

static void test_scan_buf_through_perm(void **state) {
  /* sort 20000 rows descending, then filter and limit in the next segment:
   * batches of the second segment read the buffer through the permutation */
  rt_table *t = mk_seq(20000);
  ir_plan *p = tp_new();
  tp_scan(p, t);
  tp_sort(p, 1, (int[]){0}, 1, (int[]){0, 1, 0});
  tp_filter(p, X(p, IX_EQ, RT_BOOL, 2, X(p, IX_MOD, RT_I64, 2, C(p, 0), I(p, 1000)), I(p, 7)));
  int d = tp_compute(p, "d", X(p, IX_MUL, RT_I64, 2, C(p, 0), I(p, 2)));
  tp_limit(p, I(p, 12), I(p, 1));
  tp_output(p, 2, (int[]){0, d});
  trun r = tp_run(p);
  assert_string_equal(r.err, "");
  assert_string_equal(col_text(r.t, 0), "18007,17007,16007,15007,14007,13007,12007,11007,10007,9007,8007,7007");
  assert_string_equal(col_text(r.t, 1), "36014,34014,32014,30014,28014,26014,24014,22014,20014,18014,16014,14014");
  /* 3 batches to fill the sort, 2 of the sorted buffer before the limit */
  assert_int_equal(r.batches, 5);
  assert_int_equal(r.rows_in, 20000);
  rt_table_unref(r.t);

  /* sort of a sort: the second reads a permuted view of the first */
  p = tp_new();
  tp_scan(p, t);
  tp_filter(p, X(p, IX_LT, RT_BOOL, 2, C(p, 0), I(p, 6)));
  int m = tp_compute(p, "m", X(p, IX_MOD, RT_I64, 2, C(p, 0), I(p, 3)));
  tp_sort(p, 2, (int[]){0, m}, 1, (int[]){0, 1, 0});
  tp_sort(p, 2, (int[]){0, m}, 1, (int[]){m, 0, 1});
  tp_output(p, 2, (int[]){0, m});
  r = tp_run(p);
  assert_string_equal(col_text(r.t, 0), "3,0,4,1,5,2");
  assert_string_equal(col_text(r.t, 1), "0,0,1,1,2,2");
  rt_table_unref(r.t);
  rt_table_unref(t);
}

static rt_table *agg_table(void) {
  const char *cells[] = {
      "1", "a", "10", "1.5",      "2", "b", "20", "2.5",   "1", "a", "NULL", "0.5",
      "NULL", "c", "5", "-0.0",   "2", "b", "7", "0.0",    "NULL", "c", "NULL", "1.0",
      "1", "a", "3", "2.0",
  };
  return mk_table("g:i64,s:str,v:i64,d:f64", 7, cells);
}

static void test_aggregate_by_int(void **state) {
  rt_table *t = agg_table();
  ir_plan *p = tp_new();
  tp_scan(p, t);
  ir_op *ag = tp_agg(p, 1, (int[]){0});
  int cs = tp_agg_add(p, ag, RT_AGG_COUNT_STAR, -1, true);
  int cv = tp_agg_add(p, ag, RT_AGG_COUNT, 2, true);
  int sv = tp_agg_add(p, ag, RT_AGG_SUM, 2, true);
  tp_agg_add(p, ag, RT_AGG_SUM, 3, false);   /* dead: not computed, not read */
  int mnv = tp_agg_add(p, ag, RT_AGG_MIN, 2, true);
  int mxv = tp_agg_add(p, ag, RT_AGG_MAX, 2, true);
  int av = tp_agg_add(p, ag, RT_AGG_AVG, 2, true);
  int sd = tp_agg_add(p, ag, RT_AGG_SUM, 3, true);
  int mns = tp_agg_add(p, ag, RT_AGG_MIN, 1, true);
  int mxs = tp_agg_add(p, ag, RT_AGG_MAX, 1, true);
  int any = tp_agg_add(p, ag, RT_AGG_ANY_VALUE, 2, true);
  int mxd = tp_agg_add(p, ag, RT_AGG_MAX, 3, true);
  tp_output(p, 12, (int[]){ag->agg.group_out[0], cs, cv, sv, mnv, mxv, av, sd, mns, mxs, any, mxd});
  trun r = tp_run(p);
  assert_string_equal(r.err, "");
  /* groups in first-seen order: 1, 2, NULL */
  assert_string_equal(col_text(r.t, 0), "1,2,NULL");
  assert_string_equal(col_text(r.t, 1), "3,2,2");
  assert_string_equal(col_text(r.t, 2), "2,2,1");
  assert_string_equal(col_text(r.t, 3), "13,27,5");
  assert_string_equal(col_text(r.t, 4), "3,7,5");
  assert_string_equal(col_text(r.t, 5), "10,20,5");
  assert_string_equal(col_text(r.t, 6), "6.5,13.5,5");
  assert_string_equal(col_text(r.t, 7), "4,2.5,1");
  assert_string_equal(col_text(r.t, 8), "'a','b','c'");
  assert_string_equal(col_text(r.t, 9), "'a','b','c'");
  assert_string_equal(col_text(r.t, 10), "10,20,5");
  assert_string_equal(col_text(r.t, 11), "2,2.5,1");
  rt_table_unref(r.t);
  rt_table_unref(t);
}

static void test_aggregate_keys(void **state) {
  rt_table *t = agg_table();
  /* by string */
  ir_plan *p = tp_new();
  tp_scan(p, t);
  ir_op *ag = tp_agg(p, 1, (int[]){1});
  int sv = tp_agg_add(p, ag, RT_AGG_SUM, 2, true);
  tp_output(p, 2, (int[]){ag->agg.group_out[0], sv});
  trun r = tp_run(p);
  assert_string_equal(col_text(r.t, 0), "'a','b','c'");
  assert_string_equal(col_text(r.t, 1), "13,27,5");
  rt_table_unref(r.t);

  /* by (string, int key computed in the segment) */
  p = tp_new();
  tp_scan(p, t);
  int big = tp_compute(p, "big", X(p, IX_GT, RT_BOOL, 2, C(p, 2), I(p, 6)));
  ag = tp_agg(p, 2, (int[]){1, big});
  int cs = tp_agg_add(p, ag, RT_AGG_COUNT_STAR, -1, true);
  tp_output(p, 3, (int[]){ag->agg.group_out[0], ag->agg.group_out[1], cs});
  r = tp_run(p);
  assert_string_equal(col_text(r.t, 0), "'a','b','a','c','c','a'");
  assert_string_equal(col_text(r.t, 1), "1,1,NULL,0,NULL,0");
  assert_string_equal(col_text(r.t, 2), "1,2,1,1,1,1");
  rt_table_unref(r.t);

  /* by a double: -0.0 and 0.0 are one group */
  p = tp_new();
  tp_scan(p, t);
  tp_filter(p, X(p, IX_LT, RT_BOOL, 2, C(p, 3), F(p, 1.0)));
  ag = tp_agg(p, 1, (int[]){3});
  cs = tp_agg_add(p, ag, RT_AGG_COUNT_STAR, -1, true);
  tp_output(p, 2, (int[]){ag->agg.group_out[0], cs});
  r = tp_run(p);
  assert_string_equal(col_text(r.t, 0), "0.5,0");
  assert_string_equal(col_text(r.t, 1), "1,2");
  rt_table_unref(r.t);
  rt_table_unref(t);
}

static void test_aggregate_empty_and_overflow(void **state) {
  rt_table *t = agg_table();
  /* no GROUP BY over no rows: one row, COUNT 0 and SUM NULL */
  ir_plan *p = tp_new();
  tp_scan(p, t);
  tp_filter(p, X(p, IX_GT, RT_BOOL, 2, C(p, 2), I(p, 1000)));
  ir_op *ag = tp_agg(p, 0, NULL);
  int cs = tp_agg_add(p, ag, RT_AGG_COUNT_STAR, -1, true);
  int cv = tp_agg_add(p, ag, RT_AGG_COUNT, 2, true);
  int sv = tp_agg_add(p, ag, RT_AGG_SUM, 2, true);
  int av = tp_agg_add(p, ag, RT_AGG_AVG, 3, true);
  int mx = tp_agg_add(p, ag, RT_AGG_MAX, 1, true);
  tp_output(p, 5, (int[]){cs, cv, sv, av, mx});
  trun r = tp_run(p);
  assert_int_equal(r.t->nrows, 1);
  assert_string_equal(col_text(r.t, 0), "0");
  assert_string_equal(col_text(r.t, 1), "0");
  assert_string_equal(col_text(r.t, 2), "NULL");
  assert_string_equal(col_text(r.t, 3), "NULL");
  assert_string_equal(col_text(r.t, 4), "NULL");
  rt_table_unref(r.t);

  /* with GROUP BY over no rows: no rows */
  p = tp_new();
  tp_scan(p, t);
  tp_limit(p, I(p, 0), NULL);
  ag = tp_agg(p, 1, (int[]){0});
  cs = tp_agg_add(p, ag, RT_AGG_COUNT_STAR, -1, true);
  tp_output(p, 2, (int[]){ag->agg.group_out[0], cs});
  r = tp_run(p);
  assert_int_equal(r.t->nrows, 0);
  rt_table_unref(r.t);
  rt_table_unref(t);

  /* SUM overflow names the stage */
  const char *cells[] = {"9223372036854775807", "1"};
  t = mk_table("v:i64", 2, cells);
  p = tp_new();
  tp_scan(p, t);
  ag = tp_agg(p, 0, NULL);
  sv = tp_agg_add(p, ag, RT_AGG_SUM, 0, true);
  tp_output(p, 1, (int[]){sv});
  r = tp_run(p);
  assert_null(r.t);
  assert_string_equal(r.err, "AGGREGATE: integer overflow");
  rt_table_unref(t);
}

static void test_aggregate_then_sort(void **state) {
  /* 20000 rows into 7 groups, sorted by count descending: the second and
   * third segments read breaker buffers */
  rt_table *t = mk_seq(20000);
  ir_plan *p = tp_new();
  tp_scan(p, t);
  int k = tp_compute(p, "k", X(p, IX_MOD, RT_I64, 2, C(p, 0), I(p, 7)));
  ir_op *ag = tp_agg(p, 1, (int[]){k});
  int cs = tp_agg_add(p, ag, RT_AGG_COUNT_STAR, -1, true);
  int sm = tp_agg_add(p, ag, RT_AGG_SUM, 0, true);
  int key = ag->agg.group_out[0];
  tp_sort(p, 3, (int[]){key, cs, sm}, 2, (int[]){cs, 1, 0, key, 1, 0});
  tp_output(p, 3, (int[]){key, cs, sm});
  trun r = tp_run(p);
  assert_string_equal(r.err, "");
  /* 20000 = 7 * 2857 + 1: key 0 has 2858 rows */
  assert_string_equal(col_text(r.t, 0), "0,6,5,4,3,2,1");
  assert_string_equal(col_text(r.t, 1), "2858,2857,2857,2857,2857,2857,2857");
  int64_t s0 = 0;
  for (int64_t i = 0; i < 20000; i += 7) s0 += i;
  char want[32];
  snprintf(want, sizeof want, "%lld,", (long long)s0);
  assert_true(strncmp(col_text(r.t, 2), want, strlen(want)) == 0);
  rt_table_unref(r.t);
  rt_table_unref(t);
}

static void test_id_and_narrow_columns(void **state) {
  /* an "id" column 0..n-1 becomes RT_ID, small ints become 32-bit */
  const char *names[] = {"id", "u", "i"};
  rt_type types[] = {RT_I64, RT_U32, RT_I32};
  rt_table_builder *b = rt_tb_new("n", 3, names, types);
  for (int64_t i = 0; i < 10000; i++) {
    rt_tb_append_i64(b, 0, i);
    rt_tb_append_i64(b, 1, i * 3);
    if (i % 5 == 0) rt_tb_append_null(b, 2);
    else rt_tb_append_i64(b, 2, -i);
  }
  rt_table *t = rt_tb_finish(b);
  assert_int_equal(t->cols[0].type, RT_ID);
  ir_plan *p = tp_new();
  tp_scan(p, t);
  tp_filter(p, X(p, IX_GE, RT_BOOL, 2, C(p, 0), I(p, 8190)));
  int s = tp_compute(p, "s", X(p, IX_ADD, RT_I64, 2, X(p, IX_ADD, RT_I64, 2, C(p, 0), C(p, 1)), C(p, 2)));
  tp_limit(p, I(p, 6), NULL);
  tp_output(p, 2, (int[]){0, s});
  trun r = tp_run(p);
  assert_string_equal(col_text(r.t, 0), "8190,8191,8192,8193,8194,8195");
  assert_string_equal(col_text(r.t, 1), "NULL,24573,24576,24579,24582,NULL");
  rt_table_unref(r.t);
  rt_table_unref(t);
}

static void test_interrupt(void **state) {
  rt_table *t = mk_seq(100);
  ir_plan *p = tp_new();
  tp_scan(p, t);
  tp_output(p, 1, (int[]){0});
  volatile int flag = 1;
  trun r = tp_run_params(p, 0, NULL, &flag);
  assert_null(r.t);
  assert_string_equal(r.err, "interrupted");
  rt_table_unref(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_filter_compute_output),
      cmocka_unit_test(test_three_valued_logic),
      cmocka_unit_test(test_in_lists),
      cmocka_unit_test(test_overflow_errors),
      cmocka_unit_test(test_division),
      cmocka_unit_test(test_lazy_case_and_coalesce),
      cmocka_unit_test(test_strings),
      cmocka_unit_test(test_casts),
      cmocka_unit_test(test_params),
      cmocka_unit_test(test_limit_offset_batches),
      cmocka_unit_test(test_sort),
      cmocka_unit_test(test_scan_buf_through_perm),
      cmocka_unit_test(test_aggregate_by_int),
      cmocka_unit_test(test_aggregate_keys),
      cmocka_unit_test(test_aggregate_empty_and_overflow),
      cmocka_unit_test(test_aggregate_then_sort),
      cmocka_unit_test(test_id_and_narrow_columns),
      cmocka_unit_test(test_interrupt),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
