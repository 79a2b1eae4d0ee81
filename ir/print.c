/*
 * print.c — the plan as text (`--dump plan`, pj_query_plan). Tests compare
 * it, so the format is stable:
 *
 *   segment 0: scan table slice [ts, dur, name]
 *     filter dur > 10
 *     compute d2 = dur * 2
 *     sort by d2 DESC; carry [ts, name, d2]
 *   segment 1: scan buffer of sort [ts, name, d2]
 *     limit 5
 *     output [ts, name AS n]
 *   live columns: ts int64, dur int64, name string (nullable), d2 int64
 *
 * TREE ACCUMULATE shows its three steps, the numbering's tier and what a
 * later stage reuses:
 *
 *   segment 0: scan table slice [id, dur, parent_id]
 *     tree number [id, parent_id] -> [__node, __parent_node]; tier: table row ids, no hashing
 *     tree order child-first for UP; carry [dur, __node, __parent_node]
 *   segment 1: scan buffer of tree order [dur, __node, __parent_node]
 *     tree accumulate UP t = sum(dur)
 *     tree accumulate UP c = count(*) (reuses the numbering and the ordering above)
 *
 * (or "tier decided at run time: identity until an id breaks density,
 * then hash" when the plan cannot prove the ids are row indices). When
 * the numbering is all of its segment, the order is made in place and the
 * table itself is read in tree order (plan.h tree.in_place):
 *
 *     tree order child-first for UP: table read backwards (parents precede
 *       children), checked at run time, else read through a child-list
 *       walk; nothing buffered                      (one line)
 *   segment 1: scan table slice in tree order [dur, __node, __parent_node]
 *
 * The INTERVAL operators: each relation is a segment of its own ending in
 * "interval buffer for <op>; carry [cols]" (only the columns read later:
 * the operand's pruned columns are missing from its scan too), and the
 * operator starts the next segment:
 *
 *   segment 2: interval intersection of s [ts, dur] per [cpu], f [ts#4, dur#5]
 *     per [cpu#6]; path decided at run time per partition: … -> [ts#9, dur#10, …]
 *
 * A scan lists exactly the columns it reads, which is how a user sees that
 * an unread column costs nothing. Columns print by name; a name shared by
 * several columns gets its id (`dur#7`). Expressions print in infix form
 * with parentheses around nested infix operators.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "plan.h"

static void put_col(const ir_plan *p, int c, rt_buf *out) {
  if (c < 0 || c >= p->ncols) {
    rt_buf_printf(out, "#%d", c);
    return;
  }
  const char *name = p->cols[c].name;
  bool shared = p->cols[c].shared_name;
  for (int i = 0; !p->names_marked && i < p->ncols && !shared; i++)
    shared = i != c && !strcmp(p->cols[i].name, name);
  /* Internal columns are named after their expression (`dur * 2` for an
   * ORDER BY key, `1` for COUNT(1)): quote names that are not plain
   * identifiers. */
  bool word = *name != 0 && !(*name >= '0' && *name <= '9');
  for (const char *s = name; *s; s++)
    word &= (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
            *s == '_' || *s == '$' || (unsigned char)*s >= 0x80;
  if (word) rt_buf_printf(out, "%s", name);
  else ir_sql_quote(out, name);
  if (shared) rt_buf_printf(out, "#%d", c);
}

typedef struct named_col { const char *name; int id; } named_col;

static int by_name(const void *a, const void *b) {
  const named_col *x = a, *y = b;
  int d = strcmp(x->name, y->name);
  return d ? d : (x->id > y->id) - (x->id < y->id);
}

void ir_mark_names(ir_plan *p) {
  named_col *v = malloc(sizeof *v * (size_t)(p->ncols ? p->ncols : 1));
  if (!v) return;   /* the printer searches instead */
  for (int i = 0; i < p->ncols; i++) v[i] = (named_col){p->cols[i].name, i};
  qsort(v, (size_t)p->ncols, sizeof *v, by_name);
  for (int i = 0; i + 1 < p->ncols; i++) {
    if (strcmp(v[i].name, v[i + 1].name)) continue;
    p->cols[v[i].id].shared_name = p->cols[v[i + 1].id].shared_name = true;
  }
  p->names_marked = true;
  free(v);
}

static void put_cols(const ir_plan *p, int n, const int *cols, rt_buf *out) {
  rt_buf_printf(out, "[");
  for (int i = 0; i < n; i++) {
    if (i) rt_buf_printf(out, ", ");
    put_col(p, cols[i], out);
  }
  rt_buf_printf(out, "]");
}

