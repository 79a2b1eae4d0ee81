/*
 * bind_tree.c — binds TREE ACCUMULATE UP/DOWN (LANGUAGE.md §4) into its
 * three ops (plan.h: TREE_NUMBER, TREE_ORDER, TREE_ACC).
 *
 * The tree is the bare `id` and `parent_id` of the row: both integers of
 * any kind, or both strings (a double id is a compile error, as is a
 * mix). Aggregates: SUM(x), COUNT(*), COUNT(x), MIN(x), MAX(x), AVG(x) of
 * numbers, ARG_MAX(ordering, x) / ARG_MIN, and for DOWN FIRST(x) / LAST(x)
 * (§9.4; x of any type), each named with AS; outputs are appended bare as
 * 64-bit columns (SUM, MIN and MAX of doubles are doubles, AVG a double,
 * the others x's type), every column and alias is kept.
 *
 * Reuse (the seed's "consecutive stages"): when the ops since the previous
 * TREE_ACC are only COMPUTEs (reshaping stages; no WHERE, LIMIT, ORDER BY
 * or AGGREGATE changed the rows) and id and parent_id are still the same
 * columns, this stage reads that stage's node numbers; if it also goes in
 * the same direction, the rows are already in order and no TREE_ORDER is
 * added. live.c may still drop the earlier stage's TREE_ACC: the shared
 * ops stay as long as a live stage reads them.
 */
#include "bind.h"

static int bind_tree_agg(ir_binder *b, const fe_stage *st, const fe_item *it, ir_agg *ag,
                         rt_type *out_type, bool *out_null, bool *untyped) {
  ir_expr *e;
  if (!ir_bind_agg_call(b, it, IR_AGG_IN_TREE, ir_agg_expected(b, IR_AGG_IN_TREE), ag, &e)) return 0;
  bool path = ag->kind == RT_AGG_FIRST || ag->kind == RT_AGG_LAST;
  if (path && st->up)
    return ir_fail(b, it->expr ? it->expr->pos : it->pos, "%s() takes a root path: it is for TREE ACCUMULATE DOWN",
                   ag->kind == RT_AGG_FIRST ? "FIRST" : "LAST");
  /* SUM of NULLs is 0 here (NULL adds 0), so only the others stay NULL. */
  *untyped = ir_agg_untyped(ag, e) && ag->kind != RT_AGG_SUM;
  *out_type = RT_I64;
  *out_null = false;
  if (!e) return 1;
  /* FIRST / LAST / ARG_MAX's value keep their type (strings too); the
   * others are numbers */
  bool keeps = path || ag->kind == RT_AGG_ARG_MAX || ag->kind == RT_AGG_ARG_MIN;
  *out_type = ir_agg_out_type(ag->kind, e->type, !keeps);
  /* SUM and COUNT are never NULL (NULL adds 0), but a double SUM of +inf
   * and -inf is NaN, which is NULL; MIN/MAX/AVG/FIRST/LAST are NULL when
   * no value in the subtree (or on the path) is there, ARG_MAX also when
   * the chosen row's value is NULL. */
  switch (ag->kind) {
  case RT_AGG_MIN: case RT_AGG_MAX: case RT_AGG_AVG: case RT_AGG_FIRST: case RT_AGG_LAST:
    *out_null = e->nullable || (ag->kind == RT_AGG_AVG && e->type == RT_F64);
    break;
  case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: *out_null = true; break;
  case RT_AGG_SUM: *out_null = e->type == RT_F64; break;
  case RT_AGG_COUNT_STAR: case RT_AGG_COUNT: case RT_AGG_ANY_VALUE: case RT_AGG_COUNT_DISTINCT:
  case RT_AGG_GROUP_CONCAT: case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE:
    break;
  }
  return 1;
}

/* The previous stage's TREE_ACC when nothing but COMPUTEs came since. */
static ir_op *prev_tree_acc(ir_binder *b) {
  for (int i = b->p->nops - 1; i >= 0; i--) {
    ir_op *op = b->p->ops[i];
    if (op->kind == IR_COMPUTE) continue;
    return op->kind == IR_TREE_ACC ? op : NULL;
  }
  return NULL;
}

