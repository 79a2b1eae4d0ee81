/*
 * bind_ivsrc.c — binds the interval sources of LANGUAGE.md §9.1:
 * INTERVALS FROM EVENTS and INTERVAL UNION OF, as bind_interval.c binds
 * INTERVAL INTERSECTION OF: each relation ends in an IV_BUFFER sink and
 * the operator is the source op after the last one (plan.h, op->iv).
 */
#include "runtime/interval/interval.h"
#include "bind.h"

static const char *const k_events = "INTERVALS FROM EVENTS";

/* ---- INTERVALS FROM EVENTS ------------------------------------------------ */

/* The STOP events: their ts and the PER columns, of the events' kinds. */
static ir_op *bind_stop(ir_binder *b, const fe_source *src, const int *evper, int *ts,
                        int **per, int *idp) {
  const fe_source *ss = src->ops[1];
  if (!ir_bind_source(b, ss, b->stage)) return NULL;
  b->stage = k_events;
  ir_row row = b->row;
  const char *q = ir_iv_src_qual(ss);
  const char *rel = q ? q : "the STOP events";
  if ((*ts = ir_iv_rel_col(b, row, rel, "ts", ss->pos)) < 0 ||
      !ir_iv_check_bound(b, rel, "ts", *ts, ss->pos))
    return NULL;
  *per = ir_alloc(b, sizeof(int) * ((size_t)src->nper + 1));
  int *cols = ir_alloc(b, sizeof(int) * ((size_t)src->nper + 3));
  int n = 0;
  cols[n++] = *ts;
  int id = *idp = ir_iv_rel_id(b, row);
  if (id >= 0 && id != *ts) cols[n++] = id;
  for (int k = 0; k < src->nper; k++) {
    int c = (*per)[k] = ir_iv_rel_col(b, row, rel, src->per[k].name, ss->pos);
    if (c < 0) return NULL;
    rt_type a = b->p->cols[evper[k]].type, o = b->p->cols[c].type;
    if (ir_iv_key_kind(a) != ir_iv_key_kind(o))
      return ir_fail(b, src->per[k].pos,
                     "expected %s.%s to have the type of the events' %s, but it is %s and %s", rel,
                     src->per[k].name, src->per[k].name, rt_type_name(o), rt_type_name(a)),
             NULL;
    bool dup = false;
    for (int i = 0; i < n && !dup; i++) dup = cols[i] == c;
    if (!dup) cols[n++] = c;
  }
  return ir_add_ivbuf(b, ss->pos, n, cols);
}

int ir_bind_iv_events(ir_binder *b, const fe_source *src) {
  const char *stage = k_events;
  ir_plan *p = b->p;
  b->stage = stage;
  const fe_source *es = src->ops[0];
  if (!ir_bind_source(b, es, stage)) return 0;
  b->stage = stage;
  ir_row row = b->row;
  const char *qual = ir_iv_src_qual(es);
  const char *rel = qual ? qual : "the events";
  int ts = ir_iv_rel_col(b, row, rel, "ts", es->pos);
  if (ts < 0 || !ir_iv_check_bound(b, rel, "ts", ts, es->pos)) return 0;
  int dur = ir_iv_find_bare(b, row, "dur", rel, es->pos);
  if (dur == -2) return 0;
  int np = src->nper;
  int *per = ir_alloc(b, sizeof(int) * ((size_t)np + 1));
  for (int k = 0; k < np; k++)
    if ((per[k] = ir_iv_rel_col(b, row, rel, src->per[k].name, src->per[k].pos)) < 0) return 0;
  /* CLOSING LAST AT (expr): computed on every event row before the buffer
   * (cheap, and the sweep then reads it like a column); only the last
   * event of a lane uses it. */
  int close = -1;
  bool close_null = false;
  if (src->close) {
    ir_expr *e = ir_bind_expr(b, src->close);
    if (!e) return 0;
    if (e->type != RT_NULLT && !rt_type_is_int(e->type))
      return ir_fail(b, src->close->pos,
                     "expected CLOSING LAST AT to give an integer time, but it gives %s",
                     e->type == RT_STR ? "a string" : "a double");
    close_null = e->nullable || e->type == RT_NULLT;
    if ((close = ir_materialize(b, e, "close", src->close->pos)) < 0) return 0;
  }
  int *cols;
  int n = ir_iv_row_cols(b, row, &cols);
  if (close >= 0) {
    int *c2 = ir_alloc(b, sizeof(int) * ((size_t)n + 2));
    memcpy(c2, cols, sizeof(int) * (size_t)n);
    bool dup = false;
    for (int i = 0; i < n && !dup; i++) dup = c2[i] == close;
    if (!dup) c2[n++] = close;
    cols = c2;
  }
  ir_op *evbuf = ir_add_ivbuf(b, es->pos, n, cols);
  int sts = -1, *sper = NULL, sid = -1;
  ir_op *stopbuf = src->nops > 1 ? bind_stop(b, src, per, &sts, &sper, &sid) : NULL;
  if (src->nops > 1 && !stopbuf) return 0;

  ir_op *op = ir_op_add(b, IR_IV_EVENTS, src->pos);
  ir_iv_rel_arrays(b, op, stopbuf ? 2 : 1, np);
  op->iv.bufs[0] = evbuf;
  evbuf->ivbuf.user = op;
  op->iv.ts[0] = op->iv.dur[0] = ts;
  op->iv.per[0] = per;
  op->iv.names[0] = qual;
  op->iv.id[0] = ir_iv_rel_id(b, row);
  if (stopbuf) {
    op->iv.bufs[1] = stopbuf;
    stopbuf->ivbuf.user = op;
    op->iv.ts[1] = op->iv.dur[1] = sts;
    op->iv.per[1] = sper;
    op->iv.names[1] = ir_iv_src_qual(src->ops[1]);
    op->iv.id[1] = sid;
  }
  op->iv.close_col = close;
  op->iv.ts_out = ir_col_new(p, "ts", RT_I64, false);
  op->iv.dur_out = ir_col_new(p, "dur", RT_I64, close_null);

  /* ts, dur, then the event's other columns as they were (the events'
   * own dur is dropped); the source's alias names the new row. */
  ir_rowb rb = {0};
  ir_rowb_add(b, &rb, "ts", op->iv.ts_out, false);
  ir_rowb_add(b, &rb, "dur", op->iv.dur_out, false);
  for (int i = 0; i < row.n; i++) {
    const ir_entry *e = &row.e[i];
    if (e->col == ts || e->col == dur || ir_name_eq(e->name, "ts") || ir_name_eq(e->name, "dur"))
      continue;
    ir_rowb_add(b, &rb, e->name, e->col, e->qonly);
  }
  b->row = ir_rowb_done(&rb);
  ir_alias_set_one(b, qual, b->row);
  return 1;
}