/* The live aggregates of an AGGREGATE, TREE_ACC or FLATTEN op:
 * `<lead>out = kind(arg), …`. */
static void put_aggs(const ir_plan *p, int naggs, const ir_agg *aggs, const char *lead,
                     rt_buf *out) {
  int n = 0;
  for (int i = 0; i < naggs; i++) {
    const ir_agg *a = &aggs[i];
    if (!a->live) continue;
    rt_buf_printf(out, "%s", n++ ? ", " : lead);
    put_col(p, a->out_col, out);
    rt_buf_printf(out, " = %s", ir_aggs[a->kind].printed);
    if (a->kind != RT_AGG_COUNT_STAR) {
      rt_buf_printf(out, "(");
      put_col(p, a->arg_col, out);
      if (a->arg2_col >= 0) {
        rt_buf_printf(out, ", ");
        put_col(p, a->arg2_col, out);
      }
      if (a->kind == RT_AGG_PERCENTILE) rt_buf_printf(out, ", %.17g", a->param);
      rt_buf_printf(out, ")");
    }
  }
}

static void put_bound(rt_winbound k, int64_t n, double d, bool real, rt_buf *out) {
  switch (k) {
  case RT_WB_UNBOUNDED_PRECEDING: rt_buf_printf(out, "UNBOUNDED PRECEDING"); break;
  case RT_WB_PRECEDING:
  case RT_WB_FOLLOWING:
    if (real) rt_buf_printf(out, "%.17g", d);
    else rt_buf_printf(out, "%lld", (long long)n);
    rt_buf_printf(out, k == RT_WB_PRECEDING ? " PRECEDING" : " FOLLOWING");
    break;
  case RT_WB_CURRENT: rt_buf_printf(out, "CURRENT ROW"); break;
  case RT_WB_UNBOUNDED_FOLLOWING: rt_buf_printf(out, "UNBOUNDED FOLLOWING"); break;
  }
}

/* A WINDOW op: each window (its one sort) and its live calls,
 *   window over (partition by k order by ts): prev = lag(ts), n = count(*) ROWS …; carry [...] */
static void put_window(const ir_plan *p, const ir_op *op, rt_buf *out) {
  rt_buf_printf(out, "window");
  int nw = 0;
  for (int s = 0; s < op->win.nspecs; s++) {
    const ir_winspec *sp = &op->win.specs[s];
    int n = 0;
    for (int i = 0; i < op->win.ncalls; i++) {
      const ir_wincall *c = &op->win.calls[i];
      if (!c->live || c->spec != s) continue;
      if (!n++) {
        rt_buf_printf(out, "%s over (", nw++ ? ";" : "");
        if (sp->npart) rt_buf_printf(out, "partition by ");
        for (int k = 0; k < sp->npart; k++) {
          if (k) rt_buf_printf(out, ", ");
          put_col(p, sp->part[k], out);
        }
        if (sp->norder) rt_buf_printf(out, "%sorder by ", sp->npart ? " " : "");
        for (int k = 0; k < sp->norder; k++) {
          const ir_sortkey *o = &sp->order[k];
          if (k) rt_buf_printf(out, ", ");
          put_col(p, o->col, out);
          if (o->desc) rt_buf_printf(out, " DESC");
          if (o->nulls_first == o->desc) rt_buf_printf(out, o->nulls_first ? " NULLS FIRST" : " NULLS LAST");
        }
        rt_buf_printf(out, "):");
      } else {
        rt_buf_printf(out, ",");
      }
      rt_buf_printf(out, " ");
      put_col(p, c->out_col, out);
      rt_buf_printf(out, " = %s(", ir_wins[c->fn].printed);
      int args[3] = {c->arg_col, c->n_col, c->dflt_col}, na = 0;
      for (int k = 0; k < 3; k++) {
        bool konst = k == 1 && args[k] < 0 &&
                     (c->fn == RT_WIN_NTILE || c->fn == RT_WIN_NTH_VALUE ||
                      ((c->fn == RT_WIN_LAG || c->fn == RT_WIN_LEAD) && (c->n != 1 || c->dflt_col >= 0)));
        if (konst) rt_buf_printf(out, "%s%lld", na++ ? ", " : "", (long long)c->n);
        if (args[k] < 0) continue;
        rt_buf_printf(out, "%s", na++ ? ", " : "");
        put_col(p, args[k], out);
      }
      rt_buf_printf(out, ")");
      if (c->framed && rt_win_uses_frame(c->fn)) {
        const rt_winframe *f = &c->frame;
        bool real = f->unit == RT_WU_RANGE && sp->norder == 1 && p->cols[sp->order[0].col].type == RT_F64;
        rt_buf_printf(out, " %s BETWEEN ",
                      f->unit == RT_WU_ROWS ? "ROWS" : f->unit == RT_WU_GROUPS ? "GROUPS" : "RANGE");
        put_bound(f->start, f->start_n, f->start_d, real, out);
        rt_buf_printf(out, " AND ");
        put_bound(f->end, f->end_n, f->end_d, real, out);
      }
    }
  }
  rt_buf_printf(out, "; carry ");
  put_cols(p, op->win.ncarry, op->win.carry, out);
}

