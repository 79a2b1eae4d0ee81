/*
 * bind_reshape.c — binds the interval reshaping stages of LANGUAGE.md §9.2:
 * INTERVAL SPLIT, SUBTRACT, MERGE OVERLAPPING / CONSECUTIVE BY, SET BOUNDS
 * and QUANTIZE (FILL WITHIN is FILL GAPS', bind_interval.c).
 *
 * Each buffers its input (and operand) in IV_BUFFERs like the other
 * interval operators and is the source of the next segment (plan.h,
 * struct ir_interval):
 *   SUBTRACT, SPLIT, QUANTIZE  serve the input's columns through a
 *       selection of its rows, with new bounds ts_out, dur_out (bare ts
 *       and dur are replaced in place), plus SPLIT's operand columns
 *       (qualified-only under its alias, NULL where no row covers a
 *       piece) and QUANTIZE's `bucket`; aliases keep their snapshots.
 *   SET BOUNDS  computes the new bounds before the buffer (checked
 *       arithmetic) and serves every row as it was, the runtime checking
 *       that no bound is below zero.
 *   MERGE  serves the input's rows in merge order with each one's merged
 *       interval (gid_out, ts_out, dur_out); an AGGREGATE breaker grouped
 *       by gid_out then computes the output row — the merged bounds, the
 *       PER and BY columns (ANY_VALUE: equal within a group) and the
 *       stage's aggregates (aggs.def's LIST column) — so both backends,
 *       the JIT included, aggregate as they do for GROUP BY.
 */
#include "runtime/interval/interval.h"
#include "bind.h"

/* The current row with bare ts and dur replaced by the new bounds (or,
 * for SET BOUNDS on a row without them, appended), and `extra` (QUANTIZE's
 * bucket) replacing a bare column of its name or appended. */
static ir_row new_bounds_row(ir_binder *b, ir_row in, int ts_out, int dur_out, const char *extra,
                             int extra_col) {
  ir_rowb rb = {0};
  bool seen_ts = false, seen_dur = false, seen_extra = false;
  for (int i = 0; i < in.n; i++) {
    const ir_entry *e = &in.e[i];
    int col = e->col;
    if (!e->qonly && ir_name_eq(e->name, "ts")) col = ts_out, seen_ts = true;
    else if (!e->qonly && ir_name_eq(e->name, "dur")) col = dur_out, seen_dur = true;
    else if (extra && !e->qonly && ir_name_eq(e->name, extra)) col = extra_col, seen_extra = true;
    ir_rowb_add(b, &rb, e->name, col, e->qonly);
  }
  if (!seen_ts) ir_rowb_add(b, &rb, "ts", ts_out, false);
  if (!seen_dur) ir_rowb_add(b, &rb, "dur", dur_out, false);
  if (extra && !seen_extra) ir_rowb_add(b, &rb, extra, extra_col, false);
  return ir_rowb_done(&rb);
}

/* ---- SUBTRACT and SPLIT: the input and an operand ---------------------------- */

