/*
 * bind_interval.c — binds the INTERVAL operators (LANGUAGE.md §3, §4):
 * INTERVAL INTERSECTION OF (a source), INTERVAL FLATTEN, [LEFT] INTERVAL
 * JOIN and INTERVAL FILL GAPS (stages).
 *
 * Each relation the operator reads (an intersection operand, a join's
 * input and operand, …) ends in an IV_BUFFER sink carrying its columns;
 * the operator is the source op right after the last buffer (plan.h, the
 * iv_ fields). Operands are bound inline like FROM (…) subpipelines, with
 * global column ids, so a WHERE inside an operand stays in the operand's
 * segment (the filter runs before anything is buffered) and live.c prunes
 * unread operand columns before they are buffered.
 *
 * Bounds (ts, dur) must be integers of any kind; PER columns may be
 * integers, doubles or strings, of one kind across relations.
 */
#include "runtime/interval/interval.h"
#include "bind.h"

/* ---- INTERVAL INTERSECTION OF ------------------------------------------- */

int ir_bind_isect(ir_binder *b, const fe_source *src) {
  static const char *const stage = "INTERVAL INTERSECTION OF";
  ir_plan *p = b->p;
  b->stage = stage;
  int k = src->nops, np = src->nper;
  if (k < 2) return ir_fail(b, src->pos, "expected at least two relations to intersect");
  ir_row *rows;
  ir_op *op = ir_iv_bind_operands(b, src, stage, IR_ISECT, &rows);
  if (!op) return 0;
  int **per = op->iv.per;
  const char **quals = op->iv.names;
  op->iv.ts_out = ir_col_new(p, "ts", RT_I64, false);
  op->iv.dur_out = ir_col_new(p, "dur", RT_I64, false);

  /* ts, dur bare; the first operand's PER columns bare too; every other
   * operand column only through its alias (or a star). */
  ir_rowb rb = {0};
  ir_rowb_add(b, &rb, "ts", op->iv.ts_out, false);
  ir_rowb_add(b, &rb, "dur", op->iv.dur_out, false);
  ir_alias *al = ir_alloc(b, sizeof(ir_alias) * (size_t)k);
  for (int j = 0; j < k; j++) {
    for (int i = 0; i < rows[j].n; i++) {
      bool bare = false;
      for (int q = 0; q < np && j == 0; q++)
        bare |= rows[j].e[i].col == per[0][q] && ir_name_eq(rows[j].e[i].name, src->per[q].name);
      ir_rowb_add(b, &rb, rows[j].e[i].name, rows[j].e[i].col, !bare);
    }
    al[j] = (ir_alias){quals[j], rows[j]};
  }
  b->row = ir_rowb_done(&rb);
  b->naliases = k;
  b->aliases = al;
  return 1;
}

/* ---- INTERVAL FLATTEN --------------------------------------------------- */

/* FLATTEN's aggregates (aggs.def's FLATTEN column) are typed as a grouped
 * AGGREGATE's: every segment has a covering row, so only NULL inputs make
 * them NULL. The one difference: ARG_MAX / ARG_MIN of a boolean value give
 * its integer (the sweep keeps values as integers, doubles or strings). */
static int bind_flat_aggs(ir_binder *b, const fe_stage *st, ir_agglist *l) {
  if (!ir_bind_agg_list(b, st, IR_AGG_IN_FLATTEN, NULL, 1, l)) return 0;
  for (int i = 0; i < st->nitems; i++)
    if (l->types[i] == RT_BOOL) l->types[i] = RT_I64;
  return 1;
}

