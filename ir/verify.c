/*
 * verify.c — structural checks on a segmented plan, run by ir_build after
 * every pass. A failure is a compiler bug, reported as
 * "<STAGE>: internal error: …" instead of a crash in a backend.
 *
 * Checks: segment shapes (source, streaming steps, sink; SCAN_BUF reads
 * the previous segment's breaker; OUTPUT ends the last segment only);
 * every column read is available at that point of its segment; operand
 * types are uniform per node kind as exprs.def promises; no RT_NULLT
 * anywhere; a COMPUTE column has its expression's type. TREE ops: the
 * numbering reads id/parent_id (ints or strings, alike) and defines two
 * new node columns; the ordering carries both node columns; the
 * accumulation reads them and defines each live aggregate's column once.
 * INTERVAL ops: a source ISECT/FLATTEN/IJOIN/FILLGAPS follows the
 * IV_BUFFER segments of its relations, which carry what it reads.
 */
#include <stdlib.h>

#include "plan.h"

typedef enum vcls { V_INT, V_F64, V_STR, V_BAD } vcls;

static vcls vclass(rt_type t) {
  return t == RT_F64 ? V_F64 : t == RT_STR ? V_STR : t == RT_NULLT ? V_BAD : V_INT;
}

typedef struct vctx {
  const ir_plan *p;
  rt_err *err;
  const bool *avail;
  bool *carried;        /* scratch of ncols + 1 (WINDOW's carried columns) */
  const ir_op *op;
} vctx;

static int bad(vctx *v, const ir_expr *e, const char *what) {
  const char *node = e ? ((unsigned)e->kind < IX__COUNT ? ir_ex_names[e->kind] : "?")
                       : ((unsigned)v->op->kind < IR__COUNT ? ir_op_names[v->op->kind] : "?");
  return rt_errorf(v->err, e ? e->pos : v->op->pos, "%s: internal error: %s (%s)", v->op->stage,
                   what, node);
}

static bool numeric_pair(vcls a, vcls b) {
  return (a == V_INT && b == V_F64) || (a == V_F64 && b == V_INT);
}

