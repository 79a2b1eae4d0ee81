/*
 * bind_ivrel.c — what the binders of the interval operators share
 * (bind_interval.c, bind_ivsrc.c and the §9 stages): finding a relation's
 * bounds and PER columns, their type checks, the operand of a stage
 * (INTERVAL JOIN, FILL GAPS, FIND, KEEP IF …), the IV_BUFFER of a relation
 * and the per-relation arrays of an interval op (plan.h, op->iv).
 */
#include "runtime/interval/interval.h"
#include "bind.h"

/* The bare entry `name` of `row` (the relation `rel`'s, for messages), or
 * -1 when there is none; -2 with the error set when several entries have
 * that name (§6: even two copies of one column). */
int ir_iv_find_bare(ir_binder *b, ir_row row, const char *name, const char *rel, int pos) {
  int col;
  const char *nm;
  int r = ir_lookup(b, row, true, NULL, name, rel, pos, &col, &nm);
  return r > 0 ? col : r == 0 ? -1 : -2;
}

/* A relation's bound or PER column `name` in row: "expected x to have a
 * ts column" when missing. */
int ir_iv_rel_col(ir_binder *b, ir_row row, const char *rel, const char *name, int pos) {
  int c = ir_iv_find_bare(b, row, name, rel, pos);
  if (c == -1) return ir_fail(b, pos, "expected %s to have a %s column", rel, name), -1;
  return c;
}

int ir_iv_check_bound(ir_binder *b, const char *rel, const char *name, int col, int pos) {
  rt_type t = b->p->cols[col].type;
  if (rt_type_is_int(t)) return 1;
  return ir_fail(b, pos, "expected %s%s%s to be an integer, but it is %s", rel ? rel : "",
                 rel ? "." : "", name, t == RT_STR ? "a string" : "a double");
}

/* Kind of a PER key: 0 integer, 1 double, 2 string. */
int ir_iv_key_kind(rt_type t) { return t == RT_F64 ? 1 : t == RT_STR ? 2 : 0; }

/* Unique columns of row, in order. */
int ir_iv_row_cols(ir_binder *b, ir_row row, int **out) {
  int *cols = ir_alloc(b, sizeof(int) * ((size_t)row.n + 1));
  int n = 0;
  for (int i = 0; i < row.n; i++) {
    bool dup = false;
    for (int k = 0; k < n && !dup; k++) dup = cols[k] == row.e[i].col;
    if (!dup) cols[n++] = row.e[i].col;
  }
  *out = cols;
  return n;
}

ir_op *ir_add_ivbuf(ir_binder *b, int pos, int n, int *cols) {
  ir_op *buf = ir_op_add(b, IR_IV_BUFFER, pos);
  buf->ivbuf.ncarry = n;
  buf->ivbuf.carry = cols;
  return buf;
}

/* Allocates the per-relation arrays of an interval op. */
void ir_iv_rel_arrays(ir_binder *b, ir_op *op, int nrel, int nper) {
  op->iv.nrel = nrel;
  op->iv.nper = nper;
  op->iv.bufs = ir_alloc(b, sizeof(ir_op *) * (size_t)nrel);
  op->iv.ts = ir_alloc(b, sizeof(int) * (size_t)nrel);
  op->iv.dur = ir_alloc(b, sizeof(int) * (size_t)nrel);
  op->iv.per = ir_alloc(b, sizeof(int *) * (size_t)nrel);
  op->iv.names = ir_alloc(b, sizeof(char *) * (size_t)nrel);
  op->iv.id = ir_alloc(b, sizeof(int) * (size_t)nrel);
  for (int j = 0; j < nrel; j++) op->iv.id[j] = -1;
  op->iv.ts_out = op->iv.dur_out = -1;
  op->iv.close_col = -1;
  op->iv.gid_out = op->iv.bucket_out = op->iv.origin = -1;   /* §9.2's (bind_reshape.c) */
  op->iv.within_col = -1;                                     /* §9.3's (bind_ivmatch.c) */
}