static void put_sub(const ir_plan *p, const ir_expr *e, rt_buf *out) {
  ir_exform f = ir_ex_forms[e->kind];
  bool paren = f == IR_FORM_INFIX || f == IR_FORM_POSTFIX || f == IR_FORM_LIST;
  if (paren) rt_buf_printf(out, "(");
  ir_print_expr(p, e, out);
  if (paren) rt_buf_printf(out, ")");
}

/* Shortest text that reads back as the same double, always with a '.' or
 * exponent so it reads as a double. */
static void put_f64(double v, rt_buf *out) {
  char s[40];
  snprintf(s, sizeof s, "%.15g", v);
  if (strtod(s, NULL) != v) snprintf(s, sizeof s, "%.17g", v);
  rt_buf_printf(out, "%s", s);
  if (isfinite(v) && !strpbrk(s, ".e")) rt_buf_printf(out, ".0");
}

static void put_str(const ir_plan *p, uint32_t id, rt_buf *out) {
  size_t len = 0;
  const char *s = p->strings ? rt_str_get(p->strings, id, &len) : NULL;
  if (!s) {
    rt_buf_printf(out, "'#%u'", id);
    return;
  }
  rt_buf_printf(out, "'");
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '\'') rt_buf_printf(out, "''");
    else rt_buf_append(out, s + i, 1);
  }
  rt_buf_printf(out, "'");
}

static void put_const(const ir_plan *p, const ir_expr *e, rt_buf *out) {
  if (e->is_null) {
    rt_buf_printf(out, "NULL");
    return;
  }
  switch (e->type) {
  case RT_BOOL: rt_buf_printf(out, "%s", e->ival ? "TRUE" : "FALSE"); break;
  case RT_F64: put_f64(e->fval, out); break;
  case RT_STR: put_str(p, e->sval, out); break;
  default: rt_buf_printf(out, "%lld", (long long)e->ival); break;
  }
}

static void put_leaf(const ir_plan *p, const ir_expr *e, rt_buf *out) {
  if (e->kind == IX_CONST) {
    put_const(p, e, out);
  } else if (e->kind == IX_COL) {
    put_col(p, e->col, out);
  } else {
    const char *name = e->param >= 1 && e->param <= p->nparams ? p->params[e->param - 1].name : NULL;
    if (name) rt_buf_printf(out, "%s", name);
    else rt_buf_printf(out, "?%d", e->param);
  }
}

/* A subquery's callout (ir_subq) as it was written. */
static void put_subq(const ir_plan *p, const ir_expr *e, rt_buf *out) {
  const ir_subq *q = &p->subqs[p->callouts[e->ival].subq - 1];
  if (q->kind == IR_SUBQ_IN && e->nargs == 1) {
    put_sub(p, e->args[0], out);
    rt_buf_printf(out, " IN ");
  } else if (q->kind == IR_SUBQ_EXISTS) {
    rt_buf_printf(out, "EXISTS ");
  }
  rt_buf_printf(out, "(%s)", q->text);
}

static void put_call(const ir_plan *p, const ir_expr *e, rt_buf *out) {
  bool callout = e->kind == IX_CALLOUT && e->ival >= 0 && e->ival < p->ncallouts;
  if (callout && p->callouts[e->ival].subq > 0 && p->callouts[e->ival].subq <= p->nsubqs) {
    put_subq(p, e, out);
    return;
  }
  rt_buf_printf(out, "%s(", callout ? p->callouts[e->ival].name : ir_ex_names[e->kind]);
  for (int i = 0; i < e->nargs; i++) {
    if (i) rt_buf_printf(out, ", ");
    ir_print_expr(p, e->args[i], out);
  }
  rt_buf_printf(out, ")");
}

/* By the node's FORM (exprs.def): the spelling column is the operator, the
 * postfix test or the function name. */