static int check_expr(vctx *v, const ir_expr *e) {
  if (!e) return bad(v, NULL, "missing expression");
  if (e->type == RT_NULLT) return bad(v, e, "untyped NULL");
  for (int i = 0; i < e->nargs; i++)
    if (!check_expr(v, e->args[i])) return 0;
  int arity = ir_ex_arities[e->kind];
  if (arity >= 0 && e->nargs != arity) return bad(v, e, "wrong number of arguments");
  /* exprs.def NULLS: a STRICT or three-valued node is NULL when an argument
   * is (or can be); a backend skips NULL tests where nullable is false. */
  if (!e->nullable && (ir_ex_nullss[e->kind] == IR_NULLS_STRICT || ir_ex_nullss[e->kind] == IR_NULLS_LOGIC))
    for (int i = 0; i < e->nargs; i++)
      if (e->args[i]->nullable) return bad(v, e, "not nullable, but an argument is");
  vcls r = vclass(e->type);
  vcls a0 = e->nargs > 0 ? vclass(e->args[0]->type) : V_BAD;
  vcls a1 = e->nargs > 1 ? vclass(e->args[1]->type) : V_BAD;
  switch (e->kind) {
  case IX_CONST: return 1;
  case IX_COL:
    if (e->col < 0 || e->col >= v->p->ncols || !v->avail[e->col])
      return bad(v, e, "column used before it is defined");
    if (e->type != v->p->cols[e->col].type) return bad(v, e, "column type differs from its use");
    return 1;
  case IX_PARAM:
    return e->param >= 1 && e->param <= v->p->nparams ? 1 : bad(v, e, "parameter out of range");
  case IX_TOF64: return a0 == V_INT && r == V_F64 ? 1 : bad(v, e, "tof64 needs an int");
  case IX_NEG:
  case IX_ABS: return a0 == r && r != V_STR ? 1 : bad(v, e, "numeric operand expected");
  case IX_BITNOT: return a0 == V_INT && r == V_INT ? 1 : bad(v, e, "int operand expected");
  case IX_NOT: return e->args[0]->type == RT_BOOL ? 1 : bad(v, e, "boolean operand expected");
  case IX_ADD: case IX_SUB: case IX_MUL: case IX_DIV:
    return a0 == a1 && a0 == r && r != V_STR ? 1 : bad(v, e, "arithmetic operands differ");
  case IX_MOD:
    /* a real % is lowered to integers by the binder (bind_arith): no
     * backend has a double remainder */
    return a0 == V_INT && a1 == V_INT && r == V_INT ? 1 : bad(v, e, "MOD needs int operands");
  case IX_BITAND: case IX_BITOR: case IX_SHL: case IX_SHR:
    return a0 == V_INT && a1 == V_INT && r == V_INT ? 1 : bad(v, e, "int operands expected");
  case IX_CONCAT: return a0 == V_STR && a1 == V_STR && r == V_STR ? 1 : bad(v, e, "strings expected");
  case IX_EQ: case IX_NE: case IX_LT: case IX_LE: case IX_GT: case IX_GE: case IX_IS:
  case IX_ISNOT:
    /* an integer against a double is compared exactly by the backends */
    return (a0 == a1 || numeric_pair(a0, a1)) && e->type == RT_BOOL
               ? 1 : bad(v, e, "comparison operands differ");
  case IX_AND: case IX_OR:
    return e->args[0]->type == RT_BOOL && e->args[1]->type == RT_BOOL && e->type == RT_BOOL
               ? 1 : bad(v, e, "boolean operands expected");
  case IX_ISNULL: case IX_NOTNULL: return e->type == RT_BOOL ? 1 : bad(v, e, "boolean result expected");
  case IX_IN:
    for (int i = 1; i < e->nargs; i++)
      if (vclass(e->args[i]->type) != a0 && !numeric_pair(vclass(e->args[i]->type), a0))
        return bad(v, e, "IN operands differ");
    return e->type == RT_BOOL && e->nargs >= 2 ? 1 : bad(v, e, "IN shape");
  case IX_LIKE: case IX_GLOB:
    return a0 == V_STR && a1 == V_STR && e->type == RT_BOOL ? 1 : bad(v, e, "strings expected");
  case IX_CASE:
    if (e->nargs < 3 || e->nargs % 2 == 0) return bad(v, e, "CASE shape");
    for (int i = 0; i + 1 < e->nargs; i += 2) {
      if (e->args[i]->type != RT_BOOL) return bad(v, e, "CASE condition is not boolean");
      if (vclass(e->args[i + 1]->type) != r) return bad(v, e, "CASE branches differ");
    }
    return vclass(e->args[e->nargs - 1]->type) == r ? 1 : bad(v, e, "CASE else differs");
  case IX_COALESCE: case IX_MIN: case IX_MAX: case IX_NULLIF:
    for (int i = 0; i < e->nargs; i++)
      if (vclass(e->args[i]->type) != r) return bad(v, e, "arguments differ");
    return e->nargs >= 2 ? 1 : bad(v, e, "too few arguments");
  case IX_TOINT: return (a0 == V_F64 || a0 == V_STR) && r == V_INT ? 1 : bad(v, e, "cast_int operand");
  case IX_TOSTR: return (a0 == V_INT || a0 == V_F64) && r == V_STR ? 1 : bad(v, e, "cast_text operand");
  case IX_STRTOF64: return a0 == V_STR && r == V_F64 ? 1 : bad(v, e, "cast_real operand");
  case IX_LENGTH: return a0 == V_STR && r == V_INT ? 1 : bad(v, e, "length operand");
  case IX_LOWER: case IX_UPPER: return a0 == V_STR && r == V_STR ? 1 : bad(v, e, "string expected");
  case IX_INSTR: return a0 == V_STR && a1 == V_STR && r == V_INT ? 1 : bad(v, e, "instr operands");
  case IX_SUBSTR:
    if (e->nargs < 2 || e->nargs > 3 || a0 != V_STR || r != V_STR) return bad(v, e, "substr shape");
    for (int i = 1; i < e->nargs; i++)
      if (vclass(e->args[i]->type) != V_INT) return bad(v, e, "substr positions");
    return 1;
  case IX_TRIM: case IX_LTRIM: case IX_RTRIM:
    if (e->nargs < 1 || e->nargs > 2 || r != V_STR) return bad(v, e, "trim shape");
    for (int i = 0; i < e->nargs; i++)
      if (vclass(e->args[i]->type) != V_STR) return bad(v, e, "trim operands");
    return 1;
  case IX_ROUND:
    if (e->nargs < 1 || e->nargs > 2 || a0 != V_F64 || r != V_F64) return bad(v, e, "round shape");
    return e->nargs == 1 || a1 == V_INT ? 1 : bad(v, e, "round digits");
  case IX_SIGN: return a0 == V_F64 && r == V_INT ? 1 : bad(v, e, "sign operand");
  case IX_REPLACE:
    return a0 == V_STR && a1 == V_STR && vclass(e->args[2]->type) == V_STR && r == V_STR
               ? 1 : bad(v, e, "replace operands");
  case IX_HEX: return a0 == V_STR && r == V_STR ? 1 : bad(v, e, "hex operand");
  case IX_UNICODE: return a0 == V_STR && r == V_INT ? 1 : bad(v, e, "unicode operand");
  case IX_CHAR: return a0 == V_INT && r == V_STR ? 1 : bad(v, e, "char operand");
  case IX_PRINTF:
    return e->nargs >= 1 && a0 == V_STR && r == V_STR ? 1 : bad(v, e, "printf shape");
  case IX_CALLOUT: {
    if (e->ival < 0 || e->ival >= v->p->ncallouts) return bad(v, e, "callout out of range");
    const ir_callout *c = &v->p->callouts[e->ival];
    if (c->nargs != e->nargs || c->nargs > 64) return bad(v, e, "callout arity");
    for (int i = 0; i < e->nargs; i++)
      if (vclass(e->args[i]->type) != vclass(c->argtypes[i])) return bad(v, e, "callout argument type");
    return e->type == c->ret ? 1 : bad(v, e, "callout result type");
  }
  case IX__COUNT: break;
  }
  return bad(v, e, "unknown expression kind");
}

