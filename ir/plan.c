/*
 * plan.c — the plan object: name tables expanded from the .def files,
 * columns, and ir_build, which chains the passes
 *
 *   ir_bind (bind*.c) → ir_live (live.c) → ir_segment_plan (segment.c)
 *   → ir_verify (verify.c, a safety net: a broken plan is an internal error
 *     reported as such rather than a crash in a backend).
 */
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "runtime/sqlite/sqlsrc.h"

const char *const ir_op_names[IR__COUNT] = {
#define OP(name, str, role, flags, arity) str,
#include "ops.def"
#undef OP
};

/* ops.def's IVSOURCE is a SOURCE with OPF_IV: the role says it once. */
#define IR_ROLE_IVSOURCE IR_ROLE_SOURCE
#define ROLE_FLAGS_SOURCE 0
#define ROLE_FLAGS_IVSOURCE OPF_IV
#define ROLE_FLAGS_STEP 0
#define ROLE_FLAGS_SINK 0
#define ROLE_FLAGS_BREAKER 0

const ir_oprole ir_op_roles[IR__COUNT] = {
#define OP(name, str, role, flags, arity) IR_ROLE_##role,
#include "ops.def"
#undef OP
};

const unsigned ir_op_flags[IR__COUNT] = {
#define OP(name, str, role, flags, arity) (flags) | ROLE_FLAGS_##role,
#include "ops.def"
#undef OP
};

const signed char ir_op_arities[IR__COUNT] = {
#define OP(name, str, role, flags, arity) arity,
#include "ops.def"
#undef OP
};

const char *const ir_ex_names[IX__COUNT] = {
#define EX(name, str, arity, form, prec, nulls) str,
#include "exprs.def"
#undef EX
};

const ir_exform ir_ex_forms[IX__COUNT] = {
#define EX(name, str, arity, form, prec, nulls) IR_FORM_##form,
#include "exprs.def"
#undef EX
};

const ir_exnulls ir_ex_nullss[IX__COUNT] = {
#define EX(name, str, arity, form, prec, nulls) IR_NULLS_##nulls,
#include "exprs.def"
#undef EX
};

const signed char ir_ex_arities[IX__COUNT] = {
#define EX(name, str, arity, form, prec, nulls) arity,
#include "exprs.def"
#undef EX
};

/* Indexed by rt_aggkind (store.h): an entry without its RT_AGG_ kind does
 * not compile. */
