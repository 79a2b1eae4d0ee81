/*
 * bind_tshape.c — binds the §9.4 tree operators (LANGUAGE.md §9.4) into one
 * TREE_SHAPE source (plan.h, struct ir_tshape): TREE KEEP / DROP IF
 * (DESCENDANT | ANCESTOR) OF rel [OVER t], TREE PRUNE AT rel, TREE
 * CONTRACT / ABSORB AT rel AGGREGATE …, TREE REPARENT TO NEAREST ANCESTOR
 * IN rel [OVER t], TREE MERGE SIBLINGS BY cols [ORDERED] AGGREGATE … and
 * TREE MERGE INTO PARENT BY cols AGGREGATE ….
 *
 * The input ends in an IV_BUFFER (everything reachable, and the
 * aggregates' arguments; live.c trims it to what is read), then the node
 * set and the OVER tree are bound inline like FROM (…) subpipelines, each
 * ending in its own IV_BUFFER, and the source comes after the last one.
 *
 * Ids are as in TREE ACCUMULATE: bare `id` and `parent_id`, integers or
 * strings, one kind for both (and for the node set's ids and the OVER
 * tree's). The output of every form but MERGE SIBLINGS keeps the input's
 * columns and aliases, with `parent_id` (bare) replaced by the new parent;
 * an aggregate named like a bare column replaces it, else is appended.
 * MERGE SIBLINGS' row is id, parent_id, the BY columns, the aggregates
 * (aliases cleared, as AGGREGATE's). Aggregates take what aggs.def's
 * LIST column allows (the aggregate list of §9) and follow AGGREGATE's
 * NULL rule: NULLs are skipped, all NULL gives NULL.
 */
#include "runtime/tree/tshape.h"
#include "bind.h"

static int tshape_kind(const fe_stage *st) {
  switch (st->kind) {
  case ST_TREE_KEEP: return st->tmode == TM_ANCESTOR ? RT_TS_KEEP_ANC : RT_TS_KEEP_DESC;
  case ST_TREE_DROP: return st->tmode == TM_ANCESTOR ? RT_TS_DROP_ANC : RT_TS_DROP_DESC;
  case ST_TREE_PRUNE: return RT_TS_PRUNE;
  case ST_TREE_CONTRACT: return RT_TS_CONTRACT;
  case ST_TREE_ABSORB: return RT_TS_ABSORB;
  case ST_TREE_REPARENT: return RT_TS_REPARENT;
  default: return st->tmode == TM_SIBLINGS ? RT_TS_MERGE_SIBLINGS : RT_TS_MERGE_INTO;
  }
}

/* 0 integer, 1 string (ids); -1 a double. */
static int id_kind(rt_type t) { return t == RT_F64 ? -1 : t == RT_STR ? 1 : 0; }

static const char *kind_word(int k) { return k ? "a string" : "an integer"; }

/* The bare column `name` of the current row, -1 when it has none (0 with
 * the error set when it is ambiguous: returned as -2). */
static int bare_col(ir_binder *b, const char *name, const char *rel, int pos) {
  int col;
  const char *nm;
  int r = ir_lookup(b, b->row, true, NULL, name, rel, pos, &col, &nm);
  return r > 0 ? col : r == 0 ? -1 : -2;
}

/* The id column of a node set: its bare `id`, else its only column. */
static int set_col(ir_binder *b, const fe_source *src, int want) {
  int c = bare_col(b, "id", "the node set", src->pos);
  if (c == -2) return -1;
  if (c < 0) {
    int n = 0;
    for (int i = 0; i < b->row.n; i++)
      if (!b->row.e[i].qonly) n++, c = b->row.e[i].col;
    if (n != 1)
      return ir_fail(b, src->pos, "expected the node set to have an id column, or exactly one column"), -1;
  }
  int k = id_kind(b->p->cols[c].type);
  if (k != want)
    return ir_fail(b, src->pos, "expected the node set's ids to be %s, as the tree's are, but they are %s",
                   want ? "strings" : "integers", k < 0 ? "doubles" : k ? "strings" : "integers"), -1;
  return c;
}