void ir_print_expr(const ir_plan *p, const ir_expr *e, rt_buf *out) {
  const char *sp = ir_ex_names[e->kind];
  switch (ir_ex_forms[e->kind]) {
  case IR_FORM_LEAF: put_leaf(p, e, out); return;
  case IR_FORM_PREFIX:
    rt_buf_printf(out, "%s%s", sp, sp[0] >= 'A' && sp[0] <= 'Z' ? " " : "");   /* NOT x, -x */
    put_sub(p, e->args[0], out);
    return;
  case IR_FORM_POSTFIX:
    put_sub(p, e->args[0], out);
    rt_buf_printf(out, "%s", sp);
    return;
  case IR_FORM_INFIX:
    if (e->nargs != 2) break;
    put_sub(p, e->args[0], out);
    rt_buf_printf(out, " %s ", sp);
    put_sub(p, e->args[1], out);
    if (e->kind == IX_LIKE && e->ival) rt_buf_printf(out, " ESCAPE U+%04X", (unsigned)e->ival);
    return;
  case IR_FORM_LIST:
    put_sub(p, e->args[0], out);
    rt_buf_printf(out, " %s (", sp);
    for (int i = 1; i < e->nargs; i++) {
      if (i > 1) rt_buf_printf(out, ", ");
      ir_print_expr(p, e->args[i], out);
    }
    rt_buf_printf(out, ")");
    return;
  case IR_FORM_CASE:
    rt_buf_printf(out, "CASE");
    for (int i = 0; i + 1 < e->nargs; i += 2) {
      rt_buf_printf(out, " WHEN ");
      ir_print_expr(p, e->args[i], out);
      rt_buf_printf(out, " THEN ");
      ir_print_expr(p, e->args[i + 1], out);
    }
    rt_buf_printf(out, " ELSE ");
    ir_print_expr(p, e->args[e->nargs - 1], out);
    rt_buf_printf(out, " END");
    return;
  case IR_FORM_CALL: break;
  }
  put_call(p, e, out);
}

static const char *const k_ijrels[] = {"OVERLAPPING BOUNDS", "COVERING BEGIN", "COVERING END",
                                        "COVERING BOUNDS", "WITHIN BOUNDS"};

/* The relations of an interval source: `s [ts, dur] per [cpu]`. */
static void put_rels(const ir_plan *p, const ir_op *op, rt_buf *out) {
  for (int j = 0; j < op->iv.nrel; j++) {
    if (j) rt_buf_printf(out, ", ");
    if (op->iv.names && op->iv.names[j]) rt_buf_printf(out, "%s ", op->iv.names[j]);
    int b[2] = {op->iv.ts[j], op->iv.dur[j]};
    put_cols(p, 2, b, out);
    if (op->iv.nper && op->iv.per[j]) {
      rt_buf_printf(out, " per ");
      put_cols(p, op->iv.nper, op->iv.per[j], out);
    }
  }
}

/* INTERVALS FROM EVENTS' relations: `e [ts] per [track] stop s [ts] per
 * [track] closing at [close]`. */
static void put_events(const ir_plan *p, const ir_op *op, rt_buf *out) {
  for (int j = 0; j < op->iv.nrel; j++) {
    rt_buf_printf(out, "%s", j ? " stop " : "");
    if (op->iv.names && op->iv.names[j]) rt_buf_printf(out, "%s ", op->iv.names[j]);
    put_cols(p, 1, &op->iv.ts[j], out);
    if (op->iv.nper && op->iv.per[j]) {
      rt_buf_printf(out, " per ");
      put_cols(p, op->iv.nper, op->iv.per[j], out);
    }
  }
  if (op->iv.close_col >= 0) {
    rt_buf_printf(out, " closing last at ");
    put_cols(p, 1, &op->iv.close_col, out);
  } else {
    rt_buf_printf(out, " keeping last open");
  }
}