const ir_agginfo ir_aggs[] = {
#define AGG(name, sql, printed, out, in_agg, in_tree, in_flat, in_list, lo, hi) \
  [RT_AGG_##name] = {sql, printed, IR_AGGOUT_##out, {IR_AGGARG_##in_agg, IR_AGGARG_##in_tree, IR_AGGARG_##in_flat, IR_AGGARG_##in_list}, lo, hi},
#include "aggs.def"
#undef AGG
};

/* Indexed by rt_winfn (runtime/window.h), which lists them in
 * windows.def's order. */
const ir_wininfo ir_wins[] = {
#define WIN(name, sql, printed, out, arg, lo, hi) \
  [RT_WIN_##name] = {sql, printed, IR_WINOUT_##out, IR_WINARG_##arg, lo, hi},
#include "windows.def"
#undef WIN
};
_Static_assert((int)IR_NWINS == (int)RT_WIN__COUNT, "windows.def and rt_winfn list the same functions");

rt_type ir_agg_out_type(rt_aggkind k, rt_type arg, bool numeric) {
  switch (ir_aggs[k].out) {
  case IR_AGGOUT_I64: return RT_I64;
  case IR_AGGOUT_F64: return RT_F64;
  case IR_AGGOUT_SUM: return arg == RT_F64 ? RT_F64 : RT_I64;
  case IR_AGGOUT_ARG:
  case IR_AGGOUT_VAL:   /* the caller passes the second argument's type */
    if (arg == RT_F64 || (!numeric && (arg == RT_STR || arg == RT_BOOL))) return arg;
    return RT_I64;
  case IR_AGGOUT_STR: return RT_STR;
  }
  return RT_I64;
}

static void need_expr(const ir_expr *e, bool *need) {
  if (!e) return;
  if (e->kind == IX_COL && e->col >= 0) need[e->col] = true;
  for (int i = 0; i < e->nargs; i++) need_expr(e->args[i], need);
}

static void need_cols(int n, const int *cols, bool *need) {
  for (int i = 0; cols && i < n; i++)
    if (cols[i] >= 0) need[cols[i]] = true;
}

static void need_aggs(int n, const ir_agg *aggs, bool *need) {
  for (int i = 0; aggs && i < n; i++) {
    if (aggs[i].arg_col >= 0) need[aggs[i].arg_col] = true;
    if (aggs[i].arg2_col >= 0) need[aggs[i].arg2_col] = true;
  }
}

void ir_op_need(const ir_op *op, bool *need) {
  switch (op->kind) {
  case IR_SCAN_TABLE:
  case IR_SCAN_SQL:
  case IR_SCAN_BUF: return;
  case IR_SCAN_FORK: need_cols(op->scan.nscan, op->scan.table_cols, need); return;
  case IR_FORK: need_cols(op->fork.ncarry, op->fork.carry, need); return;
  case IR_SETOP:
    for (int j = 0; j < op->setop.nrel; j++) need_cols(op->setop.ncols, op->setop.cols[j], need);
    return;
  case IR_TREE_SHAPE: {
    const struct ir_tshape *ts = &op->tshape;
    int t[5] = {ts->id_col, ts->parent_col, ts->set_col, ts->over_id, ts->over_parent};
    need_cols(5, t, need);
    need_cols(ts->nby, ts->by, need);
    need_aggs(ts->naggs, ts->aggs, need);
    return;
  }
  case IR_FILTER: need_expr(op->filter.pred, need); return;
  case IR_COMPUTE: need_expr(op->compute.expr, need); return;
  case IR_LIMIT:
    need_expr(op->limit.count, need);
    need_expr(op->limit.offset, need);
    return;
  case IR_TREE_NUMBER: {
    int t[2] = {op->tree.id_col, op->tree.parent_col};
    need_cols(2, t, need);
    return;
  }
  case IR_TREE_ACC: {
    int t[2] = {op->tree.node_col, op->tree.pnode_col};
    need_cols(2, t, need);
    need_aggs(op->tree.naggs, op->tree.aggs, need);
    return;
  }
  case IR_TREE_ORDER: need_cols(op->tree.ncarry, op->tree.carry, need); return;
  case IR_IV_BUFFER: need_cols(op->ivbuf.ncarry, op->ivbuf.carry, need); return;
  case IR_JOIN_BUILD: need_cols(op->join.ncarry, op->join.carry, need); return;
  case IR_JOIN_PROBE:
    need_cols(op->join.nkeys, op->join.in_keys, need);
    need_cols(op->join.nkeys, op->join.src_keys, need);
    need_expr(op->join.residual, need);
    return;
  case IR_SORT:
    need_cols(op->sort.ncarry, op->sort.carry, need);
    for (int k = 0; k < op->sort.nkeys; k++) need[op->sort.keys[k].col] = true;
    return;
  case IR_AGGREGATE:
    need_cols(op->agg.ngroup, op->agg.group_cols, need);
    need_aggs(op->agg.naggs, op->agg.aggs, need);
    return;
  case IR_WINDOW:
    need_cols(op->win.ncarry, op->win.carry, need);
    for (int i = 0; i < op->win.ncalls; i++) {
      const ir_wincall *c = &op->win.calls[i];
      if (!c->live) continue;
      int t[3] = {c->arg_col, c->n_col, c->dflt_col};
      need_cols(3, t, need);
      const ir_winspec *sp = &op->win.specs[c->spec];
      need_cols(sp->npart, sp->part, need);
      for (int k = 0; k < sp->norder; k++) need[sp->order[k].col] = true;
    }
    return;
  case IR_OUTPUT: need_cols(op->output.nout, op->output.out, need); return;
#define IR_CASE_IVSOURCE(name) case IR_##name:
#include "ir/op_cases.h"
    if (op->iv.close_col >= 0) need_cols(1, &op->iv.close_col, need);
    if (op->iv.within_col >= 0) need_cols(1, &op->iv.within_col, need);
    need_cols(op->iv.nby, op->iv.by, need);   /* §9.2: MERGE's BY, QUANTIZE's origin */
    need_cols(1, &op->iv.origin, need);
    for (int j = 0; j < op->iv.nrel; j++) {
      int t[2] = {op->iv.ts[j], op->iv.dur[j]};
      need_cols(2, t, need);
      if (op->iv.id) need_cols(1, &op->iv.id[j], need);
      if (op->iv.per[j]) need_cols(op->iv.nper, op->iv.per[j], need);
    }
    need_aggs(op->iv.naggs, op->iv.aggs, need);
    if (op->iv.from_in) need_cols(op->iv.nscan, op->iv.from_in, need);
    if (op->iv.from_bg) need_cols(op->iv.nscan, op->iv.from_bg, need);
    return;
  case IR_GRAPH: {   /* §9.5 */
    int t[4] = {op->graph.id_col, op->graph.src_col, op->graph.dst_col, op->graph.seed_col};
    need_cols(4, t, need);
    return;
  }
  case IR__COUNT: return;
  }
}

const int *ir_source_cols(const ir_op *op, int *n) {
  switch (op->kind) {
  case IR_SCAN_TABLE:
  case IR_SCAN_SQL:
  case IR_SCAN_BUF:
  case IR_SCAN_FORK: *n = op->scan.nscan; return op->scan.out_cols;
#define IR_CASE_IVSOURCE(name) case IR_##name:
#include "ir/op_cases.h"
    *n = op->iv.nscan;
    return op->iv.out_cols;
  case IR_SETOP: *n = op->setop.ncols; return op->setop.out;
  case IR_GRAPH: *n = op->graph.nscan; return op->graph.out_cols;   /* §9.5 */
  case IR_TREE_SHAPE: *n = op->tshape.nscan; return op->tshape.out_cols;
#define IR_CASE_STEP(name) case IR_##name:
#define IR_CASE_SINK(name) case IR_##name:
#define IR_CASE_BREAKER(name) case IR_##name:
#include "ir/op_cases.h"
  case IR__COUNT:
    break;   /* not a source */
  }
  *n = 0;
  return NULL;
}

static int64_t expr_size(const ir_expr *e) {
  if (!e) return 0;
  int64_t n = 1;
  for (int i = 0; i < e->nargs; i++) n += expr_size(e->args[i]);
  return n;
}

int64_t ir_op_size(const ir_op *op) {
  switch (op->kind) {
  case IR_FILTER: return expr_size(op->filter.pred);
  case IR_COMPUTE: return expr_size(op->compute.expr);
  case IR_LIMIT: return expr_size(op->limit.count) + expr_size(op->limit.offset);
  case IR_SORT: return op->sort.ncarry;
  case IR_TREE_ORDER: return op->tree.ncarry;
  case IR_IV_BUFFER: return op->ivbuf.ncarry;
  case IR_AGGREGATE: return op->agg.naggs + op->agg.ngroup;
  case IR_WINDOW: return op->win.ncarry + op->win.ncalls;
  case IR_TREE_ACC: return op->tree.naggs;
  case IR_FLATTEN: return op->iv.naggs;
  case IR_OUTPUT: return op->output.nout;
  case IR_JOIN_BUILD: return op->join.ncarry;
  case IR_JOIN_PROBE: return 4 * op->join.nkeys + expr_size(op->join.residual) + 8;
  case IR_SETOP: return op->setop.ncols;
  case IR_TREE_SHAPE: return op->tshape.naggs + op->tshape.nby;
  case IR_FORK: return op->fork.ncarry;
  case IR_SCAN_FORK: return op->scan.nscan;
  case IR_GRAPH: return 4;   /* §9.5: its keys */
  case IR_SCAN_TABLE: case IR_SCAN_SQL: case IR_SCAN_BUF: case IR_TREE_NUMBER: case IR_ISECT:
  case IR_IJOIN: case IR_FILLGAPS: case IR_IV_EVENTS: case IR_IV_UNION: case IR_IV_FIND:
  case IR_IV_KEEP: case IR__COUNT:
  case IR_IVMERGE: case IR_SUBTRACT: case IR_SPLIT: case IR_QUANTIZE: case IR_SETBOUNDS:
    return 0;
  }
  return 0;
}

int ir_buf_layout_max(const ir_op *op) {
  return ir_buf_layout(op, NULL);
}

const int *ir_buf_cols(const ir_op *op, int *n) {
  switch (op->kind) {
  /* SORT carries its keys (verify.c checks it), TREE_ORDER the node
   * columns. */
  case IR_SORT: *n = op->sort.ncarry; return op->sort.carry;
  case IR_TREE_ORDER: *n = op->tree.ncarry; return op->tree.carry;
  case IR_IV_BUFFER: *n = op->ivbuf.ncarry; return op->ivbuf.carry;
  case IR_WINDOW: *n = op->win.ncarry; return op->win.carry;   /* results: ir_buf_layout */
  case IR_OUTPUT: *n = op->output.nout; return op->output.out;
  case IR_JOIN_BUILD: *n = op->join.ncarry; return op->join.carry;   /* keys among them */
  case IR_FORK: *n = op->fork.ncarry; return op->fork.carry;
  case IR_AGGREGATE:   /* not one array: see ir_buf_layout */
#define IR_CASE_SOURCE(name) case IR_##name:
#define IR_CASE_STEP(name) case IR_##name:
#include "ir/op_cases.h"
  case IR__COUNT:
    break;
  }
  *n = 0;
  return NULL;
}

int ir_buf_layout(const ir_op *op, int *cols) {
  int n = 0;
  if (op->kind == IR_AGGREGATE) {
    const struct ir_aggregate *a = &op->agg;
    for (int k = 0; k < a->ngroup; k++)
      if (cols) cols[n++] = a->group_out[k];
      else n++;
    for (int k = 0; k < a->naggs; k++)
      if (!cols) n++;
      else if (a->aggs[k].live) cols[n++] = a->aggs[k].out_col;
    return n;
  }
  const int *from = ir_buf_cols(op, &n);
  if (cols && n > 0) memcpy(cols, from, sizeof(int) * (size_t)n);
  if (op->kind == IR_WINDOW) {
    for (int k = 0; k < op->win.ncalls; k++) {
      if (!cols) n++;
      else if (op->win.calls[k].live) cols[n++] = op->win.calls[k].out_col;
    }
  }
  return n;
}

void ir_plan_oom(ir_plan *p) {
  longjmp(*p->oom_jmp, 1);
}

void *ir_palloc(ir_plan *p, size_t n) {
  void *v = rt_arena_alloc(&p->arena, n);
  if (!v && p->oom_jmp) ir_plan_oom(p);
  return v;
}

int ir_col_new(ir_plan *p, const char *name, rt_type type, bool nullable) {
  if (p->ncols == p->capcols) {
    /* Columns live in the arena: grow by copying (plans have few columns). */
    int cap = p->capcols ? p->capcols * 2 : 16;
    ir_col *cols = ir_palloc(p, sizeof(ir_col) * (size_t)cap);
    if (p->ncols) memcpy(cols, p->cols, sizeof(ir_col) * (size_t)p->ncols);
    p->cols = cols;
    p->capcols = cap;
  }
  ir_col *c = &p->cols[p->ncols];
  name = name ? name : "";
  char *copy = ir_palloc(p, strlen(name) + 1);
  memcpy(copy, name, strlen(name));
  c->name = copy;
  c->type = type;
  c->nullable = nullable;
  c->live = false;
  return p->ncols++;
}

void ir_sql_quote(rt_buf *out, const char *s) {
  rt_buf_append(out, "\"", 1);
  for (; *s; s++) {
    if (*s == '"') rt_buf_append(out, "\"\"", 2);
    else rt_buf_append(out, s, 1);
  }
  rt_buf_append(out, "\"", 1);
}

/* The passes after binding, with the landing of ir_palloc's jump. */
static ir_plan *passes(ir_plan *plan, rt_err *err) {
  ir_plan *volatile p = plan;
  jmp_buf oom;
  if (setjmp(oom)) {
    memset(err, 0, sizeof *err);
    rt_errorf(err, -1, "out of memory");
    ir_plan_free(p);
    return NULL;
  }
  p->oom_jmp = &oom;
  ir_live(p);
  ir_segment_plan(p);
  ir_mark_names(p);
  p->oom_jmp = NULL;
  return p;
}

ir_plan *ir_build(const struct fe_pipeline *ast, const char *text, ir_env *env, rt_err *err) {
  ir_plan *p = ir_bind(ast, text, env, err);
  if (!p || !(p = passes(p, err))) return NULL;
  if (!ir_verify(p, err)) {
    ir_plan_free(p);
    return NULL;
  }
  return p;
}

void ir_plan_release_primed(ir_plan *p) {
  for (int i = 0; i < p->nops; i++) {
    if (p->ops[i]->kind != IR_SCAN_SQL) continue;
    rt_sqlsrc_close(p->ops[i]->scan.primed);
    p->ops[i]->scan.primed = NULL;
  }
  for (int i = 0; i < p->nsubqs; i++)
    if (p->subqs[i].plan) ir_plan_release_primed(p->subqs[i].plan);
}

void ir_plan_free(ir_plan *p) {
  if (!p) return;
  /* Table scans hold a reference (taken by the binder) so a plan stays
   * valid when the catalog replaces the table. */
  for (int i = 0; i < p->nops; i++)
    if (p->ops[i]->kind == IR_SCAN_TABLE && p->ops[i]->scan.table) rt_table_unref(p->ops[i]->scan.table);
  ir_plan_release_primed(p);
  for (int i = 0; i < p->nsubqs; i++) ir_plan_free(p->subqs[i].plan);
  for (int i = 0; i < p->ncallouts; i++) {
    if (p->callouts[i].table) rt_table_unref(p->callouts[i].table);
    if (p->callouts[i].release) p->callouts[i].release(p->callouts[i].ctx);
  }
  for (int i = 0; i < p->nsqlins; i++) p->sqlins[i].by->drop(p->sqlins[i].by->ctx, p->sqlins[i].handle);
  rt_arena_free(&p->arena);
  free(p);
}