static int bind_two(ir_binder *b, const fe_stage *st, ir_opkind kind) {
  ir_plan *p = b->p;
  int ts, dur, *per;
  const char **pnames;
  if (!ir_iv_input_bounds(b, st, &ts, &dur, &per, &pnames)) return 0;
  ir_rowsave in = ir_row_save(b);
  int id = ir_iv_rel_id(b, in.row);
  ir_op *inbuf = ir_iv_input_buffer(b, st, 0, NULL);

  ir_iv_operand o;
  if (!ir_iv_bind_keyed_operand(b, st, per, &o)) return 0;
  int *op_cols, nop;
  if (kind == IR_SPLIT) {
    nop = ir_iv_row_cols(b, o.row, &op_cols);
  } else {
    /* SUBTRACT reads only the operand's bounds and lanes */
    op_cols = ir_alloc(b, sizeof(int) * ((size_t)st->nper + 3));
    nop = 0;
    op_cols[nop++] = o.ts;
    op_cols[nop++] = o.dur;
    for (int q = 0; q < st->nper; q++) op_cols[nop++] = o.per[q];
  }
  ir_op *opbuf = ir_add_ivbuf(b, st->src->pos, nop, op_cols);
  ir_op *op = ir_iv_two_rel_op(b, kind, st, inbuf, ts, dur, per, opbuf, &o, o.per, o.qual);
  op->iv.id[0] = id;
  op->iv.id[1] = ir_iv_rel_id(b, o.row);
  op->iv.origin = op->iv.gid_out = op->iv.bucket_out = -1;
  op->iv.ts_out = ir_col_new(p, "ts", RT_I64, false);
  op->iv.dur_out = ir_col_new(p, "dur", RT_I64, false);
  /* the input's row with the new bounds, its aliases as they were */
  in.row = new_bounds_row(b, in.row, op->iv.ts_out, op->iv.dur_out, NULL, -1);
  if (kind == IR_SUBTRACT) {
    ir_row_restore(b, &in);
    return 1;
  }
  /* SPLIT: the operand's columns, qualified-only, NULL on uncovered pieces */
  for (int i = 0; i < nop; i++) p->cols[op_cols[i]].nullable = true;
  ir_iv_join_row(b, &in, &o);
  return 1;
}

int ir_bind_subtract(ir_binder *b, const fe_stage *st) { return bind_two(b, st, IR_SUBTRACT); }
int ir_bind_split(ir_binder *b, const fe_stage *st) { return bind_two(b, st, IR_SPLIT); }

/* ---- QUANTIZE -------------------------------------------------------------- */

/* TRACE START: trace_bounds.start_ts through the engine's callout, NULL
 * when no trace is loaded (the runtime then takes the smallest ts). */
static ir_expr *trace_start_or_null(ir_binder *b, int pos) {
  fe_expr x = {.kind = AX_CALL, .pos = pos, .endpos = pos, .str = "__pj_trace_start_or_null",
               .height = 1};
  ir_expr *e = ir_bind_callout(b, &x);
  return e;
}

int ir_bind_quantize(ir_binder *b, const fe_stage *st) {
  ir_plan *p = b->p;
  int ts, dur, *per;
  const char **pnames;
  if (!ir_iv_input_bounds(b, st, &ts, &dur, &per, &pnames)) return 0;
  int origin = -1;
  if (st->align != 1) {
    ir_expr *e = st->align == 2 ? ir_bind_expr(b, st->align_expr) : trace_start_or_null(b, st->pos);
    if (!e && b->err->set) return 0;
    if (e) {
      int pos = st->align == 2 ? st->align_expr->pos : st->pos;
      if (e->type == RT_NULLT) e = ir_ex_settle(b, e, RT_I64);
      if (!rt_type_is_int(e->type))
        return ir_fail(b, pos, "expected ALIGNED TO to be an integer, but it is %s",
                       e->type == RT_STR ? "a string" : "a double");
      if ((origin = ir_materialize(b, e, "aligned to", pos)) < 0) return 0;
    }
  }
  ir_rowsave in = ir_row_save(b);
  int id = ir_iv_rel_id(b, in.row);
  ir_op *inbuf = ir_iv_input_buffer(b, st, 1, &origin);
  ir_op *op = ir_iv_one_rel_op(b, IR_QUANTIZE, st, inbuf, ts, dur, per, id);
  op->iv.origin = origin;
  op->iv.align = st->align;
  op->iv.width = st->width;
  op->iv.ts_out = ir_col_new(p, "ts", RT_I64, false);
  op->iv.dur_out = ir_col_new(p, "dur", RT_I64, false);
  op->iv.bucket_out = ir_col_new(p, "bucket", RT_I64, false);
  in.row = new_bounds_row(b, in.row, op->iv.ts_out, op->iv.dur_out, "bucket", op->iv.bucket_out);
  ir_row_restore(b, &in);
  return 1;
}