int ir_bind_tree(ir_binder *b, const fe_stage *st) {
  ir_plan *p = b->p;
  int idc, pc;
  const char *nm;
  if (!ir_resolve(b, NULL, "id", st->pos, st->pos, &idc, &nm) ||
      !ir_resolve(b, NULL, "parent_id", st->pos, st->pos, &pc, &nm))
    return 0;
  rt_type it = p->cols[idc].type, pt = p->cols[pc].type;
  if (it == RT_F64 || pt == RT_F64)
    return ir_fail(b, st->pos, "expected id and parent_id to be integers or strings, but %s is a double",
                   it == RT_F64 ? "id" : "parent_id");
  if ((it == RT_STR) != (pt == RT_STR))
    return ir_fail(b, st->pos,
                   "expected id and parent_id of the same type, but id is %s and parent_id is %s",
                   it == RT_STR ? "a string" : "an integer", pt == RT_STR ? "a string" : "an integer");

  int na = st->nitems;
  ir_agglist l = ir_agglist_new(b, na);
  ir_agg *aggs = l.aggs;
  for (int i = 0; i < na; i++)
    if (!bind_tree_agg(b, st, &st->items[i], &aggs[i], &l.types[i], &l.nulls[i], &l.untyped[i])) return 0;

  ir_op *prev = prev_tree_acc(b);
  ir_op *num = NULL, *order = NULL;
  bool reuse_num = prev && prev->tree.num->tree.id_col == idc && prev->tree.num->tree.parent_col == pc;
  if (reuse_num) {
    num = prev->tree.num;
    if (prev->tree.up == st->up) order = prev->tree.order;
  } else {
    num = ir_op_add(b, IR_TREE_NUMBER, st->pos);
    num->tree.id_col = idc;
    num->tree.parent_col = pc;
    num->tree.node_col = ir_col_new(p, "__node", RT_U32, false);
    num->tree.pnode_col = ir_col_new(p, "__parent_node", RT_U32, false);
    num->tree.tier = RT_TREE_TIER_DENSE;   /* segment.c may prove TABLE */
  }
  if (!order) {
    order = ir_op_add(b, IR_TREE_ORDER, st->pos);
    order->tree.up = st->up;
    order->tree.num = num;
    order->tree.node_col = num->tree.node_col;
    order->tree.pnode_col = num->tree.pnode_col;
    /* Carry everything still reachable, the aggregates' arguments (a
     * computed one, `SUM(v + 1)`, is in no row) and the node numbers;
     * live.c trims this to what is read after the ordering. */
    int *all;
    int n = ir_row_all_cols(b, &all);
    order->tree.carry = ir_alloc(b, sizeof(int) * ((size_t)n + 2 * (size_t)na + 3));
    memcpy(order->tree.carry, all, sizeof(int) * (size_t)n);
    for (int i = 0; i < 2 * na; i++) {
      int c = i < na ? aggs[i].arg_col : aggs[i - na].arg2_col;   /* ARG_MAX's value too */
      bool have = c < 0;
      for (int j = 0; j < n && !have; j++) have = order->tree.carry[j] == c;
      if (!have) order->tree.carry[n++] = c;
    }
    order->tree.carry[n++] = num->tree.node_col;
    order->tree.carry[n++] = num->tree.pnode_col;
    order->tree.ncarry = n;
  }
  ir_op *acc = ir_op_add(b, IR_TREE_ACC, st->pos);
  acc->tree.up = st->up;
  acc->tree.num = num;
  acc->tree.order = order;
  acc->tree.node_col = num->tree.node_col;
  acc->tree.pnode_col = num->tree.pnode_col;
  acc->tree.reuse_num = reuse_num;
  acc->tree.reuse_order = reuse_num && order == prev->tree.order;
  acc->tree.naggs = na;
  acc->tree.aggs = aggs;

  ir_rowb rb = {0};
  for (int i = 0; i < b->row.n; i++)
    ir_rowb_add(b, &rb, b->row.e[i].name, b->row.e[i].col, b->row.e[i].qonly);
  ir_agg_outputs(b, st, &l, &rb);
  b->row = ir_rowb_done(&rb);   /* aliases are kept and do not gain the outputs */
  return 1;
}