ir_op *ir_iv_agg_buffer(ir_binder *b, int pos, int ts, int dur, int id, int nkeys, const int *keys,
                        int na, const ir_agg *aggs) {
  int *cols = ir_alloc(b, sizeof(int) * ((size_t)(3 + nkeys + 2 * na) + 1));
  int n = 0;
  for (int q = 0; q < 3 + nkeys + 2 * na; q++) {
    int c = q == 0 ? ts : q == 1 ? dur : q == 2 ? id   /* id: for error messages only */
            : q < 3 + nkeys ? keys[q - 3]
            : q < 3 + nkeys + na ? aggs[q - 3 - nkeys].arg_col
                                 : aggs[q - 3 - nkeys - na].arg2_col;
    bool dup = c < 0;
    for (int i = 0; i < n && !dup; i++) dup = cols[i] == c;
    if (!dup) cols[n++] = c;
  }
  return ir_add_ivbuf(b, pos, n, cols);
}

ir_op *ir_iv_one_rel_op(ir_binder *b, ir_opkind kind, const fe_stage *st, ir_op *inbuf, int ts,
                        int dur, int *per, int id) {
  ir_op *op = ir_op_add(b, kind, st->pos);
  ir_iv_rel_arrays(b, op, 1, st->nper);
  op->iv.bufs[0] = inbuf;
  inbuf->ivbuf.user = op;
  op->iv.ts[0] = ts;
  op->iv.dur[0] = dur;
  op->iv.per[0] = per;
  op->iv.id[0] = id;
  return op;
}

/* The relation's bare integer `id` column when it has exactly one, else -1:
 * runtime errors name a bad row by it ("the row with id 7"). Quietly -1
 * otherwise: it only serves messages. */
int ir_iv_rel_id(ir_binder *b, ir_row row) {
  int col = -1;
  for (int i = 0; i < row.n; i++) {
    if (row.e[i].qonly || !ir_name_eq(row.e[i].name, "id")) continue;
    if (col >= 0 && col != row.e[i].col) return -1;
    col = row.e[i].col;
  }
  return col >= 0 && rt_type_is_int(b->p->cols[col].type) ? col : -1;
}

/* The alias a source binds: its AS name, else a table's name. */
const char *ir_iv_src_qual(const fe_source *s) {
  return s->alias.name ? s->alias.name : s->kind == SRC_NAME || s->kind == SRC_CALL ? s->name : NULL;
}

/* Bare ts and dur of the current row (integers) and its PER columns. */
int ir_iv_input_bounds(ir_binder *b, const fe_stage *st, int *ts, int *dur, int **per,
                        const char ***per_names) {
  const char *nm;
  if (!ir_resolve(b, NULL, "ts", st->pos, st->pos, ts, &nm) ||
      !ir_iv_check_bound(b, NULL, "ts", *ts, st->pos) ||
      !ir_resolve(b, NULL, "dur", st->pos, st->pos, dur, &nm) ||
      !ir_iv_check_bound(b, NULL, "dur", *dur, st->pos))
    return 0;
  *per = ir_alloc(b, sizeof(int) * ((size_t)st->nper + 1));
  *per_names = ir_alloc(b, sizeof(char *) * ((size_t)st->nper + 1));
  for (int q = 0; q < st->nper; q++)
    if (!ir_resolve(b, NULL, st->per[q].name, st->per[q].pos, st->per[q].pos, &(*per)[q],
                    &(*per_names)[q]))
      return 0;
  return 1;
}

/* ---- the operand of a stage (JOIN, FILL GAPS, …) ------------------------ */

/* Binds the operand source; finds its bounds (required) and PER columns
 * (missing ones are -1: JOIN requires all, FILL GAPS all or none). */
int ir_iv_bind_operand(ir_binder *b, const fe_stage *st, const char *what, ir_iv_operand *o) {
  const char *stage = b->stage;
  if (!ir_bind_source(b, st->src, stage)) return 0;
  b->stage = stage;
  o->row = b->row;
  o->qual = ir_iv_src_qual(st->src);
  const char *rel = o->qual ? o->qual : what;
  int pos = st->src->pos;
  if ((o->ts = ir_iv_rel_col(b, o->row, rel, "ts", pos)) < 0 ||
      (o->dur = ir_iv_rel_col(b, o->row, rel, "dur", pos)) < 0 ||
      !ir_iv_check_bound(b, rel, "ts", o->ts, pos) || !ir_iv_check_bound(b, rel, "dur", o->dur, pos))
    return 0;
  o->per = ir_alloc(b, sizeof(int) * ((size_t)st->nper + 1));
  o->nper_found = 0;
  for (int q = 0; q < st->nper; q++) {
    o->per[q] = ir_iv_find_bare(b, o->row, st->per[q].name, rel, pos);
    if (o->per[q] == -2) return 0;
    if (o->per[q] >= 0) o->nper_found++;
  }
  return 1;
}