/* ---- SET BOUNDS --------------------------------------------------------------- */

/* An integer bound expression (ts = e1, dur = e3 or e2 - e1). */
static int bound_expr(ir_binder *b, const fe_expr *x, const char *what, ir_expr **out) {
  ir_expr *e = ir_bind_expr(b, x);
  if (!e) return 0;
  if (e->type == RT_NULLT) e = ir_ex_settle(b, e, RT_I64);
  if (!rt_type_is_int(e->type))
    return ir_fail(b, x->pos, "expected %s to be an integer, but it is %s", what,
                   e->type == RT_STR ? "a string" : "a double");
  *out = e;
  return 1;
}

int ir_bind_set_bounds(ir_binder *b, const fe_stage *st) {
  ir_plan *p = b->p;
  ir_expr *e1, *ed;
  if (!bound_expr(b, st->begin_at, "BEGIN AT", &e1)) return 0;
  if (st->for_dur) {
    if (!bound_expr(b, st->for_dur, "FOR", &ed)) return 0;
  } else {
    /* e2 - e1 as written (checked: overflow is an error) */
    ir_expr *e2;
    if (!bound_expr(b, st->end_at, "END AT", &e2)) return 0;
    fe_expr *sub = ir_alloc(b, sizeof *sub);
    fe_expr **args = ir_alloc(b, 2 * sizeof *args);
    args[0] = st->end_at;
    args[1] = st->begin_at;
    *sub = (fe_expr){.kind = AX_BINARY, .op = FO_SUB, .pos = st->end_at->pos,
                     .oppos = st->end_at->pos, .endpos = st->end_at->endpos, .nargs = 2,
                     .args = args,
                     .height = 1 + (st->end_at->height > st->begin_at->height ? st->end_at->height
                                                                            : st->begin_at->height)};
    if (!(ed = ir_bind_expr(b, sub))) return 0;
    (void)e2;
  }
  int nts = ir_materialize(b, e1, "ts", st->begin_at->pos);
  int ndur = ir_materialize(b, ed, "dur", st->for_dur ? st->for_dur->pos : st->end_at->pos);
  if (nts < 0 || ndur < 0) return 0;
  ir_row in_row = b->row;
  int more[2] = {nts, ndur};
  ir_op *inbuf = ir_iv_input_buffer(b, st, 2, more);
  ir_op *op = ir_iv_one_rel_op(b, IR_SETBOUNDS, st, inbuf, nts, ndur, NULL, ir_iv_rel_id(b, in_row));
  op->iv.nper = 0;
  b->row = new_bounds_row(b, in_row, nts, ndur, NULL, -1);
  (void)p;
  return 1;   /* aliases keep their snapshots */
}

/* ---- MERGE OVERLAPPING / CONSECUTIVE BY ----------------------------------------- */

/* ANY_VALUE(col) into a new column `name`: a value equal across the group. */
static ir_agg any_value(ir_binder *b, int col, const char *name) {
  const ir_col *c = &b->p->cols[col];
  rt_type t = c->type == RT_F64 || c->type == RT_STR || c->type == RT_BOOL ? c->type : RT_I64;
  ir_agg ag = {.kind = RT_AGG_ANY_VALUE, .arg_col = col, .arg_type = c->type, .live = true,
               .arg2_col = -1, .arg2_type = RT_NULLT};
  ag.out_col = ir_col_new(b->p, name, t, c->nullable);
  b->p->cols[ag.out_col].untyped = c->untyped;
  return ag;
}