static void put_interval(const ir_plan *p, const ir_op *op, rt_buf *out) {
  switch (op->kind) {
  case IR_ISECT:
    rt_buf_printf(out, "interval intersection of ");
    put_rels(p, op, out);
    rt_buf_printf(out, "; path decided at run time per partition: all-disjoint sweep, streaming "
                       "sweep, or pairwise narrowing (linear sweep, binary search or interval tree "
                       "per step; streams past a cap) -> ");
    break;
  case IR_FLATTEN: {
    rt_buf_printf(out, "interval flatten ");
    put_rels(p, op, out);
    put_aggs(p, op->iv.naggs, op->iv.aggs, " aggregate ", out);
    rt_buf_printf(out, "; sort skipped at run time when already grouped and time-ordered -> ");
    break;
  }
  case IR_IJOIN:
    rt_buf_printf(out, "%sinterval join %s ", op->iv.left ? "left " : "",
                  op->iv.rel >= 0 && op->iv.rel < 5 ? k_ijrels[op->iv.rel] : "?");
    put_rels(p, op, out);
    rt_buf_printf(out, "; operand indexed per lane (binary search if disjoint, else interval "
                       "tree) -> ");
    break;
  case IR_FILLGAPS:
    rt_buf_printf(out, "interval fill %s ", op->iv.within ? "within" : "gaps");
    put_rels(p, op, out);
    rt_buf_printf(out, " -> ");
    break;
  case IR_IV_UNION:
    rt_buf_printf(out, "interval union of ");
    put_rels(p, op, out);
    rt_buf_printf(out, "; one sweep per lane, combinations changed at each instant -> ");
    break;
  case IR_IV_FIND:
    rt_buf_printf(out, "%sinterval find %s %s %s ", op->iv.left ? "left " : "",
                  op->iv.rel & IR_FIND_ENDING ? "ending" : "starting",
                  op->iv.rel & IR_FIND_BEFORE ? "before" : "after",
                  op->iv.rel & IR_FIND_END ? "end" : "begin");
    put_rels(p, op, out);
    if (op->iv.within_col >= 0) {
      rt_buf_printf(out, " within ");
      put_cols(p, 1, &op->iv.within_col, out);
    }
    rt_buf_printf(out, "; operand keys sorted per lane, binary search per row -> ");
    break;
  case IR_IV_KEEP:
    rt_buf_printf(out, "interval %s if %s ", op->iv.drop ? "drop" : "keep",
                  op->iv.rel >= 0 && op->iv.rel < 5 ? k_ijrels[op->iv.rel] : "?");
    put_rels(p, op, out);
    rt_buf_printf(out, "; operand merged into its union per lane, binary search per row -> ");
    break;
  case IR_IV_EVENTS:
    rt_buf_printf(out, "intervals from events ");
    put_events(p, op, out);
    rt_buf_printf(out, "; lanes laid out by counting sort, each sorted only when not in time "
                       "order -> ");
    break;
  /* §9.2 (bind_reshape.c) */
  case IR_SUBTRACT:
  case IR_SPLIT:
    rt_buf_printf(out, "%s ", ir_op_names[op->kind]);
    put_rels(p, op, out);
    rt_buf_printf(out, op->kind == IR_SUBTRACT
                           ? "; the operand's union per lane, cut out by binary search -> "
                           : "; the operand's boundaries per lane, covering rows by max-end tree -> ");
    break;
  case IR_QUANTIZE:
    rt_buf_printf(out, "interval quantize %lld ns aligned to ", (long long)op->iv.width);
    if (op->iv.origin >= 0) put_cols(p, 1, &op->iv.origin, out);
    else rt_buf_printf(out, op->iv.align == 1 ? "zero" : "the input's smallest ts");
    rt_buf_printf(out, " ");
    put_rels(p, op, out);
    rt_buf_printf(out, " -> ");
    break;
  case IR_SETBOUNDS:
    rt_buf_printf(out, "interval set bounds ");
    put_rels(p, op, out);
    rt_buf_printf(out, "; checked: no bound below zero -> ");
    break;
  case IR_IVMERGE:
    rt_buf_printf(out, "interval merge %s ", op->iv.nby ? "consecutive" : "overlapping");
    put_rels(p, op, out);
    if (op->iv.nby) {
      rt_buf_printf(out, " by ");
      put_cols(p, op->iv.nby, op->iv.by, out);
    }
    rt_buf_printf(out, "; rows by lane and time (sort skipped when ordered), merged interval "
                       "numbered per row for the aggregate after it -> ");
    break;
  case IR_SCAN_TABLE: case IR_SCAN_SQL: case IR_SCAN_BUF: case IR_SETOP: case IR_SCAN_FORK:
  case IR_GRAPH:
  case IR_TREE_SHAPE:
#define IR_CASE_STEP(name) case IR_##name:
#define IR_CASE_SINK(name) case IR_##name:
#define IR_CASE_BREAKER(name) case IR_##name:
#include "ir/op_cases.h"
  case IR__COUNT:
    rt_buf_printf(out, "%s -> ", ir_op_names[op->kind]);   /* not an interval source */
    break;
  }
}

/* A SQL stage's input: the plan of the pipeline before it, indented,
 * which SQLite reads as @input (bind_sql.c). */
static void put_sql_input(const ir_op *op, rt_buf *out) {
  const char *s = op->scan.input_plan;
  if (!s) {
    rt_buf_printf(out, "    @input: not read\n");
    return;
  }
  rt_buf_printf(out, "    @input: the pipeline before the stage, run once per run as a query of its own:\n");
  while (*s) {
    const char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) : strlen(s);
    rt_buf_printf(out, "    | %.*s\n", (int)n, s);
    s += n + (nl != NULL);
  }
}