static int use(vctx *v, int c) {
  if (c < 0 || c >= v->p->ncols || !v->avail[c]) return bad(v, NULL, "column used before it is defined");
  return 1;
}

static bool carried(const ir_op *buf, int c) {
  int n;
  const int *cols = ir_buf_cols(buf, &n);
  for (int i = 0; i < n; i++)
    if (cols[i] == c) return true;
  return false;
}

/* An interval source: every relation's buffer is an IV_BUFFER of this op
 * that carries the bounds and PER keys (and FLATTEN's aggregate inputs,
 * FILL GAPS' column sources); bounds are integers. */
static int check_interval(vctx *v, const ir_op *op) {
  const ir_plan *p = v->p;
  if (op->iv.nrel < 1 || !op->iv.bufs) return bad(v, NULL, "interval source without relations");
  int arity = ir_op_arities[op->kind];
  if (arity > 0 ? op->iv.nrel != arity : arity == -2 ? op->iv.nrel > 2 : op->iv.nrel < 2)
    return bad(v, NULL, "interval source reads the wrong number of relations");
  for (int j = 0; j < op->iv.nrel; j++) {
    const ir_op *buf = op->iv.bufs[j];
    if (!buf || buf->kind != IR_IV_BUFFER || buf->ivbuf.user != op || buf->dead)
      return bad(v, NULL, "interval relation is not buffered for it");
    if (!carried(buf, op->iv.ts[j]) || !carried(buf, op->iv.dur[j]))
      return bad(v, NULL, "interval bounds are not buffered");
    if (!rt_type_is_int(p->cols[op->iv.ts[j]].type) || !rt_type_is_int(p->cols[op->iv.dur[j]].type))
      return bad(v, NULL, "interval bounds are not integers");
    for (int k = 0; op->iv.per[j] && k < op->iv.nper; k++)
      if (!carried(buf, op->iv.per[j][k])) return bad(v, NULL, "PER column is not buffered");
  }
  if (op->kind == IR_FLATTEN)
    for (int k = 0; k < op->iv.naggs; k++)
      if (op->iv.aggs[k].live &&
          ((op->iv.aggs[k].arg_col >= 0 && !carried(op->iv.bufs[0], op->iv.aggs[k].arg_col)) ||
           (op->iv.aggs[k].arg2_col >= 0 && !carried(op->iv.bufs[0], op->iv.aggs[k].arg2_col))))
        return bad(v, NULL, "aggregate input is not buffered");
  if (op->kind == IR_IV_FIND && op->iv.within_col >= 0 && !carried(op->iv.bufs[0], op->iv.within_col))
    return bad(v, NULL, "the WITHIN distance is not buffered");
  if (op->kind == IR_IV_EVENTS && op->iv.close_col >= 0 && !carried(op->iv.bufs[0], op->iv.close_col))
    return bad(v, NULL, "the closing end is not buffered");
  if (op->kind == IR_FILLGAPS)
    for (int k = 0; k < op->iv.nscan; k++)
      if ((op->iv.from_in[k] >= 0 && !carried(op->iv.bufs[0], op->iv.from_in[k])) ||
          (op->iv.from_bg[k] >= 0 && !carried(op->iv.bufs[1], op->iv.from_bg[k])))
        return bad(v, NULL, "filled column is not buffered");
  return 1;
}

