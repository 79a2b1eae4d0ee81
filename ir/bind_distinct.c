/*
 * bind_distinct.c — binds `|> DISTINCT` (LANGUAGE.md §8): the first row of
 * each set of equal rows, NULL equal to NULL, in first-seen order, aliases
 * kept.
 *
 * It is an AGGREGATE grouped by every column of the row (AGGREGATE's
 * groups are in first-seen order and NULL keys group together, exactly
 * DISTINCT's rule), with no aggregates; the row and every alias snapshot
 * are remapped to the group columns. A column only an alias still sees
 * (`|> AS q |> DROP x |> DISTINCT`, then `q.x`) is not part of the
 * comparison: it comes through ANY_VALUE (the first non-NULL value of its
 * set).
 */
#include "bind.h"

static rt_type widen(rt_type t) {
  return t == RT_F64 || t == RT_STR || t == RT_BOOL ? t : RT_I64;
}

int ir_bind_distinct(ir_binder *b, const fe_stage *st) {
  ir_plan *p = b->p;
  int nmax = p->ncols + 1;
  int *map = ir_alloc(b, sizeof(int) * (size_t)nmax);
  for (int c = 0; c < nmax; c++) map[c] = -1;
  /* the row's columns, once each, in row order */
  int *gcols = ir_alloc(b, sizeof(int) * ((size_t)b->row.n + 1));
  int ng = 0;
  for (int i = 0; i < b->row.n; i++) {
    int c = b->row.e[i].col;
    if (map[c] == -2) continue;
    map[c] = -2;
    gcols[ng++] = c;
  }
  /* columns only aliases see */
  int nextra = 0;
  int *extra = ir_alloc(b, sizeof(int) * (size_t)nmax);
  for (int a = 0; a < b->naliases; a++)
    for (int i = 0; i < b->aliases[a].row.n; i++) {
      int c = b->aliases[a].row.e[i].col;
      if (map[c] != -1) continue;
      map[c] = -3;
      extra[nextra++] = c;
    }
  ir_agg *aggs = ir_alloc(b, sizeof(ir_agg) * ((size_t)nextra + 1));
  ir_op *op = ir_op_add(b, IR_AGGREGATE, st->pos);
  op->agg.ngroup = ng;
  op->agg.group_cols = gcols;
  op->agg.group_out = ir_alloc(b, sizeof(int) * ((size_t)ng + 1));
  op->agg.naggs = nextra;
  op->agg.aggs = aggs;
  for (int i = 0; i < ng; i++) {
    const ir_col *in = &p->cols[gcols[i]];
    int out = ir_col_new(p, in->name, widen(in->type), in->nullable);
    p->cols[out].untyped = p->cols[gcols[i]].untyped;
    op->agg.group_out[i] = out;
    map[gcols[i]] = out;
  }
  for (int i = 0; i < nextra; i++) {
    const ir_col *in = &p->cols[extra[i]];
    aggs[i] = (ir_agg){.kind = RT_AGG_ANY_VALUE, .arg_col = extra[i], .arg_type = in->type,
                       .live = true};
    aggs[i].out_col = ir_col_new(p, in->name, ir_agg_out_type(RT_AGG_ANY_VALUE, in->type, false), true);
    p->cols[aggs[i].out_col].untyped = in->untyped;
    map[extra[i]] = aggs[i].out_col;
  }
  /* the row and the aliases, over the new columns */
  ir_rowb rb = {0};
  for (int i = 0; i < b->row.n; i++)
    ir_rowb_add(b, &rb, b->row.e[i].name, map[b->row.e[i].col], b->row.e[i].qonly);
  ir_row row = ir_rowb_done(&rb);
  ir_alias *al = ir_alloc(b, sizeof(ir_alias) * ((size_t)b->naliases + 1));
  for (int a = 0; a < b->naliases; a++) {
    ir_rowb ab = {0};
    const ir_row *r = &b->aliases[a].row;
    for (int i = 0; i < r->n; i++) ir_rowb_add(b, &ab, r->e[i].name, map[r->e[i].col], r->e[i].qonly);
    al[a] = (ir_alias){b->aliases[a].name, ir_rowb_done(&ab)};
  }
  b->row = row;
  b->aliases = al;
  return 1;
}