/* `tree merge siblings by [name] aggregate sum(self) of input [id, parent_id]
 * (…) -> `, the words of the stage, then how it runs. */
static void put_tshape(const ir_plan *p, const ir_op *op, rt_buf *out) {
  static const char *const kinds[] = {
      "tree keep if descendant of", "tree keep if ancestor of", "tree drop if descendant of",
      "tree drop if ancestor of", "tree prune at", "tree contract at", "tree absorb at",
      "tree reparent to nearest ancestor in", "tree merge siblings", "tree merge into parent"};
  const struct ir_tshape *ts = &op->tshape;
  rt_buf_printf(out, "%s", ts->kind >= 0 && ts->kind < 10 ? kinds[ts->kind] : "tree ?");
  if (ts->set_col >= 0) {
    rt_buf_printf(out, " set ");
    put_cols(p, 1, &ts->set_col, out);
  }
  if (ts->nby) {
    rt_buf_printf(out, " by ");
    put_cols(p, ts->nby, ts->by, out);
    if (ts->ordered) rt_buf_printf(out, " ordered");
  }
  put_aggs(p, ts->naggs, ts->aggs, " aggregate ", out);
  int t[2] = {ts->over_buf ? ts->over_id : ts->id_col, ts->over_buf ? ts->over_parent : ts->parent_col};
  rt_buf_printf(out, " over %s ", ts->over_buf ? "the OVER tree" : "the input");
  put_cols(p, 2, t, out);
  rt_buf_printf(out, "; no sort when parents come first, no hash map when ids are 0, 1, 2, … -> ");
}

static void put_source(const ir_plan *p, const ir_op *op, rt_buf *out) {
  switch (op->kind) {
  case IR_SCAN_TABLE: rt_buf_printf(out, "scan table %s ", op->scan.table_name); break;
#define IR_CASE_IVSOURCE(name) case IR_##name:
#include "ir/op_cases.h"
    put_interval(p, op, out);
    break;
  case IR_SCAN_SQL:
    if (op->scan.sql_stage)
      rt_buf_printf(out, "sql stage (%s) ", op->scan.sql_stage);
    else
      rt_buf_printf(out, "scan sqlite %s ", op->scan.table_name ? op->scan.table_name : "(subquery)");
    break;
  case IR_SCAN_BUF:
    if (ir_tree_in_place(op->scan.buf_op) && op->scan.table_name)
      rt_buf_printf(out, "scan table %s in tree order ", op->scan.table_name);
    else if (op->scan.buf_op && op->scan.buf_op->kind == IR_FORK)
      rt_buf_printf(out, "scan buffer of fork %s (the stream goes on) ", op->scan.buf_op->fork.name);
    else
      rt_buf_printf(out, "scan buffer of %s ", op->scan.buf_op ? ir_op_names[op->scan.buf_op->kind] : "?");
    break;
  case IR_SCAN_FORK: {
    rt_buf_printf(out, "scan fork %s (its buffer, computed once) ", op->scan.table_name);
    bool renamed = false;
    for (int i = 0; i < op->scan.nscan && !renamed; i++) renamed = op->scan.table_cols[i] != op->scan.out_cols[i];
    if (renamed && op->scan.nscan) {
      rt_buf_printf(out, "reading ");
      put_cols(p, op->scan.nscan, op->scan.table_cols, out);
      rt_buf_printf(out, " as ");
    }
    break;
  }
  case IR_SETOP: {
    static const char *const kinds[] = {"union", "intersect", "except"};
    const struct ir_setop *so = &op->setop;
    rt_buf_printf(out, "%s %s of %d relations%s -> ", kinds[so->kind], so->all ? "all" : "distinct",
                  so->nrel, so->kind == IR_SET_UNION && so->all ? "" : " (whole rows hashed)");
    break;
  }
  case IR_GRAPH: {   /* §9.5 */
    static const char *const algos[] = {
        "dfs: seeds in ascending id, out-edges in ascending dst, preorder",
        "bfs: levels from the seeds, parent the smallest-id node of the level before, "
        "ascending id within a level",
        "dominator: immediate dominators under a virtual root above the seeds (Lengauer-Tarjan), "
        "preorder, children in ascending id"};
    const struct ir_graph *g = &op->graph;
    rt_buf_printf(out, "graph tree %s; nodes ", g->algo >= 0 && g->algo < 3 ? algos[g->algo] : "?");
    put_col(p, g->id_col, out);
    rt_buf_printf(out, ", edges ");
    put_col(p, g->src_col, out);
    rt_buf_printf(out, " -> ");
    put_col(p, g->dst_col, out);
    rt_buf_printf(out, ", seeds ");
    put_col(p, g->seed_col, out);
    rt_buf_printf(out, " -> ");
    break;
  }
  case IR_TREE_SHAPE: put_tshape(p, op, out); break;
#define IR_CASE_STEP(name) case IR_##name:
#define IR_CASE_SINK(name) case IR_##name:
#define IR_CASE_BREAKER(name) case IR_##name:
#include "ir/op_cases.h"
  case IR__COUNT:
    rt_buf_printf(out, "%s (not a source) ", ir_op_names[op->kind]);
    break;
  }
  int n;
  const int *served = ir_source_cols(op, &n);
  put_cols(p, n, served, out);
  rt_buf_printf(out, "\n");
  if (op->kind == IR_SCAN_SQL) rt_buf_printf(out, "    sql: %s\n", op->scan.sql);
  if (op->kind == IR_SCAN_SQL && op->scan.sql_stage) put_sql_input(op, out);
}