/* Some segment before seg ends in sink. */
static bool done_before(const vctx *v, const ir_segment *seg, const ir_op *sink) {
  for (const ir_segment *s = v->p->segs; s < seg; s++)
    if (s->sink == sink) return true;
  return false;
}

/* The plan has a JOIN, whose relation's segments (any of them may start
 * with a fresh scan) run between the input's (segment.c). */
static bool joins_after(const vctx *v, const ir_segment *seg) {
  (void)seg;
  for (int s = 0; s < v->p->nsegs; s++)
    if (v->p->segs[s].sink && v->p->segs[s].sink->kind == IR_JOIN_BUILD) return true;
  return false;
}

/* A source over buffered relations (an interval or GRAPH source) runs
 * right after its last buffer, or, when the source is followed by
 * `|> JOIN`, after the segments of the JOIN's relations, which segment.c
 * runs before the source's own segment (the source's segment is open when
 * the relation's source is met). Then prev, the sink before seg, is the
 * build of a JOIN probed in seg itself, and each of the n buffers was
 * filled by an earlier segment. */
static bool joins_between(const vctx *v, const ir_segment *seg, const ir_op *prev,
                          ir_op *const *bufs, int n) {
  if (!prev || prev->kind != IR_JOIN_BUILD || !bufs || n <= 0) return false;
  bool probed = false;
  for (int k = 0; k < seg->nsteps && !probed; k++) probed = seg->steps[k] == prev->join.probe;
  for (int j = 0; probed && j < n; j++) probed = bufs[j] && done_before(v, seg, bufs[j]);
  return probed;
}