/* The OVER tree's id and parent_id. */
static int over_cols(ir_binder *b, const fe_source *src, int want, int *id, int *parent) {
  *id = bare_col(b, "id", "the OVER tree", src->pos);
  *parent = *id == -2 ? -2 : bare_col(b, "parent_id", "the OVER tree", src->pos);
  if (*id == -2 || *parent == -2) return 0;
  if (*id < 0 || *parent < 0)
    return ir_fail(b, src->pos, "expected the OVER tree to have id and parent_id columns");
  int ki = id_kind(b->p->cols[*id].type), kp = id_kind(b->p->cols[*parent].type);
  if (ki != want || kp != want)
    return ir_fail(b, src->pos, "expected the OVER tree's id and parent_id to be %s, as the input's ids are",
                   want ? "strings" : "integers");
  return 1;
}

int ir_bind_tshape(ir_binder *b, const fe_stage *st) {
  ir_plan *p = b->p;
  int kind = tshape_kind(st);
  if (st->kind == ST_TREE_MERGE)
    b->stage = kind == RT_TS_MERGE_SIBLINGS ? "TREE MERGE SIBLINGS" : "TREE MERGE INTO PARENT";
  const char *stage = b->stage;
  bool siblings = kind == RT_TS_MERGE_SIBLINGS;
  int idc, pc = -1;
  const char *nm;
  if (!ir_resolve(b, NULL, "id", st->pos, st->pos, &idc, &nm)) return 0;
  if (!st->over && !ir_resolve(b, NULL, "parent_id", st->pos, st->pos, &pc, &nm)) return 0;
  if (st->over && (pc = bare_col(b, "parent_id", NULL, st->pos)) == -2) return 0;
  int ik = id_kind(p->cols[idc].type), pk = pc >= 0 ? id_kind(p->cols[pc].type) : ik;
  if (ik < 0 || pk < 0)
    return ir_fail(b, st->pos, "expected id and parent_id to be integers or strings, but %s is a double",
                   ik < 0 ? "id" : "parent_id");
  if (ik != pk)
    return ir_fail(b, st->pos, "expected id and parent_id of the same type, but id is %s and parent_id is %s",
                   kind_word(ik), kind_word(pk));
  int *by = ir_alloc(b, sizeof(int) * ((size_t)st->nby + 1));
  const char **bynames = ir_alloc(b, sizeof(char *) * ((size_t)st->nby + 1));
  for (int q = 0; q < st->nby; q++)
    if (!ir_resolve(b, NULL, st->by[q].name, st->by[q].pos, st->by[q].pos, &by[q], &bynames[q]))
      return 0;
  int na = st->nitems;
  ir_agglist l;
  /* Every output row has rows of its own: typed as a grouped AGGREGATE's. */
  if (!ir_bind_agg_list(b, st, IR_AGG_IN_LIST, NULL, 1, &l)) return 0;
  ir_agg *aggs = l.aggs;
  /* Output names: an aggregate may not take the tree's own columns, nor
   * (MERGE SIBLINGS) a BY column's name, and each is given once. */
  int nout = (siblings ? 2 + st->nby : 0) + na;
  const char **onames = ir_alloc(b, sizeof(char *) * ((size_t)nout + 1));
  int *opos = ir_alloc(b, sizeof(int) * ((size_t)nout + 1));
  int no = 0;
  if (siblings) {
    onames[no] = "id", opos[no++] = st->pos;
    onames[no] = "parent_id", opos[no++] = st->pos;
    for (int q = 0; q < st->nby; q++) onames[no] = bynames[q], opos[no++] = st->by[q].pos;
  }
  for (int i = 0; i < na; i++) {
    if (!siblings && (ir_name_eq(st->items[i].name, "id") || ir_name_eq(st->items[i].name, "parent_id")))
      return ir_fail(b, st->items[i].namepos, "expected an aggregate name other than id and parent_id");
    onames[no] = st->items[i].name, opos[no++] = st->items[i].namepos;
  }
  if (!ir_check_output_names(b, no, onames, opos)) return 0;

  /* The input's buffer: everything reachable and the aggregates'
   * arguments (a computed one is in no row). */
  ir_rowsave in = ir_row_save(b);
  int *all;
  int n = ir_row_all_cols(b, &all);
  int *carry = ir_alloc(b, sizeof(int) * ((size_t)n + 2 * (size_t)na + 1));
  memcpy(carry, all, sizeof(int) * (size_t)n);
  for (int i = 0; i < na; i++) {
    int c2[2] = {aggs[i].arg_col, aggs[i].arg2_col};
    for (int j = 0; j < 2; j++) {
      bool have = c2[j] < 0;
      for (int k = 0; k < n && !have; k++) have = carry[k] == c2[j];
      if (!have) carry[n++] = c2[j];
    }
  }
  ir_op *in_buf = ir_add_ivbuf(b, st->pos, n, carry);
  ir_op *set_buf = NULL, *over_buf = NULL;
  int sc = -1, oid = -1, opar = -1;
  if (st->src) {
    if (!ir_bind_source(b, st->src, stage)) return 0;
    b->stage = stage;
    if ((sc = set_col(b, st->src, ik)) < 0) return 0;
    int *c = ir_alloc(b, sizeof(int));
    c[0] = sc;
    set_buf = ir_add_ivbuf(b, st->src->pos, 1, c);
  }
  if (st->over) {
    if (!ir_bind_source(b, st->over, stage)) return 0;
    b->stage = stage;
    if (!over_cols(b, st->over, ik, &oid, &opar)) return 0;
    int *c = ir_alloc(b, sizeof(int) * 2);
    c[0] = oid, c[1] = opar;
    over_buf = ir_add_ivbuf(b, st->over->pos, 2, c);
  }

  ir_op *op = ir_op_add(b, IR_TREE_SHAPE, st->pos);
  struct ir_tshape *ts = &op->tshape;
  ts->kind = kind;
  ts->ordered = st->ordered;
  ts->in_buf = in_buf;
  ts->set_buf = set_buf;
  ts->over_buf = over_buf;
  in_buf->ivbuf.user = op;
  if (set_buf) set_buf->ivbuf.user = op;
  if (over_buf) over_buf->ivbuf.user = op;
  ts->id_col = idc;
  ts->parent_col = pc;
  ts->set_col = sc;
  ts->over_id = oid;
  ts->over_parent = opar;
  ts->nby = st->nby;
  ts->by = by;
  ts->naggs = na;
  ts->aggs = aggs;
  ts->id_out = -1;

  ir_rowb rb = {0};
  if (siblings) {
    ts->id_out = ir_col_new(p, "id", RT_I64, false);
    ts->parent_out = ir_col_new(p, "parent_id", RT_I64, true);
    ir_rowb_add(b, &rb, "id", ts->id_out, false);
    ir_rowb_add(b, &rb, "parent_id", ts->parent_out, false);
    for (int q = 0; q < st->nby; q++) ir_rowb_add(b, &rb, bynames[q], by[q], false);
    ir_agg_outputs(b, st, &l, &rb);
    b->row = ir_rowb_done(&rb);
    ir_alias_set_one(b, NULL, b->row);
    return 1;
  }
  ts->parent_out = ir_col_new(p, "parent_id", ik ? RT_STR : RT_I64, true);
  ir_agg_outputs(b, st, &l, NULL);
  bool have_parent = false;
  bool *placed = ir_alloc(b, (size_t)na + 1);
  for (int i = 0; i < in.row.n; i++) {
    const ir_entry *e = &in.row.e[i];
    int col = e->col;
    if (!e->qonly && col == pc && ir_name_eq(e->name, "parent_id")) {
      col = ts->parent_out;
      have_parent = true;
    }
    for (int a = 0; a < na && !e->qonly; a++)
      if (ir_name_eq(e->name, st->items[a].name)) col = aggs[a].out_col, placed[a] = true;
    ir_rowb_add(b, &rb, e->name, col, e->qonly);
  }
  if (!have_parent) ir_rowb_add(b, &rb, "parent_id", ts->parent_out, false);
  for (int a = 0; a < na; a++)
    if (!placed[a]) ir_rowb_add(b, &rb, st->items[a].name, aggs[a].out_col, false);
  in.row = ir_rowb_done(&rb);
  ir_row_restore(b, &in);   /* aliases keep the values they had */
  return 1;
}