int ir_iv_check_key_types(ir_binder *b, const fe_stage *st, const int *in, const int *op,
                           const char *rel) {
  for (int q = 0; q < st->nper; q++) {
    rt_type a = b->p->cols[in[q]].type, o = b->p->cols[op[q]].type;
    if (ir_iv_key_kind(a) != ir_iv_key_kind(o))
      return ir_fail(b, st->per[q].pos, "expected %s.%s to have the type of the input's %s, but it is %s and %s",
                     rel, st->per[q].name, st->per[q].name, rt_type_name(o), rt_type_name(a));
  }
  return 1;
}

/* The op of a two-relation stage (JOIN, FILL GAPS): relation 0 is the
 * stage's input (bounds ts/dur, PER columns per), relation 1 the operand
 * (its PER columns opper, NULL when it has none) under the name opname. */
ir_op *ir_iv_two_rel_op(ir_binder *b, ir_opkind kind, const fe_stage *st, ir_op *inbuf, int ts,
                         int dur, int *per, ir_op *opbuf, const ir_iv_operand *o, int *opper,
                         const char *opname) {
  ir_op *op = ir_op_add(b, kind, st->pos);
  ir_iv_rel_arrays(b, op, 2, st->nper);
  op->iv.bufs[0] = inbuf;
  op->iv.bufs[1] = opbuf;
  inbuf->ivbuf.user = opbuf->ivbuf.user = op;
  op->iv.ts[0] = ts;
  op->iv.dur[0] = dur;
  op->iv.per[0] = per;
  op->iv.ts[1] = o->ts;
  op->iv.dur[1] = o->dur;
  op->iv.per[1] = opper;
  op->iv.names[0] = NULL;
  op->iv.names[1] = opname;
  return op;
}

/* ---- the operands of a source (INTERSECTION OF, UNION OF) -------------- */

ir_op *ir_iv_bind_operands(ir_binder *b, const fe_source *src, const char *stage, ir_opkind kind,
                           ir_row **rows_out) {
  ir_plan *p = b->p;
  int k = src->nops, np = src->nper;
  const char **quals = ir_alloc(b, sizeof(char *) * (size_t)k);
  for (int j = 0; j < k; j++) {
    const fe_source *o = src->ops[j];
    quals[j] = ir_iv_src_qual(o);
    bool dup = !quals[j];
    for (int i = 0; i < j && !dup; i++) dup = ir_name_eq(quals[i], quals[j]);
    if (dup)
      return ir_fail(b, o->alias.name ? o->alias.pos : o->pos,
                     "expected a different alias for each relation"),
             NULL;
  }
  int *ts = ir_alloc(b, sizeof(int) * (size_t)k);
  int *dur = ir_alloc(b, sizeof(int) * (size_t)k);
  int **per = ir_alloc(b, sizeof(int *) * (size_t)k);
  ir_op **bufs = ir_alloc(b, sizeof(ir_op *) * (size_t)k);
  ir_row *rows = ir_alloc(b, sizeof(ir_row) * (size_t)k);
  for (int j = 0; j < k; j++) {
    const fe_source *o = src->ops[j];
    if (!ir_bind_source(b, o, stage)) return NULL;
    b->stage = stage;
    rows[j] = b->row;
    if ((ts[j] = ir_iv_rel_col(b, rows[j], quals[j], "ts", o->pos)) < 0 ||
        (dur[j] = ir_iv_rel_col(b, rows[j], quals[j], "dur", o->pos)) < 0 ||
        !ir_iv_check_bound(b, quals[j], "ts", ts[j], o->pos) ||
        !ir_iv_check_bound(b, quals[j], "dur", dur[j], o->pos))
      return NULL;
    per[j] = ir_alloc(b, sizeof(int) * ((size_t)np + 1));
    for (int q = 0; q < np; q++) {
      if ((per[j][q] = ir_iv_rel_col(b, rows[j], quals[j], src->per[q].name, o->pos)) < 0) return NULL;
      if (j && ir_iv_key_kind(p->cols[per[j][q]].type) != ir_iv_key_kind(p->cols[per[0][q]].type))
        /* Perfetto's text, then which columns differ. */
        return ir_fail(b, src->per[q].pos,
                       "expected the PER columns to be the same in every operand, but %s.%s is "
                       "%s and %s.%s is %s",
                       quals[j], src->per[q].name, rt_type_name(p->cols[per[j][q]].type),
                       quals[0], src->per[q].name, rt_type_name(p->cols[per[0][q]].type)),
               NULL;
    }
    int *cols;
    int n = ir_iv_row_cols(b, rows[j], &cols);
    bufs[j] = ir_add_ivbuf(b, o->pos, n, cols);
  }
  ir_op *op = ir_op_add(b, kind, src->pos);
  ir_iv_rel_arrays(b, op, k, np);
  for (int j = 0; j < k; j++) {
    op->iv.bufs[j] = bufs[j];
    bufs[j]->ivbuf.user = op;
    op->iv.ts[j] = ts[j];
    op->iv.dur[j] = dur[j];
    op->iv.per[j] = per[j];
    op->iv.names[j] = quals[j];
    op->iv.id[j] = ir_iv_rel_id(b, rows[j]);
  }
  *rows_out = rows;
  return op;
}