int ir_bind_flatten(ir_binder *b, const fe_stage *st) {
  ir_plan *p = b->p;
  int ts, dur, *per;
  const char **pnames;
  if (!ir_iv_input_bounds(b, st, &ts, &dur, &per, &pnames)) return 0;
  int na = st->nitems;
  ir_agglist l;
  if (!bind_flat_aggs(b, st, &l)) return 0;
  ir_agg *aggs = l.aggs;
  /* The output row is ts, dur, the PER columns and the aggregates: one
   * name each, as AGGREGATE's. */
  int nout = 2 + st->nper + na;
  const char **onames = ir_alloc(b, sizeof(char *) * (size_t)nout);
  int *opos = ir_alloc(b, sizeof(int) * (size_t)nout);
  onames[0] = "ts", onames[1] = "dur", opos[0] = opos[1] = st->pos;
  for (int q = 0; q < st->nper; q++) onames[2 + q] = pnames[q], opos[2 + q] = st->per[q].pos;
  for (int i = 0; i < na; i++)
    onames[2 + st->nper + i] = st->items[i].name, opos[2 + st->nper + i] = st->items[i].namepos;
  if (!ir_check_output_names(b, nout, onames, opos)) return 0;
  /* The buffer holds what the sweep reads; nothing else survives. */
  int id = ir_iv_rel_id(b, b->row);
  ir_op *buf = ir_iv_agg_buffer(b, st->pos, ts, dur, id, st->nper, per, na, aggs);
  ir_op *op = ir_iv_one_rel_op(b, IR_FLATTEN, st, buf, ts, dur, per, id);
  op->iv.naggs = na;
  op->iv.aggs = aggs;
  op->iv.ts_out = ir_col_new(p, "ts", RT_I64, false);
  op->iv.dur_out = ir_col_new(p, "dur", RT_I64, false);
  ir_rowb rb = {0};
  ir_rowb_add(b, &rb, "ts", op->iv.ts_out, false);
  ir_rowb_add(b, &rb, "dur", op->iv.dur_out, false);
  for (int q = 0; q < st->nper; q++) ir_rowb_add(b, &rb, pnames[q], per[q], false);
  ir_agg_outputs(b, st, &l, &rb);
  b->row = ir_rowb_done(&rb);
  ir_alias_set_one(b, NULL, b->row);
  return 1;
}

/* ---- INTERVAL JOIN -------------------------------------------------------- */

int ir_bind_ijoin(ir_binder *b, const fe_stage *st) {
  ir_plan *p = b->p;
  int ts, dur, *per;
  const char **pnames;
  if (!ir_iv_input_bounds(b, st, &ts, &dur, &per, &pnames)) return 0;
  ir_rowsave in = ir_row_save(b);
  ir_op *inbuf = ir_iv_input_buffer(b, st, 0, NULL);

  ir_iv_operand o;
  if (!ir_iv_bind_keyed_operand(b, st, per, &o)) return 0;
  int *op_cols;
  int nop = ir_iv_row_cols(b, o.row, &op_cols);
  ir_op *opbuf = ir_add_ivbuf(b, st->src->pos, nop, op_cols);

  ir_op *op = ir_iv_two_rel_op(b, IR_IJOIN, st, inbuf, ts, dur, per, opbuf, &o, o.per, o.qual);
  op->iv.rel = ir_iv_rt_rel(st->rel);
  op->iv.left = st->left;
  /* LEFT: an unmatched row reads the operand's columns as NULL. */
  if (st->left)
    for (int i = 0; i < nop; i++) p->cols[op_cols[i]].nullable = true;

  ir_iv_join_row(b, &in, &o);
  return 1;
}

/* ---- INTERVAL FILL GAPS ---------------------------------------------------- */

static bool has_name(ir_row row, const char *name) {
  for (int i = 0; i < row.n; i++)
    if (!row.e[i].qonly && ir_name_eq(row.e[i].name, name)) return true;
  return false;
}