static void put_op(const ir_plan *p, const ir_op *op, rt_buf *out) {
  rt_buf_printf(out, "  ");
  switch (op->kind) {
  case IR_FILTER:
    rt_buf_printf(out, "filter ");
    ir_print_expr(p, op->filter.pred, out);
    break;
  case IR_COMPUTE:
    rt_buf_printf(out, "compute ");
    put_col(p, op->compute.out_col, out);
    rt_buf_printf(out, " = ");
    ir_print_expr(p, op->compute.expr, out);
    break;
  case IR_LIMIT:
    rt_buf_printf(out, "limit ");
    ir_print_expr(p, op->limit.count, out);
    if (op->limit.offset) {
      rt_buf_printf(out, " offset ");
      ir_print_expr(p, op->limit.offset, out);
    }
    break;
  case IR_SORT:
    rt_buf_printf(out, "sort by ");
    for (int i = 0; i < op->sort.nkeys; i++) {
      const ir_sortkey *k = &op->sort.keys[i];
      if (i) rt_buf_printf(out, ", ");
      put_col(p, k->col, out);
      if (k->desc) rt_buf_printf(out, " DESC");
      if (k->nulls_first == k->desc) rt_buf_printf(out, k->nulls_first ? " NULLS FIRST" : " NULLS LAST");
    }
    rt_buf_printf(out, "; carry ");
    put_cols(p, op->sort.ncarry, op->sort.carry, out);
    break;
  case IR_AGGREGATE: {
    rt_buf_printf(out, "aggregate");
    put_aggs(p, op->agg.naggs, op->agg.aggs, " ", out);
    if (op->agg.ngroup) {
      rt_buf_printf(out, " group by ");
      for (int i = 0; i < op->agg.ngroup; i++) {
        if (i) rt_buf_printf(out, ", ");
        put_col(p, op->agg.group_cols[i], out);
        if (strcmp(p->cols[op->agg.group_cols[i]].name, p->cols[op->agg.group_out[i]].name) ||
            op->agg.group_cols[i] == op->agg.group_out[i]) {
          rt_buf_printf(out, " AS ");
          put_col(p, op->agg.group_out[i], out);
        }
      }
    }
    break;
  }
  case IR_TREE_NUMBER: {
    int in[2] = {op->tree.id_col, op->tree.parent_col};
    int outc[2] = {op->tree.node_col, op->tree.pnode_col};
    rt_buf_printf(out, "tree number ");
    put_cols(p, 2, in, out);
    rt_buf_printf(out, " -> ");
    put_cols(p, 2, outc, out);
    rt_buf_printf(out, op->tree.tier == RT_TREE_TIER_TABLE
                           ? "; tier: table row ids, no hashing"
                           : "; tier decided at run time: identity until an id breaks density, "
                             "then hash");
    break;
  }
  case IR_TREE_ORDER:
    if (op->tree.in_place) {
      /* nothing buffered: the next segment reads the table (plan.h) */
      rt_buf_printf(out, "tree order %s: table read %s (parents precede children), checked at "
                         "run time, else read through a child-list walk; nothing buffered",
                    op->tree.up ? "child-first for UP" : "parent-first for DOWN",
                    op->tree.up ? "backwards" : "forwards");
      break;
    }
    rt_buf_printf(out, "tree order %s; carry ",
                  op->tree.up ? "child-first for UP" : "parent-first for DOWN, streaming");
    put_cols(p, op->tree.ncarry, op->tree.carry, out);
    break;
  case IR_TREE_ACC: {
    rt_buf_printf(out, "tree accumulate %s", op->tree.up ? "UP" : "DOWN");
    put_aggs(p, op->tree.naggs, op->tree.aggs, " ", out);
    if (op->tree.reuse_order) rt_buf_printf(out, " (reuses the numbering and the ordering above)");
    else if (op->tree.reuse_num) rt_buf_printf(out, " (reuses the numbering above)");
    break;
  }
  case IR_WINDOW: put_window(p, op, out); break;
  case IR_JOIN_BUILD:
    rt_buf_printf(out, "join build %s", op->join.name ? op->join.name : "(subquery)");
    if (op->join.nkeys) {
      rt_buf_printf(out, ": hash table on ");
      put_cols(p, op->join.nkeys, op->join.src_keys, out);
      rt_buf_printf(out, " (direct array when one integer key is dense, decided at run time)");
    } else {
      rt_buf_printf(out, ": every row, for a nested loop");
    }
    rt_buf_printf(out, "; carry ");
    put_cols(p, op->join.ncarry, op->join.carry, out);
    break;
  case IR_JOIN_PROBE: {
    static const char *const kinds[] = {"inner", "left", "right", "full", "cross"};
    const char *kn = op->join.kind >= 0 && op->join.kind < 5 ? kinds[op->join.kind] : "?";
    const char *nm = op->join.name ? op->join.name : "(subquery)";
    if (op->join.nkeys) {
      rt_buf_printf(out, "hash join %s %s: probe ", kn, nm);
      put_cols(p, op->join.nkeys, op->join.in_keys, out);
      rt_buf_printf(out, " = ");
      put_cols(p, op->join.nkeys, op->join.src_keys, out);
    } else {
      rt_buf_printf(out, "nested loop join %s %s (no equality to hash on)", kn, nm);
    }
    if (op->join.residual) {
      rt_buf_printf(out, op->join.nkeys ? "; then per match " : "; per pair ");
      ir_print_expr(p, op->join.residual, out);
    }
    if (op->join.build) {
      rt_buf_printf(out, "; serves ");
      put_cols(p, op->join.build->join.ncarry, op->join.build->join.carry, out);
    }
    break;
  }
  case IR_FORK:
    rt_buf_printf(out, "fork %s: buffer every row once; carry ", op->fork.name);
    put_cols(p, op->fork.ncarry, op->fork.carry, out);
    break;
  case IR_IV_BUFFER:
    rt_buf_printf(out, "%sbuffer for %s; carry ",
                  op->ivbuf.user && !ir_op_is_interval(op->ivbuf.user->kind) ? "" : "interval ",
                  op->ivbuf.user ? ir_op_names[op->ivbuf.user->kind] : "?");
    put_cols(p, op->ivbuf.ncarry, op->ivbuf.carry, out);
    break;
  case IR_OUTPUT:
    rt_buf_printf(out, "output [");
    for (int i = 0; i < op->output.nout; i++) {
      if (i) rt_buf_printf(out, ", ");
      put_col(p, op->output.out[i], out);
      if (op->output.out_names && strcmp(op->output.out_names[i], p->cols[op->output.out[i]].name))
        rt_buf_printf(out, " AS %s", op->output.out_names[i]);
    }
    rt_buf_printf(out, "]");
    break;
#define IR_CASE_SOURCE(name) case IR_##name:
#include "ir/op_cases.h"
  case IR__COUNT:
    put_source(p, op, out);
    return;
  }
  rt_buf_printf(out, "\n");
}

void ir_print(const ir_plan *p, rt_buf *out) {
  if (p->nsegs == 0) {
    /* Not segmented yet: the op list as bound. */
    for (int i = 0; i < p->nops; i++)
      if (!p->ops[i]->dead) put_op(p, p->ops[i], out);
  }
  for (int s = 0; s < p->nsegs; s++) {
    const ir_segment *seg = &p->segs[s];
    rt_buf_printf(out, "segment %d: ", s);
    put_source(p, seg->source, out);
    for (int i = 0; i < seg->nsteps; i++) put_op(p, seg->steps[i], out);
    if (seg->sink) put_op(p, seg->sink, out);
  }
  rt_buf_printf(out, "live columns:");
  int n = 0;
  for (int c = 0; c < p->ncols; c++) {
    if (!p->cols[c].live) continue;
    rt_buf_printf(out, n++ ? ", " : " ");
    put_col(p, c, out);
    rt_buf_printf(out, " %s%s", rt_type_name(p->cols[c].type), p->cols[c].nullable ? " (nullable)" : "");
  }
  if (!n) rt_buf_printf(out, " (none)");
  rt_buf_printf(out, "\n");
}