/* How a stage's relationship reads in the runtime (INTERVAL JOIN, KEEP
 * IF, DROP IF). */
int ir_iv_rt_rel(fe_joinrel rel) {
  static const rt_ijrel rels[] = {
      [JR_OVERLAPPING_BOUNDS] = RT_IJ_OVERLAPPING, [JR_COVERING_BEGIN] = RT_IJ_COVERING_BEGIN,
      [JR_COVERING_END] = RT_IJ_COVERING_END,      [JR_COVERING_BOUNDS] = RT_IJ_COVERING_BOUNDS,
      [JR_WITHIN_BOUNDS] = RT_IJ_WITHIN,
  };
  return (int)rels[rel];
}

int ir_iv_bind_keyed_operand(ir_binder *b, const fe_stage *st, const int *per, ir_iv_operand *o) {
  if (!ir_iv_bind_operand(b, st, "the operand", o)) return 0;
  const char *rel = o->qual ? o->qual : "the operand";
  for (int q = 0; q < st->nper; q++)
    if (o->per[q] < 0) return ir_fail(b, st->src->pos, "expected %s to have a %s column", rel, st->per[q].name);
  return ir_iv_check_key_types(b, st, per, o->per, rel);
}

void ir_iv_join_row(ir_binder *b, const ir_rowsave *in, const ir_iv_operand *o) {
  ir_rowb rb = {0};
  for (int i = 0; i < in->row.n; i++)
    ir_rowb_add(b, &rb, in->row.e[i].name, in->row.e[i].col, in->row.e[i].qonly);
  for (int i = 0; i < o->row.n; i++) ir_rowb_add(b, &rb, o->row.e[i].name, o->row.e[i].col, true);
  b->row = ir_rowb_done(&rb);
  /* The input's aliases stay; the operand's alias joins them (replacing
   * one of the same name). */
  ir_alias *al = ir_alloc(b, sizeof(ir_alias) * ((size_t)in->naliases + 1));
  int na = 0;
  for (int i = 0; i < in->naliases; i++)
    if (!o->qual || !ir_name_eq(in->aliases[i].name, o->qual)) al[na++] = in->aliases[i];
  if (o->qual) al[na++] = (ir_alias){o->qual, o->row};
  b->naliases = na;
  b->aliases = al;
}

/* An IV_BUFFER of every column of the current row, then the nmore
 * columns of more (-1 and columns already in it skipped): an interval
 * stage's input, with what the stage computes on it per row. */
ir_op *ir_iv_input_buffer(ir_binder *b, const fe_stage *st, int nmore, const int *more) {
  int *cols;
  int n = ir_row_all_cols(b, &cols);
  int *all = ir_alloc(b, sizeof(int) * ((size_t)n + (size_t)nmore + 1));
  memcpy(all, cols, sizeof(int) * (size_t)n);
  for (int k = 0; k < nmore; k++) {
    bool dup = more[k] < 0;
    for (int i = 0; i < n && !dup; i++) dup = all[i] == more[k];
    if (!dup) all[n++] = more[k];
  }
  return ir_add_ivbuf(b, st->pos, n, all);
}