/* ---- INTERVAL UNION OF ------------------------------------------------------ */

int ir_bind_iv_union(ir_binder *b, const fe_source *src) {
  static const char *const stage = "INTERVAL UNION OF";
  ir_plan *p = b->p;
  b->stage = stage;
  int k = src->nops, np = src->nper;
  if (k < 2) return ir_fail(b, src->pos, "expected at least two relations to unite");
  ir_row *rows;
  ir_op *op = ir_iv_bind_operands(b, src, stage, IR_IV_UNION, &rows);
  if (!op) return 0;
  op->iv.ts_out = ir_col_new(p, "ts", RT_I64, false);
  op->iv.dur_out = ir_col_new(p, "dur", RT_I64, false);
  /* The lane's PER values: new columns (they come from whichever operand
   * has a row in the lane), of the keys' kind. */
  op->iv.per_out = ir_alloc(b, sizeof(int) * ((size_t)np + 1));
  for (int q = 0; q < np; q++) {
    rt_type t = p->cols[op->iv.per[0][q]].type;
    bool nullable = false;
    for (int j = 0; j < k; j++) nullable |= p->cols[op->iv.per[j][q]].nullable;
    t = t == RT_F64 || t == RT_STR ? t : RT_I64;
    op->iv.per_out[q] = ir_col_new(p, src->per[q].name, t, nullable);
  }
  /* Where an operand has no covering row its columns are NULL. */
  for (int j = 0; j < k; j++)
    for (int i = 0; i < op->iv.bufs[j]->ivbuf.ncarry; i++)
      p->cols[op->iv.bufs[j]->ivbuf.carry[i]].nullable = true;
  /* ts, dur, the PER columns bare; every operand column only through its
   * alias (or a star). */
  ir_rowb rb = {0};
  ir_rowb_add(b, &rb, "ts", op->iv.ts_out, false);
  ir_rowb_add(b, &rb, "dur", op->iv.dur_out, false);
  for (int q = 0; q < np; q++) ir_rowb_add(b, &rb, src->per[q].name, op->iv.per_out[q], false);
  ir_alias *al = ir_alloc(b, sizeof(ir_alias) * (size_t)k);
  for (int j = 0; j < k; j++) {
    for (int i = 0; i < rows[j].n; i++) ir_rowb_add(b, &rb, rows[j].e[i].name, rows[j].e[i].col, true);
    al[j] = (ir_alias){op->iv.names[j], rows[j]};
  }
  b->row = ir_rowb_done(&rb);
  b->naliases = k;
  b->aliases = al;
  return 1;
}
