/*
 * bind_ivmatch.c — binds the interval matching stages of LANGUAGE.md §9.3:
 * [LEFT] INTERVAL FIND and INTERVAL KEEP IF / DROP IF. Like INTERVAL JOIN
 * (bind_interval.c), relation 0 is the stage's input and relation 1 the
 * operand, each ending in an IV_BUFFER; the op serves the output through
 * selections of both.
 */
#include "runtime/interval/interval.h"
#include "bind.h"

/* Input PER columns, bare, as the stage names them. */
static int *input_per(ir_binder *b, const fe_stage *st) {
  int *per = ir_alloc(b, sizeof(int) * ((size_t)st->nper + 1));
  const char *nm;
  for (int q = 0; q < st->nper; q++)
    if (!ir_resolve(b, NULL, st->per[q].name, st->per[q].pos, st->per[q].pos, &per[q], &nm))
      return NULL;
  return per;
}

/* The operand, with every PER column, of the input's kinds, buffered. */
static ir_op *bind_match_operand(ir_binder *b, const fe_stage *st, const int *per,
                                 ir_iv_operand *o) {
  if (!ir_iv_bind_keyed_operand(b, st, per, o)) return NULL;
  int *cols;
  int n = ir_iv_row_cols(b, o->row, &cols);
  return ir_add_ivbuf(b, st->src->pos, n, cols);
}

/* ---- [LEFT] INTERVAL FIND ------------------------------------------------- */

int ir_bind_ifind(ir_binder *b, const fe_stage *st) {
  ir_plan *p = b->p;
  /* The anchor's bounds: the input row's, or an earlier alias's. */
  const char *of = st->anchor_of.name, *nm;
  int apos = of ? st->anchor_of.pos : st->pos;
  int ts, dur;
  if (!ir_resolve(b, of, "ts", apos, apos, &ts, &nm) || !ir_iv_check_bound(b, of, "ts", ts, apos))
    return 0;
  /* BEGIN reads dur too: a row with NULL ts or dur finds nothing, as in
   * INTERVAL JOIN. */
  if (!ir_resolve(b, of, "dur", apos, apos, &dur, &nm) || !ir_iv_check_bound(b, of, "dur", dur, apos))
    return 0;
  int *per = input_per(b, st);
  if (!per) return 0;
  /* WITHIN d: computed on every input row before the buffer. */
  int within = -1;
  if (st->within_d) {
    ir_expr *e = ir_bind_expr(b, st->within_d);
    if (!e) return 0;
    if (e->type != RT_NULLT && !rt_type_is_int(e->type))
      return ir_fail(b, st->within_d->pos, "expected WITHIN to be an integer distance, but it is %s",
                     e->type == RT_STR ? "a string" : "a double");
    if ((within = ir_materialize(b, e, "within", st->within_d->pos)) < 0) return 0;
  }
  ir_rowsave in = ir_row_save(b);
  ir_op *inbuf = ir_iv_input_buffer(b, st, 1, &within);
  ir_iv_operand o;
  ir_op *opbuf = bind_match_operand(b, st, per, &o);
  if (!opbuf) return 0;
  ir_op *op = ir_iv_two_rel_op(b, IR_IV_FIND, st, inbuf, ts, dur, per, opbuf, &o, o.per, o.qual);
  op->iv.rel = (st->ending ? IR_FIND_ENDING : 0) | (st->before ? IR_FIND_BEFORE : 0) |
               (st->anchor_end ? IR_FIND_END : 0);
  op->iv.left = st->left;
  op->iv.within_col = within;
  if (st->left)
    for (int i = 0; i < opbuf->ivbuf.ncarry; i++) p->cols[opbuf->ivbuf.carry[i]].nullable = true;
  ir_iv_join_row(b, &in, &o);
  return 1;
}

/* ---- INTERVAL KEEP IF / DROP IF ------------------------------------------- */

int ir_bind_ikeep(ir_binder *b, const fe_stage *st) {
  int ts, dur, *per;
  const char **pnames;
  if (!ir_iv_input_bounds(b, st, &ts, &dur, &per, &pnames)) return 0;
  ir_rowsave in = ir_row_save(b);
  ir_op *inbuf = ir_iv_input_buffer(b, st, 0, NULL);
  ir_iv_operand o;
  ir_op *opbuf = bind_match_operand(b, st, per, &o);
  if (!opbuf) return 0;
  ir_op *op = ir_iv_two_rel_op(b, IR_IV_KEEP, st, inbuf, ts, dur, per, opbuf, &o, o.per, o.qual);
  op->iv.rel = (int)ir_iv_rt_rel(st->rel);
  op->iv.drop = st->kind == ST_IV_DROP;
  ir_row_restore(b, &in);   /* columns and aliases as they were */
  return 1;
}