int ir_bind_fillgaps(ir_binder *b, const fe_stage *st) {
  ir_plan *p = b->p;
  /* FILL WITHIN (§9.2): fillers carry their bounds and lane, every other
   * column NULL, and the background adds no column */
  if (st->within) b->stage = "INTERVAL FILL WITHIN";
  int ts, dur, *per;
  const char **pnames;
  if (!ir_iv_input_bounds(b, st, &ts, &dur, &per, &pnames)) return 0;
  /* The output keeps the input's bare columns (aliases are cleared). */
  ir_rowb inb = {0};
  for (int i = 0; i < b->row.n; i++)
    if (!b->row.e[i].qonly) ir_rowb_add(b, &inb, b->row.e[i].name, b->row.e[i].col, false);
  ir_row in_row = ir_rowb_done(&inb);
  int *in_cols;
  int nin = ir_iv_row_cols(b, in_row, &in_cols);
  ir_op *inbuf = ir_add_ivbuf(b, st->pos, nin, in_cols);

  ir_iv_operand o;
  if (!ir_iv_bind_operand(b, st, "the background", &o)) return 0;
  if (o.nper_found != 0 && o.nper_found != st->nper)
    return ir_fail(b, st->src->pos, "expected the background to have every PER column or none");
  bool bg_per = st->nper > 0 && o.nper_found == st->nper;
  if (bg_per && !ir_iv_check_key_types(b, st, per, o.per, o.qual ? o.qual : "the background")) return 0;
  int *bg_cols;
  int nbg = ir_iv_row_cols(b, o.row, &bg_cols);
  ir_op *bgbuf = ir_add_ivbuf(b, st->src->pos, nbg, bg_cols);

  ir_op *op = ir_iv_two_rel_op(b, IR_FILLGAPS, st, inbuf, ts, dur, per, bgbuf, &o,
                         bg_per ? o.per : NULL, o.qual ? o.qual : "background");
  op->iv.id[1] = ir_iv_rel_id(b, o.row);   /* a negative background bound names its row */

  int max = in_row.n + o.row.n + 1;
  op->iv.out_cols = ir_alloc(b, sizeof(int) * (size_t)max);
  op->iv.from_in = ir_alloc(b, sizeof(int) * (size_t)max);
  op->iv.from_bg = ir_alloc(b, sizeof(int) * (size_t)max);
  op->iv.fill_kind = ir_alloc(b, sizeof(int) * (size_t)max);
  op->iv.fill_key = ir_alloc(b, sizeof(int) * (size_t)max);
  ir_rowb rb = {0};
  int n = 0;
  for (int i = 0; i < in_row.n; i++) {
    const ir_entry *e = &in_row.e[i];
    const ir_col *ic = &p->cols[e->col];
    int kind = e->col == ts ? 1 : e->col == dur ? 2 : 0, key = -1;
    for (int q = 0; q < st->nper && !kind; q++)
      if (e->col == per[q]) kind = 3, key = q;
    int from_bg = -1;
    bool nullable = ic->nullable;
    if (kind == 0 && st->within) {
      nullable = true;
    } else if (kind == 0) {
      from_bg = ir_iv_find_bare(b, o.row, e->name, "the background", st->src->pos);
      if (from_bg == -2) return 0;
      if (from_bg >= 0 && ir_iv_key_kind(p->cols[from_bg].type) != ir_iv_key_kind(ic->type))
        return ir_fail(b, st->src->pos,
                       "expected the background's %s to have the same type as the input's, but "
                       "it is %s and the input's is %s",
                       e->name, rt_type_name(p->cols[from_bg].type), rt_type_name(ic->type));
      nullable |= from_bg < 0 || p->cols[from_bg].nullable;
    } else if (kind == 3 && bg_per) {
      nullable |= p->cols[o.per[key]].nullable;
    }
    rt_type t = ic->type == RT_F64 || ic->type == RT_STR || ic->type == RT_BOOL ? ic->type : RT_I64;
    op->iv.out_cols[n] = ir_col_new(p, e->name, t, nullable);
    op->iv.from_in[n] = e->col;
    op->iv.from_bg[n] = from_bg;
    op->iv.fill_kind[n] = kind;
    op->iv.fill_key[n] = key;
    ir_rowb_add(b, &rb, e->name, op->iv.out_cols[n], false);
    n++;
  }
  op->iv.within = st->within;
  /* The background's other columns, NULL on input rows. */
  for (int i = 0; i < o.row.n && !st->within; i++) {
    const ir_entry *e = &o.row.e[i];
    bool other = e->col != o.ts && e->col != o.dur && !has_name(in_row, e->name);
    for (int q = 0; q < st->nper && other; q++) other = !ir_name_eq(e->name, st->per[q].name);
    for (int k = 0; k < i && other; k++) other = !ir_name_eq(o.row.e[k].name, e->name);
    if (!other || e->qonly) continue;
    rt_type bt = p->cols[e->col].type;
    rt_type t = bt == RT_F64 || bt == RT_STR || bt == RT_BOOL ? bt : RT_I64;
    op->iv.out_cols[n] = ir_col_new(p, e->name, t, true);
    op->iv.from_in[n] = -1;
    op->iv.from_bg[n] = e->col;
    op->iv.fill_kind[n] = 0;
    op->iv.fill_key[n] = -1;
    ir_rowb_add(b, &rb, e->name, op->iv.out_cols[n], false);
    n++;
  }
  op->iv.nscan = n;
  b->row = ir_rowb_done(&rb);
  ir_alias_set_one(b, NULL, b->row);
  return 1;
}