static int check_segment(vctx *v, const ir_segment *seg, const ir_op *prev_sink, bool last,
                         bool *avail) {
  const ir_plan *p = v->p;
  memset(avail, 0, (size_t)p->ncols + 1);
  const ir_op *src = seg->source;
  v->op = src;
  if (!src || !ir_op_is_source(src->kind))
    return src ? bad(v, NULL, "segment does not start with a source") : 0;
  bool ivsrc = ir_op_is_interval(src->kind);
  if (src->kind == IR_SCAN_BUF) {
    /* the previous segment's breaker, or (when a JOIN's relation ran in
     * between: segment.c) one an earlier segment closed */
    if (!src->scan.buf_op || !(src->scan.buf_op == prev_sink || done_before(v, seg, src->scan.buf_op)))
      return bad(v, NULL, "buffer scan does not read the previous breaker");
  } else if (src->kind == IR_SCAN_FORK) {
    const ir_op *f = src->scan.buf_op;
    if (!f || f->kind != IR_FORK || f->dead || !done_before(v, seg, f))
      return bad(v, NULL, "fork scan does not read a fork buffered before it");
    for (int i = 0; i < src->scan.nscan; i++)
      if (!carried(f, src->scan.table_cols[i])) return bad(v, NULL, "fork column is not buffered");
  } else if (ivsrc) {
    bool after_bufs = prev_sink && prev_sink->kind == IR_IV_BUFFER && prev_sink->ivbuf.user == src;
    if (!after_bufs && !joins_between(v, seg, prev_sink, src->iv.bufs, src->iv.nrel))
      return bad(v, NULL, "interval source does not follow its buffers");
    if (!check_interval(v, src)) return 0;
  } else if (src->kind == IR_GRAPH) {
    /* §9.5: after its three buffers, each carrying its keys */
    const struct ir_graph *g = &src->graph;
    if ((!prev_sink || prev_sink != g->bufs[2]) && !joins_between(v, seg, prev_sink, g->bufs, 3))
      return bad(v, NULL, "graph source does not follow its buffers");
    for (int j = 0; j < 3; j++)
      if (!g->bufs[j] || g->bufs[j]->kind != IR_IV_BUFFER || g->bufs[j]->ivbuf.user != src ||
          !done_before(v, seg, g->bufs[j]))
        return bad(v, NULL, "graph relation is not buffered before it");
    if (!carried(g->bufs[0], g->id_col) || !carried(g->bufs[1], g->src_col) ||
        !carried(g->bufs[1], g->dst_col) || !carried(g->bufs[2], g->seed_col))
      return bad(v, NULL, "graph key is not buffered");
  } else if (prev_sink && prev_sink->kind != IR_IV_BUFFER && !joins_after(v, seg)) {
    /* a fresh scan starts the plan, an interval relation or a JOIN's
     * relation */
    return bad(v, NULL, "buffer scan does not read the previous breaker");
  }
  if (src->kind == IR_SCAN_SQL && !src->scan.sql) return bad(v, NULL, "sqlite scan without sql");
  if (src->kind == IR_SCAN_TABLE && !src->scan.table) return bad(v, NULL, "table scan without table");
  int nserved;
  const int *served = ir_source_cols(src, &nserved);
  for (int i = 0; i < nserved; i++) {
    int c = served[i];
    if (c < 0 || c >= p->ncols) return bad(v, NULL, "scan column out of range");
    avail[c] = true;
  }
  for (int i = 0; i < seg->nsteps; i++) {
    const ir_op *op = seg->steps[i];
    v->op = op;
    switch (op->kind) {
    case IR_FILTER:
      if (!check_expr(v, op->filter.pred)) return 0;
      if (op->filter.pred->type != RT_BOOL) return bad(v, op->filter.pred, "filter is not boolean");
      break;
    case IR_COMPUTE:
      if (!check_expr(v, op->compute.expr)) return 0;
      if (op->compute.out_col < 0 || op->compute.out_col >= p->ncols || avail[op->compute.out_col])
        return bad(v, NULL, "compute column defined twice");
      if (vclass(p->cols[op->compute.out_col].type) != vclass(op->compute.expr->type))
        return bad(v, op->compute.expr, "compute column type differs from its expression");
      avail[op->compute.out_col] = true;
      break;
    case IR_LIMIT:
      for (int k = 0; k < 2; k++) {
        const ir_expr *e = k ? op->limit.offset : op->limit.count;
        if (!e && k) continue;
        if (!e || (e->kind != IX_CONST && e->kind != IX_PARAM) || !check_expr(v, e))
          return e ? bad(v, e, "limit count is not a constant or parameter") : bad(v, NULL, "no limit");
      }
      break;
    case IR_TREE_NUMBER: {
      if (!use(v, op->tree.id_col) || !use(v, op->tree.parent_col)) return 0;
      vcls a = vclass(p->cols[op->tree.id_col].type), b = vclass(p->cols[op->tree.parent_col].type);
      if (a != b || a == V_F64 || a == V_BAD) return bad(v, NULL, "tree ids are not ints or strings alike");
      int outs[2] = {op->tree.node_col, op->tree.pnode_col};
      for (int j = 0; j < 2; j++) {
        if (outs[j] < 0 || outs[j] >= p->ncols || avail[outs[j]] || p->cols[outs[j]].type != RT_U32)
          return bad(v, NULL, "tree node column defined twice or mistyped");
        avail[outs[j]] = true;
      }
      break;
    }
    case IR_TREE_ACC:
      if (!op->tree.num || !op->tree.order || op->tree.order->dead || op->tree.num->dead ||
          op->tree.order->tree.up != op->tree.up)
        return bad(v, NULL, "tree accumulation without its numbering and ordering");
      if (!use(v, op->tree.node_col) || !use(v, op->tree.pnode_col)) return 0;
      for (int j = 0; j < op->tree.naggs; j++) {
        const ir_agg *a = &op->tree.aggs[j];
        if (!a->live) continue;
        if ((a->kind == RT_AGG_COUNT_STAR) != (a->arg_col < 0)) return bad(v, NULL, "tree aggregate shape");
        if (a->arg_col >= 0 && !use(v, a->arg_col)) return 0;
        if (a->out_col < 0 || a->out_col >= p->ncols || avail[a->out_col])
          return bad(v, NULL, "tree aggregate column defined twice");
        avail[a->out_col] = true;
      }
      break;
    case IR_JOIN_PROBE: {
      const ir_op *bld = op->join.build;
      if (!bld || bld->kind != IR_JOIN_BUILD || bld->join.probe != op || !done_before(v, seg, bld))
        return bad(v, NULL, "join without its build before it");
      for (int k = 0; k < op->join.nkeys; k++) {
        if (!use(v, op->join.in_keys[k]) || !carried(bld, op->join.src_keys[k]))
          return bad(v, NULL, "join key not available");
        if (vclass(p->cols[op->join.in_keys[k]].type) != vclass(p->cols[op->join.src_keys[k]].type))
          return bad(v, NULL, "join keys of different kinds");
      }
      for (int j = 0; j < bld->join.ncarry; j++) {
        if (avail[bld->join.carry[j]]) return bad(v, NULL, "join column defined twice");
        avail[bld->join.carry[j]] = true;
      }
      if (op->join.residual && (!check_expr(v, op->join.residual) || op->join.residual->type != RT_BOOL))
        return bad(v, op->join.residual, "join condition is not boolean");
      break;
    }
#define IR_CASE_SOURCE(name) case IR_##name:
#define IR_CASE_SINK(name) case IR_##name:
#define IR_CASE_BREAKER(name) case IR_##name:
#include "ir/op_cases.h"
    case IR__COUNT:
      return bad(v, NULL, "not a streaming step");
    }
  }
  const ir_op *sink = seg->sink;
  if (!sink) return bad(v, NULL, "segment has no sink");
  v->op = sink;
  if ((sink->kind == IR_OUTPUT) != last) return bad(v, NULL, "OUTPUT must end the last segment only");
  switch (sink->kind) {
  case IR_SORT:
    for (int i = 0; i < sink->sort.nkeys; i++) {
      bool carried = false;
      for (int j = 0; j < sink->sort.ncarry; j++) carried |= sink->sort.carry[j] == sink->sort.keys[i].col;
      if (!carried) return bad(v, NULL, "sort key not carried");
    }
    for (int i = 0; i < sink->sort.ncarry; i++)
      if (!use(v, sink->sort.carry[i])) return 0;
    break;
  case IR_TREE_ORDER: {
    bool node = false, pnode = false;
    for (int i = 0; i < sink->tree.ncarry; i++) {
      if (!use(v, sink->tree.carry[i])) return 0;
      node |= sink->tree.carry[i] == sink->tree.node_col;
      pnode |= sink->tree.carry[i] == sink->tree.pnode_col;
    }
    if (!node || !pnode || !sink->tree.num) return bad(v, NULL, "tree order does not carry the node columns");
    break;
  }
  case IR_AGGREGATE:
    for (int i = 0; i < sink->agg.ngroup; i++)
      if (!use(v, sink->agg.group_cols[i])) return 0;
    for (int i = 0; i < sink->agg.naggs; i++) {
      const ir_agg *a = &sink->agg.aggs[i];
      if (!a->live) continue;
      if (a->kind == RT_AGG_COUNT_STAR ? a->arg_col != -1 : !use(v, a->arg_col))
        return a->kind == RT_AGG_COUNT_STAR ? bad(v, NULL, "COUNT(*) with an argument") : 0;
      if (a->arg2_col >= 0 && !use(v, a->arg2_col)) return 0;
      if ((a->kind == RT_AGG_ARG_MAX || a->kind == RT_AGG_ARG_MIN) && a->arg2_col < 0)
        return bad(v, NULL, "ARG_MAX without its value");
    }
    break;
  case IR_WINDOW: {
    bool *in = v->carried;
    memset(in, 0, (size_t)p->ncols + 1);
    for (int i = 0; i < sink->win.ncarry; i++) {
      if (!use(v, sink->win.carry[i])) return 0;
      in[sink->win.carry[i]] = true;
    }
    for (int i = 0; i < sink->win.ncalls; i++) {
      const ir_wincall *c = &sink->win.calls[i];
      if (!c->live) continue;
      if (c->spec < 0 || c->spec >= sink->win.nspecs || c->fn >= RT_WIN__COUNT)
        return bad(v, NULL, "window call without its window");
      const ir_winspec *sp = &sink->win.specs[c->spec];
      int cols[3] = {c->arg_col, c->n_col, c->dflt_col};
      for (int k = 0; k < 3; k++)
        if (cols[k] >= 0 && !in[cols[k]]) return bad(v, NULL, "window argument not carried");
      if ((c->arg_col < 0) != (ir_wins[c->fn].arg == IR_WINARG_NO || ir_wins[c->fn].arg == IR_WINARG_STAR ||
                               c->fn == RT_WIN_NTILE))
        return bad(v, NULL, "window call shape");
      for (int k = 0; k < sp->npart; k++)
        if (!in[sp->part[k]]) return bad(v, NULL, "window partition key not carried");
      for (int k = 0; k < sp->norder; k++)
        if (!in[sp->order[k].col]) return bad(v, NULL, "window order key not carried");
      if (c->out_col < 0 || c->out_col >= p->ncols || in[c->out_col] || avail[c->out_col])
        return bad(v, NULL, "window result column defined twice");
      rt_type st = rt_store_type(p->cols[c->out_col].type);
      if (c->arg_col >= 0 && ir_wins[c->fn].out != IR_WINOUT_SUM && ir_wins[c->fn].out != IR_WINOUT_AVG &&
          ir_wins[c->fn].out != IR_WINOUT_F64 && ir_wins[c->fn].out != IR_WINOUT_I64 &&
          rt_store_type(p->cols[c->arg_col].type) != st)
        return bad(v, NULL, "window result type differs from its value");
      if (c->dflt_col >= 0 && rt_store_type(p->cols[c->dflt_col].type) != st)
        return bad(v, NULL, "window default type differs from its value");
    }
    break;
  }
  case IR_JOIN_BUILD:
    if (!sink->join.probe) return bad(v, NULL, "join build without its probe");
    for (int i = 0; i < sink->join.ncarry; i++)
      if (!use(v, sink->join.carry[i])) return 0;
    break;
  case IR_FORK:
    for (int i = 0; i < sink->fork.ncarry; i++)
      if (!use(v, sink->fork.carry[i])) return 0;
    break;
  case IR_IV_BUFFER:
    if (!sink->ivbuf.user) return bad(v, NULL, "interval buffer without its operator");
    for (int i = 0; i < sink->ivbuf.ncarry; i++)
      if (!use(v, sink->ivbuf.carry[i])) return 0;
    break;
  case IR_OUTPUT:
    for (int i = 0; i < sink->output.nout; i++)
      if (!use(v, sink->output.out[i])) return 0;
    break;
#define IR_CASE_SOURCE(name) case IR_##name:
#define IR_CASE_STEP(name) case IR_##name:
#include "ir/op_cases.h"
  case IR__COUNT:
    return bad(v, NULL, "not a sink");
  }
  return 1;
}

int ir_verify(const ir_plan *p, rt_err *err) {
  if (p->nsegs == 0) return rt_errorf(err, -1, "FROM: internal error: plan has no segments");
  bool *avail = calloc((size_t)p->ncols + 1, 1);
  if (!avail) return rt_errorf(err, -1, "FROM: out of memory");
  bool *carried = calloc((size_t)p->ncols + 1, 1);
  if (!carried) {
    free(avail);
    return rt_errorf(err, -1, "FROM: out of memory");
  }
  vctx v = {.p = p, .err = err, .avail = avail, .carried = carried};
  const ir_op *prev = NULL;
  int ok = 1;
  for (int s = 0; s < p->nsegs && ok; s++) {
    if (!(ok = check_segment(&v, &p->segs[s], prev, s == p->nsegs - 1, avail))) {
      if (!err->set) rt_errorf(err, -1, "FROM: internal error: malformed segment %d", s);
    }
    prev = p->segs[s].sink;
  }
  free(avail);
  free(carried);
  return ok;
}