int ir_bind_merge(ir_binder *b, const fe_stage *st) {
  ir_plan *p = b->p;
  b->stage = st->consecutive ? "INTERVAL MERGE CONSECUTIVE" : "INTERVAL MERGE OVERLAPPING";
  int ts, dur, *per;
  const char **pnames;
  if (!ir_iv_input_bounds(b, st, &ts, &dur, &per, &pnames)) return 0;
  int nby = st->nby, na = st->nitems;
  int *by = ir_alloc(b, sizeof(int) * ((size_t)nby + 1));
  const char **bnames = ir_alloc(b, sizeof(char *) * ((size_t)nby + 1));
  for (int q = 0; q < nby; q++)
    if (!ir_resolve(b, NULL, st->by[q].name, st->by[q].pos, st->by[q].pos, &by[q], &bnames[q]))
      return 0;
  ir_agglist l;
  if (!ir_bind_agg_list(b, st, IR_AGG_IN_LIST, NULL, 1, &l)) return 0;
  ir_agg *uaggs = l.aggs;
  /* ts, dur, PER, BY, aggregates: one name each */
  int nout = 2 + st->nper + nby + na;
  const char **onames = ir_alloc(b, sizeof(char *) * (size_t)nout);
  int *opos = ir_alloc(b, sizeof(int) * (size_t)nout);
  int k = 0;
  onames[k] = "ts", opos[k++] = st->pos;
  onames[k] = "dur", opos[k++] = st->pos;
  for (int q = 0; q < st->nper; q++) onames[k] = pnames[q], opos[k++] = st->per[q].pos;
  for (int q = 0; q < nby; q++) onames[k] = bnames[q], opos[k++] = st->by[q].pos;
  for (int i = 0; i < na; i++) onames[k] = st->items[i].name, opos[k++] = st->items[i].namepos;
  if (!ir_check_output_names(b, nout, onames, opos)) return 0;

  /* the buffer: bounds, id, PER, BY, the aggregates' arguments */
  int id = ir_iv_rel_id(b, b->row);
  int *keys = ir_alloc(b, sizeof(int) * ((size_t)(st->nper + nby) + 1));
  memcpy(keys, per, sizeof(int) * (size_t)st->nper);
  memcpy(keys + st->nper, by, sizeof(int) * (size_t)nby);
  ir_op *inbuf = ir_iv_agg_buffer(b, st->pos, ts, dur, id, st->nper + nby, keys, na, uaggs);
  ir_op *op = ir_iv_one_rel_op(b, IR_IVMERGE, st, inbuf, ts, dur, per, id);
  op->iv.nby = nby;
  op->iv.by = by;
  op->iv.ts_out = ir_col_new(p, "ts", RT_I64, false);
  op->iv.dur_out = ir_col_new(p, "dur", RT_I64, false);
  op->iv.gid_out = ir_col_new(p, "merged interval", RT_I64, false);

  /* AGGREGATE … GROUP BY gid_out */
  int nagg = 2 + st->nper + nby + na;
  ir_agg *aggs = ir_alloc(b, sizeof(ir_agg) * (size_t)nagg);
  k = 0;
  aggs[k++] = any_value(b, op->iv.ts_out, "ts");
  aggs[k++] = any_value(b, op->iv.dur_out, "dur");
  for (int q = 0; q < st->nper; q++) aggs[k++] = any_value(b, per[q], pnames[q]);
  for (int q = 0; q < nby; q++) aggs[k++] = any_value(b, by[q], bnames[q]);
  ir_rowb rb = {0};
  for (int i = 0; i < k; i++) ir_rowb_add(b, &rb, onames[i], aggs[i].out_col, false);
  ir_agg_outputs(b, st, &l, &rb);
  for (int i = 0; i < na; i++) aggs[k++] = uaggs[i];
  ir_op *ag = ir_op_add(b, IR_AGGREGATE, st->pos);
  ag->agg.ngroup = 1;
  ag->agg.group_cols = ir_alloc(b, sizeof(int));
  ag->agg.group_cols[0] = op->iv.gid_out;
  ag->agg.group_out = ir_alloc(b, sizeof(int));
  ag->agg.group_out[0] = ir_col_new(p, "merged interval", RT_I64, false);
  ag->agg.naggs = nagg;
  ag->agg.aggs = aggs;
  b->row = ir_rowb_done(&rb);
  ir_alias_set_one(b, NULL, b->row);
  return 1;
}
