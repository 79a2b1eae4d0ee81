/*
 * parse_stage.c — pipeline sources (FROM, INTERVAL INTERSECTION OF) and the
 * stages after each `|>`.
 *
 * Each stage sets p->stage so that every error inside it, including ones
 * from expressions and lexing, is prefixed with the stage's name. A
 * parenthesized source is a nested pipeline when it starts like one,
 * otherwise SQL whose text is captured between the balanced parentheses for
 * SQLite. Aliases: `[AS] alias`, where an alias without AS may not be a
 * reserved word or a word the context expects next (COVERING, PER, …).
 */
#include "parse.h"

static const char *const k_no_words[] = {NULL};
static const char *const k_join_words[] = {"OVERLAPPING", "COVERING", "WITHIN", "PER", NULL};
static const char *const k_per_words[] = {"PER", NULL};

/* Reads `AS name` or an implicit alias. Returns 1 when one was read, 0 when
 * there is none, -1 on error. */
static int parse_alias(fe_parser *p, fe_name *out, const char *const *stop) {
  if (fe_accept_kw(p, "AS")) return fe_parse_name(p, out, "an alias") ? 1 : -1;
  fe_token *t = fe_cur(p);
  if (t->kind == TK_IDENT) {
    if (fe_is_reserved(t)) return 0;
    for (int i = 0; stop[i]; i++)
      if (fe_tok_is_kw(t, stop[i])) return 0;
  } else if (t->kind != TK_QIDENT) {
    return 0;
  }
  return fe_parse_name(p, out, "an alias") ? 1 : -1;
}

/* The operator sources of ir/sources.def: their words, and their parse
 * functions (defined below). */
#define SOURCE(name, str, w1, w2, parse, bind, words) static fe_source *parse(fe_parser *p);
#include "../ir/sources.def"
#undef SOURCE
static const struct source_entry {
  const char *w1, *w2;
  fe_source *(*parse)(fe_parser *p);
} k_sources[] = {
#define SOURCE(name, str, w1, w2, parse, bind, words) {w1, w2, parse},
#include "../ir/sources.def"
#undef SOURCE
};

/* The operator source whose words start at token offset `at` from the
 * cursor, or NULL. */
static const struct source_entry *source_at(fe_parser *p, int at) {
  for (size_t k = 0; k < sizeof k_sources / sizeof k_sources[0]; k++)
    if (fe_tok_is_kw(fe_peek(p, at), k_sources[k].w1) &&
        (!k_sources[k].w2 || fe_tok_is_kw(fe_peek(p, at + 1), k_sources[k].w2)))
      return &k_sources[k];
  return NULL;
}

bool fe_at_pipeline_start(fe_parser *p) {
  return fe_at_kw(p, "FROM") || source_at(p, 0);
}

/* name, comma-separated, at least one. */
static bool parse_names(fe_parser *p, fe_name **out, int *n, const char *what) {
  int cap = 0;
  do {
    fe_name *nm = fe_push_p(p, out, n, &cap, sizeof *nm);
    if (!nm || !fe_parse_name(p, nm, what)) return false;
  } while (fe_accept_punct(p, ","));
  return true;
}

static bool parse_per(fe_parser *p, fe_name **out, int *n) {
  if (!fe_accept_kw(p, "PER")) return true;
  return parse_names(p, out, n, "a column name");
}

/* ---- sources ---------------------------------------------------------- */

/* `( <pipeline> )` or `( <select> )`; the cursor is on '('. */
static fe_source *parse_paren_source(fe_parser *p, fe_source *s) {
  fe_token *lp = fe_cur(p);
  if (!fe_enter(p, lp->pos)) return NULL;
  p->i++;
  if (fe_at_pipeline_start(p)) {
    const char *outer = p->stage;
    s->kind = SRC_PIPELINE;
    s->pipe = fe_parse_pipeline_at(p);
    if (!s->pipe || !fe_expect_punct(p, ")", "|> or ')'")) return NULL;
    p->stage = outer;
  } else {
    /* SQL: find the matching ')' by counting parentheses. */
    int from = p->i, depth = 0;
    for (;;) {
      fe_token *t = fe_cur(p);
      if (t->kind == TK_EOF) return fe_syntax_error(p, t, "')'"), NULL;
      if (fe_tok_is_punct(t, "(")) depth++;
      if (fe_tok_is_punct(t, ")") && depth-- == 0) break;
      p->i++;
    }
    if (p->i == from) return fe_syntax_error(p, fe_cur(p), "a SELECT or a pipeline"), NULL;
    if (!fe_check_no_pipe(p, from, p->i)) return NULL;
    for (int i = from; i < p->i && !p->sql_stage; i++)
      if (p->toks[i].kind == TK_PARAM && fe_is_sql_input(p->toks[i].text, p->toks[i].textlen))
        return fe_fail(p, p->toks[i].pos, "%s", FE_SQL_INPUT_ONLY), NULL;
    s->kind = SRC_SQL;
    /* Its parameters, for a subquery in an expression to bind. */
    int cap = 0;
    for (int i = from; i < p->i; i++) {
      fe_token *t = &p->toks[i];
      if (t->kind != TK_PARAM) continue;
      fe_expr *x = fe_alloc(p, sizeof *x);
      if (!x) return NULL;
      x->kind = AX_PARAM;
      x->pos = x->oppos = t->pos;
      x->endpos = t->pos + t->len;
      x->str = t->text;
      x->strlen = t->textlen;
      x->height = 1;
      if (!fe_push_ptr(p, &s->params, &s->nparams, &cap, x)) return NULL;
    }
    s->sqlpos = p->toks[from].pos;
    int end = fe_prev_end(p);
    s->sql = rt_arena_strndup(p->a, p->text + s->sqlpos, (size_t)(end - s->sqlpos));
    if (!s->sql) return fe_oom(p), NULL;
    p->i++; /* ')' */
  }
  fe_leave(p);
  return s;
}

fe_source *fe_parse_subquery(fe_parser *p) {
  fe_source *s = fe_alloc(p, sizeof *s);
  if (!s) return NULL;
  s->pos = fe_cur(p)->pos;
  return parse_paren_source(p, s);
}

bool fe_at_subquery(fe_parser *p) {
  if (!fe_at_punct(p, "(")) return false;
  fe_token *t = fe_peek(p, 1);
  return fe_tok_is_kw(t, "SELECT") || fe_tok_is_kw(t, "WITH") || fe_tok_is_kw(t, "VALUES") ||
         fe_tok_is_kw(t, "FROM") || source_at(p, 1);
}

/* [schema.]name or a parenthesized source, without alias. */
static fe_source *parse_relation(fe_parser *p) {
  fe_source *s = fe_alloc(p, sizeof *s);
  if (!s) return NULL;
  fe_token *t = fe_cur(p);
  s->pos = t->pos;
  if (fe_tok_is_punct(t, "(")) return parse_paren_source(p, s);
  if ((t->kind != TK_IDENT && t->kind != TK_QIDENT) || fe_is_reserved(t))
    return fe_syntax_error(p, t, "a table name or '('"), NULL;
  s->kind = SRC_NAME;
  fe_name n;
  fe_parse_name(p, &n, NULL);
  s->name = n.name;
  if (fe_accept_punct(p, ".")) {
    s->schema = s->name;
    if (!fe_parse_name(p, &n, "a table name after '.'")) return NULL;
    s->name = n.name;
  }
  /* name(args…): a table function (LANGUAGE.md §7.2) */
  if (!s->schema && fe_accept_punct(p, "(")) {
    s->kind = SRC_CALL;
    int cap = 0;
    if (!fe_accept_punct(p, ")")) {
      do {
        fe_expr *x = fe_parse_expr(p);
        if (!x) return NULL;
        if (!fe_push_ptr(p, &s->args, &s->nargs, &cap, x)) return NULL;
      } while (fe_accept_punct(p, ","));
      if (!fe_expect_punct(p, ")", "',' or ')'")) return NULL;
    }
  }
  return s;
}

/* An operand that needs an alias (INTERVAL INTERSECTION OF, INTERVAL
 * JOIN): a named table defaults to its own name, a subquery must say. */
static bool require_alias(fe_parser *p, fe_source *s, const char *const *stop) {
  int r = parse_alias(p, &s->alias, stop);
  if (r < 0) return false;
  if (r > 0) return true;
  if (s->kind == SRC_NAME || s->kind == SRC_CALL) {
    s->alias.name = s->name;
    s->alias.pos = s->pos;
    return true;
  }
  /* Perfetto's text, then how to give one. */
  return fe_fail(p, s->pos, "expected an alias for the relation: name the subquery with AS, as in "
                            "(SELECT …) AS a");
}

static fe_source *parse_from(fe_parser *p) {
  p->stage = "FROM";
  p->i++; /* FROM */
  fe_source *s = parse_relation(p);
  if (!s || parse_alias(p, &s->alias, k_no_words) < 0) return NULL;
  return s;
}

/* `W1 W2 OF (src [AS] a, …) [PER cols]` (INTERSECTION OF, UNION OF). */
static fe_source *parse_operands(fe_parser *p, const char *stage, fe_srckind kind) {
  p->stage = stage;
  fe_source *s = fe_alloc(p, sizeof *s);
  if (!s) return NULL;
  s->kind = kind;
  s->pos = fe_cur(p)->pos;
  p->i += 2; /* INTERVAL INTERSECTION */
  if (!fe_expect_kw(p, "OF", NULL) || !fe_expect_punct(p, "(", NULL)) return NULL;
  int cap = 0;
  do {
    fe_source *op = parse_relation(p);
    p->stage = stage;
    if (!op || !require_alias(p, op, k_no_words)) return NULL;
    if (!fe_push_ptr(p, &s->ops, &s->nops, &cap, op)) return NULL;
  } while (fe_accept_punct(p, ","));
  if (!fe_expect_punct(p, ")", "',' or ')'")) return NULL;
  if (!parse_per(p, &s->per, &s->nper)) return NULL;
  return s;
}

static fe_source *parse_intersection(fe_parser *p) {
  return parse_operands(p, "INTERVAL INTERSECTION OF", SRC_INTERSECT);
}

/* ---- §9.1 interval sources (ivsrc) ----------------------------------- */

/* INTERVALS FROM EVENTS src [[AS] a] [PER cols] [STOP src2 [[AS] b]]
 * [KEEPING LAST OPEN | CLOSING LAST AT (expr)] */
static fe_source *parse_iv_events(fe_parser *p) {
  static const char *const stage = "INTERVALS FROM EVENTS";
  static const char *const ev_words[] = {"PER", "STOP", "KEEPING", "CLOSING", NULL};
  static const char *const stop_words[] = {"KEEPING", "CLOSING", NULL};
  p->stage = stage;
  fe_source *s = fe_alloc(p, sizeof *s);
  if (!s) return NULL;
  s->kind = SRC_IV_EVENTS;
  s->pos = fe_cur(p)->pos;
  p->i += 2; /* INTERVALS FROM */
  if (!fe_expect_kw(p, "EVENTS", NULL)) return NULL;
  int cap = 0;
  fe_source *ev = parse_relation(p);
  p->stage = stage;
  if (!ev || parse_alias(p, &ev->alias, ev_words) < 0) return NULL;
  if (!fe_push_ptr(p, &s->ops, &s->nops, &cap, ev)) return NULL;
  if (!parse_per(p, &s->per, &s->nper)) return NULL;
  if (fe_accept_kw(p, "STOP")) {
    fe_source *st = parse_relation(p);
    p->stage = stage;
    if (!st || parse_alias(p, &st->alias, stop_words) < 0) return NULL;
    if (!fe_push_ptr(p, &s->ops, &s->nops, &cap, st)) return NULL;
  }
  if (fe_accept_kw(p, "KEEPING")) {
    if (!fe_expect_kw(p, "LAST", NULL) || !fe_expect_kw(p, "OPEN", NULL)) return NULL;
  } else if (fe_accept_kw(p, "CLOSING")) {
    if (!fe_expect_kw(p, "LAST", NULL) || !fe_expect_kw(p, "AT", NULL) ||
        !fe_expect_punct(p, "(", "'(' and the end of the last interval"))
      return NULL;
    if (!(s->close = fe_parse_expr(p)) || !fe_expect_punct(p, ")", NULL)) return NULL;
  }
  return s;
}

/* §9.5: GRAPH (DFS | BFS | DOMINATOR) TREE NODES rel [[AS] a] EDGES rel
 * [[AS] a] FROM rel [[AS] a]: one source kind per algorithm, ops[0..3)
 * the three relations. */
static fe_source *parse_graph(fe_parser *p) {
  static const char *const algos[] = {"DFS", "BFS", "DOMINATOR"};
  static const fe_srckind kinds[] = {SRC_GRAPH_DFS, SRC_GRAPH_BFS, SRC_GRAPH_DOMINATOR};
  static const char *const names[] = {"GRAPH DFS TREE", "GRAPH BFS TREE", "GRAPH DOMINATOR TREE"};
  static const char *const words[] = {"NODES", "EDGES", "FROM"};
  static const char *const stops[][2] = {{"EDGES", NULL}, {"FROM", NULL}, {NULL}};
  p->stage = "GRAPH";
  fe_source *s = fe_alloc(p, sizeof *s);
  if (!s) return NULL;
  s->pos = fe_cur(p)->pos;
  p->i++; /* GRAPH */
  int algo = -1;
  for (int k = 0; k < 3 && algo < 0; k++)
    if (fe_accept_kw(p, algos[k])) algo = k;
  if (algo < 0) return fe_syntax_error(p, fe_cur(p), "DFS, BFS or DOMINATOR"), NULL;
  s->kind = kinds[algo];
  p->stage = names[algo];
  if (!fe_expect_kw(p, "TREE", NULL)) return NULL;
  int cap = 0;
  for (int k = 0; k < 3; k++) {
    if (!fe_expect_kw(p, words[k], NULL)) return NULL;
    fe_source *op = parse_relation(p);
    p->stage = names[algo];
    if (!op || parse_alias(p, &op->alias, stops[k]) < 0) return NULL;
    if (!fe_push_ptr(p, &s->ops, &s->nops, &cap, op)) return NULL;
  }
  return s;
}

/* INTERVAL UNION OF (src [AS] a, …) [PER cols]: INTERSECTION OF's syntax */
static fe_source *parse_iv_union(fe_parser *p) {
  return parse_operands(p, "INTERVAL UNION OF", SRC_IV_UNION);
}

/* ---- select items ----------------------------------------------------- */

static bool parse_item(fe_parser *p, fe_item *it);

/* * EXCEPT (a, b) and * REPLACE (expr AS col, …), in either order. */
static bool parse_star_modifiers(fe_parser *p, fe_item *it) {
  for (;;) {
    if (!it->except && fe_accept_kw(p, "EXCEPT")) {
      if (!fe_expect_punct(p, "(", "'(' after EXCEPT")) return false;
      if (!parse_names(p, &it->except, &it->nexcept, "a column name")) return false;
      if (!fe_expect_punct(p, ")", "',' or ')'")) return false;
    } else if (!it->replace && fe_accept_kw(p, "REPLACE")) {
      if (!fe_expect_punct(p, "(", "'(' after REPLACE")) return false;
      int cap = 0;
      do {
        fe_item *r = fe_push_p(p, &it->replace, &it->nreplace, &cap, sizeof *r);
        if (!r) return false;
        r->kind = IT_EXPR;
        r->pos = fe_cur(p)->pos;
        if (!(r->expr = fe_parse_expr(p))) return false;
        if (!fe_expect_kw(p, "AS", "AS and the column to replace")) return false;
        fe_name n;
        if (!fe_parse_name(p, &n, "a column name")) return false;
        r->name = n.name;
        r->namepos = n.pos;
      } while (fe_accept_punct(p, ","));
      if (!fe_expect_punct(p, ")", "',' or ')'")) return false;
    } else {
      return true;
    }
  }
}

static bool parse_item(fe_parser *p, fe_item *it) {
  fe_token *t = fe_cur(p);
  it->pos = t->pos;
  if (fe_tok_is_punct(t, "*")) {
    it->kind = IT_STAR;
    p->i++;
    return parse_star_modifiers(p, it);
  }
  if ((t->kind == TK_IDENT || t->kind == TK_QIDENT) && fe_tok_is_punct(fe_peek(p, 1), ".") &&
      fe_tok_is_punct(fe_peek(p, 2), "*")) {
    it->kind = IT_QSTAR;
    it->qual = t->text;
    p->i += 3;
    return parse_star_modifiers(p, it);
  }
  it->kind = IT_EXPR;
  if (!(it->expr = fe_parse_expr(p))) return false;
  fe_token *at = fe_cur(p);
  /* A string after AS is a name too, as SQLite allows. */
  if (fe_tok_is_kw(at, "AS") && fe_peek(p, 1)->kind == TK_STRING) {
    it->name = fe_peek(p, 1)->text;
    it->namepos = fe_peek(p, 1)->pos;
    p->i += 2;
    return true;
  }
  fe_name n = {0};
  int r = parse_alias(p, &n, k_no_words);
  it->name = n.name;
  it->namepos = n.pos;
  return r >= 0;
}

static bool parse_items(fe_parser *p, fe_item **out, int *n) {
  int cap = 0;
  do {
    fe_item *it = fe_push_p(p, out, n, &cap, sizeof *it);
    if (!it || !parse_item(p, it)) return false;
  } while (fe_accept_punct(p, ","));
  return true;
}

/* ---- stages ----------------------------------------------------------- */

static bool parse_where(fe_parser *p, fe_stage *st) {
  return (st->expr = fe_parse_expr(p)) != NULL;
}

static bool parse_select(fe_parser *p, fe_stage *st) {
  return parse_items(p, &st->items, &st->nitems);
}

static bool parse_extend(fe_parser *p, fe_stage *st) {
  return parse_items(p, &st->items, &st->nitems);
}

static bool parse_drop(fe_parser *p, fe_stage *st) {
  return parse_names(p, &st->names, &st->nnames, "a column name");
}

static bool parse_as(fe_parser *p, fe_stage *st) {
  return fe_parse_name(p, &st->alias, "an alias");
}

static bool parse_limit(fe_parser *p, fe_stage *st) {
  if (!(st->limit = fe_parse_expr(p))) return false;
  return !fe_accept_kw(p, "OFFSET") || (st->offset = fe_parse_expr(p)) != NULL;
}

static bool parse_set(fe_parser *p, fe_stage *st) {
  int cap = 0;
  do {
    fe_assign *a = fe_push_p(p, &st->assign, &st->nassign, &cap, sizeof *a);
    if (!a || !fe_parse_name(p, &a->col, "a column name")) return false;
    if (!fe_expect_punct(p, "=", NULL)) return false;
    if (!(a->expr = fe_parse_expr(p))) return false;
  } while (fe_accept_punct(p, ","));
  return true;
}

static bool parse_rename(fe_parser *p, fe_stage *st) {
  int cap = 0;
  do {
    fe_assign *a = fe_push_p(p, &st->assign, &st->nassign, &cap, sizeof *a);
    if (!a || !fe_parse_name(p, &a->col, "a column name")) return false;
    fe_accept_kw(p, "AS");
    if (!fe_parse_name(p, &a->newname, "the new name")) return false;
  } while (fe_accept_punct(p, ","));
  return true;
}

static bool parse_order(fe_parser *p, fe_stage *st) {
  return fe_expect_kw(p, "BY", NULL) && fe_parse_order_list(p, &st->order, &st->norder);
}

bool fe_parse_order_list(fe_parser *p, fe_order **out, int *n) {
  int cap = 0;
  do {
    fe_order *o = fe_push_p(p, out, n, &cap, sizeof *o);
    if (!o || !(o->expr = fe_parse_expr(p))) return false;
    if (fe_accept_kw(p, "DESC")) o->desc = true;
    else fe_accept_kw(p, "ASC");
    if (fe_accept_kw(p, "NULLS")) {
      if (fe_accept_kw(p, "FIRST")) o->nulls = 1;
      else if (fe_accept_kw(p, "LAST")) o->nulls = 2;
      else return fe_syntax_error(p, fe_cur(p), "FIRST or LAST");
    }
  } while (fe_accept_punct(p, ","));
  return true;
}

static bool parse_aggregate(fe_parser *p, fe_stage *st) {
  /* GoogleSQL allows `AGGREGATE GROUP BY k` with no aggregates. */
  if (!fe_at_kw(p, "GROUP") && !parse_items(p, &st->items, &st->nitems)) return false;
  if (fe_accept_kw(p, "GROUP")) {
    if (!fe_expect_kw(p, "BY", NULL)) return false;
    if (!parse_items(p, &st->group, &st->ngroup)) return false;
  }
  return true;
}

static bool parse_tree(fe_parser *p, fe_stage *st) {
  if (fe_accept_kw(p, "UP")) st->up = true;
  else if (!fe_accept_kw(p, "DOWN")) return fe_syntax_error(p, fe_cur(p), "UP or DOWN");
  return parse_items(p, &st->items, &st->nitems);
}

/* ---- §9.4 tree operators ---------------------------------------------- */

static const char *const k_tree_words[] = {"OVER", "AGGREGATE", NULL};

/* A node set or tree relation with an optional alias. */
static fe_source *parse_tree_rel(fe_parser *p) {
  const char *stage = p->stage;
  fe_source *s = parse_relation(p);
  p->stage = stage;
  if (!s || parse_alias(p, &s->alias, k_tree_words) < 0) return NULL;
  return s;
}

static bool parse_tree_over(fe_parser *p, fe_stage *st) {
  if (!fe_accept_kw(p, "OVER")) return true;
  return (st->over = parse_tree_rel(p)) != NULL;
}

/* `IF (DESCENDANT | ANCESTOR) OF rel [OVER t]` after TREE KEEP / DROP. */
static bool parse_tree_filter(fe_parser *p, fe_stage *st) {
  if (!fe_expect_kw(p, "IF", NULL)) return false;
  if (fe_accept_kw(p, "DESCENDANT")) st->tmode = TM_DESCENDANT;
  else if (fe_accept_kw(p, "ANCESTOR")) st->tmode = TM_ANCESTOR;
  else return fe_syntax_error(p, fe_cur(p), "DESCENDANT or ANCESTOR");
  if (!fe_expect_kw(p, "OF", NULL) || !(st->src = parse_tree_rel(p))) return false;
  return parse_tree_over(p, st);
}

/* `AT rel` after TREE PRUNE ([OVER t]), CONTRACT and ABSORB (AGGREGATE …). */
static bool parse_tree_at(fe_parser *p, fe_stage *st) {
  if (!fe_expect_kw(p, "AT", NULL) || !(st->src = parse_tree_rel(p))) return false;
  if (st->kind == ST_TREE_PRUNE) return parse_tree_over(p, st);
  if (!fe_expect_kw(p, "AGGREGATE", NULL)) return false;
  return parse_items(p, &st->items, &st->nitems);
}

/* `TO NEAREST ANCESTOR IN rel [OVER t]` after TREE REPARENT. */
static bool parse_tree_reparent(fe_parser *p, fe_stage *st) {
  if (!fe_expect_kw(p, "TO", NULL) || !fe_expect_kw(p, "NEAREST", NULL) ||
      !fe_expect_kw(p, "ANCESTOR", NULL) || !fe_expect_kw(p, "IN", NULL) ||
      !(st->src = parse_tree_rel(p)))
    return false;
  return parse_tree_over(p, st);
}

/* `SIBLINGS BY cols [ORDERED] AGGREGATE …` or `INTO PARENT BY cols
 * AGGREGATE …` after TREE MERGE. */
static bool parse_tree_merge(fe_parser *p, fe_stage *st) {
  if (fe_accept_kw(p, "SIBLINGS")) {
    st->tmode = TM_SIBLINGS;
  } else if (fe_accept_kw(p, "INTO")) {
    st->tmode = TM_INTO_PARENT;
    if (!fe_expect_kw(p, "PARENT", NULL)) return false;
  } else {
    return fe_syntax_error(p, fe_cur(p), "SIBLINGS or INTO PARENT");
  }
  if (!fe_expect_kw(p, "BY", NULL) || !parse_names(p, &st->by, &st->nby, "a column name"))
    return false;
  if (st->tmode == TM_SIBLINGS && fe_accept_kw(p, "ORDERED")) st->ordered = true;
  if (!fe_expect_kw(p, "AGGREGATE", st->tmode == TM_SIBLINGS && !st->ordered ? "ORDERED or AGGREGATE" : NULL))
    return false;
  return parse_items(p, &st->items, &st->nitems);
}

static bool parse_flatten(fe_parser *p, fe_stage *st) {
  if (!parse_per(p, &st->per, &st->nper)) return false;
  if (!fe_expect_kw(p, "AGGREGATE", st->nper ? "AGGREGATE" : "PER or AGGREGATE")) return false;
  return parse_items(p, &st->items, &st->nitems);
}

/* OVERLAPPING BOUNDS, COVERING BEGIN, … into st->rel (INTERVAL JOIN,
 * KEEP IF, DROP IF). */
static bool parse_relationship(fe_parser *p, fe_stage *st) {
  static const struct { const char *a, *b; fe_joinrel rel; } rels[] = {
    {"OVERLAPPING", "BOUNDS", JR_OVERLAPPING_BOUNDS}, {"COVERING", "BEGIN", JR_COVERING_BEGIN},
    {"COVERING", "END", JR_COVERING_END}, {"COVERING", "BOUNDS", JR_COVERING_BOUNDS},
    {"WITHIN", "BOUNDS", JR_WITHIN_BOUNDS},
  };
  size_t i = 0;
  for (; i < sizeof rels / sizeof rels[0]; i++)
    if (fe_at_kw(p, rels[i].a) && fe_tok_is_kw(fe_peek(p, 1), rels[i].b)) break;
  if (i == sizeof rels / sizeof rels[0]) {
    /* Point at the second word when the first one was right. */
    fe_token *t = fe_at_kw(p, "OVERLAPPING") || fe_at_kw(p, "COVERING") || fe_at_kw(p, "WITHIN")
                      ? fe_peek(p, 1)
                      : fe_cur(p);
    return fe_syntax_error(p, t,
                           "OVERLAPPING BOUNDS, COVERING BEGIN, COVERING END, COVERING BOUNDS "
                           "or WITHIN BOUNDS");
  }
  st->rel = rels[i].rel;
  p->i += 2;
  return true;
}

static bool parse_join(fe_parser *p, fe_stage *st) {
  if (!(st->src = parse_relation(p))) return false;
  p->stage = "INTERVAL JOIN";
  if (!require_alias(p, st->src, k_join_words)) return false;
  if (!parse_relationship(p, st)) return false;
  return parse_per(p, &st->per, &st->nper);
}

/* ---- §9.3 interval matching (ivsrc) ------------------------------------ */

/* [LEFT] INTERVAL FIND src [AS] a (STARTING | ENDING) (AFTER | BEFORE)
 * (BEGIN | END) [OF alias] [WITHIN d] [PER cols] */
static bool parse_ifind(fe_parser *p, fe_stage *st) {
  static const char *const stop[] = {"STARTING", "ENDING", NULL};
  if (!(st->src = parse_relation(p))) return false;
  p->stage = fe_stage_names[ST_IV_FIND];
  if (!require_alias(p, st->src, stop)) return false;
  if (fe_accept_kw(p, "ENDING")) st->ending = true;
  else if (!fe_accept_kw(p, "STARTING")) return fe_syntax_error(p, fe_cur(p), "STARTING or ENDING");
  if (fe_accept_kw(p, "BEFORE")) st->before = true;
  else if (!fe_accept_kw(p, "AFTER")) return fe_syntax_error(p, fe_cur(p), "AFTER or BEFORE");
  if (fe_accept_kw(p, "END")) st->anchor_end = true;
  else if (!fe_accept_kw(p, "BEGIN")) return fe_syntax_error(p, fe_cur(p), "BEGIN or END");
  if (fe_accept_kw(p, "OF") && !fe_parse_name(p, &st->anchor_of, "an alias")) return false;
  if (fe_accept_kw(p, "WITHIN") && !(st->within_d = fe_parse_expr(p))) return false;
  return parse_per(p, &st->per, &st->nper);
}

/* INTERVAL KEEP IF / DROP IF relationship src [[AS] a] [PER cols] */
static bool parse_ikeep(fe_parser *p, fe_stage *st) {
  if (!fe_expect_kw(p, "IF", NULL) || !parse_relationship(p, st)) return false;
  if (!(st->src = parse_relation(p))) return false;
  p->stage = fe_stage_names[st->kind];
  if (parse_alias(p, &st->src->alias, k_per_words) < 0) return false;
  return parse_per(p, &st->per, &st->nper);
}

/* end §9.3 */

static bool parse_fill_gaps(fe_parser *p, fe_stage *st) {
  /* INTERVAL FILL WITHIN src (§9.2) is FILL GAPS WITH whose fillers carry
   * only their bounds and lane */
  if (fe_accept_kw(p, "WITHIN")) {
    st->within = true;
    p->stage = "INTERVAL FILL WITHIN";
  } else if (!fe_expect_kw(p, "GAPS", "GAPS or WITHIN") || !fe_expect_kw(p, "WITH", NULL)) {
    return false;
  }
  if (!(st->src = parse_relation(p))) return false;
  p->stage = st->within ? "INTERVAL FILL WITHIN" : "INTERVAL FILL GAPS";
  if (parse_alias(p, &st->src->alias, k_per_words) < 0) return false;
  return parse_per(p, &st->per, &st->nper);
}

/* ---- §9.2 interval reshaping ------------------------------------------------ */

static bool parse_split(fe_parser *p, fe_stage *st) {
  if (!(st->src = parse_relation(p))) return false;
  p->stage = "INTERVAL SPLIT";
  if (!require_alias(p, st->src, k_per_words)) return false;
  return parse_per(p, &st->per, &st->nper);
}

static bool parse_subtract(fe_parser *p, fe_stage *st) {
  if (!(st->src = parse_relation(p))) return false;
  p->stage = "INTERVAL SUBTRACT";
  if (parse_alias(p, &st->src->alias, k_per_words) < 0) return false;
  return parse_per(p, &st->per, &st->nper);
}

static bool parse_merge(fe_parser *p, fe_stage *st) {
  if (fe_accept_kw(p, "CONSECUTIVE")) {
    st->consecutive = true;
    p->stage = "INTERVAL MERGE CONSECUTIVE";
    if (!fe_expect_kw(p, "BY", NULL) || !parse_names(p, &st->by, &st->nby, "a column name"))
      return false;
  } else if (fe_accept_kw(p, "OVERLAPPING")) {
    p->stage = "INTERVAL MERGE OVERLAPPING";
  } else {
    return fe_syntax_error(p, fe_cur(p), "OVERLAPPING or CONSECUTIVE");
  }
  if (!parse_per(p, &st->per, &st->nper)) return false;
  if (!fe_expect_kw(p, "AGGREGATE", st->nper ? "AGGREGATE" : "PER or AGGREGATE")) return false;
  return parse_items(p, &st->items, &st->nitems);
}

static bool parse_set_bounds(fe_parser *p, fe_stage *st) {
  p->stage = "INTERVAL SET BOUNDS";
  if (!fe_expect_kw(p, "BOUNDS", NULL) || !fe_expect_kw(p, "BEGIN", NULL) ||
      !fe_expect_kw(p, "AT", NULL) || !(st->begin_at = fe_parse_expr(p)))
    return false;
  if (fe_accept_kw(p, "END")) {
    if (!fe_expect_kw(p, "AT", NULL)) return false;
    return (st->end_at = fe_parse_expr(p)) != NULL;
  }
  if (!fe_expect_kw(p, "FOR", "END AT or FOR")) return false;
  return (st->for_dur = fe_parse_expr(p)) != NULL;
}

static bool parse_quantize(fe_parser *p, fe_stage *st) {
  fe_token *t = fe_cur(p);
  if (t->kind != TK_INT)
    return fe_syntax_error(p, t, "a width: an integer with an optional unit (ns, us, ms, s), as in 100ms");
  int64_t unit = t->unit ? t->unit : 1;
  if (t->ival <= 0 || t->ival > INT64_MAX / unit)
    return fe_fail(p, t->pos, "expected the width to be above zero and at most 2^63-1 ns, but it is '%.*s'",
                   t->len, p->text + t->pos);
  st->width = t->ival * unit;
  st->widthpos = t->pos;
  p->i++;
  if (fe_accept_kw(p, "ALIGNED")) {
    if (!fe_expect_kw(p, "TO", NULL)) return false;
    if (fe_at_kw(p, "TRACE") && fe_tok_is_kw(fe_peek(p, 1), "START")) {
      p->i += 2;
      st->align = 0;
    } else if (fe_accept_kw(p, "ZERO")) {
      st->align = 1;
    } else {
      st->align = 2;
      if (!(st->align_expr = fe_parse_expr(p))) return false;
    }
  }
  return parse_per(p, &st->per, &st->nper);
}

/* `[INNER | LEFT [OUTER] | RIGHT [OUTER] | FULL [OUTER] | CROSS] JOIN src
 * [[AS] alias] [ON expr | USING (col, …)]` (LANGUAGE.md §8). The cursor is
 * on the first word (the kind, or JOIN). */
static const char *const k_hjoin_words[] = {"ON", "USING", NULL};
static bool parse_hjoin(fe_parser *p, fe_stage *st) {
  static const struct { const char *w; fe_joinkind k; bool outer; } kinds[] = {
    {"INNER", JK_INNER, false}, {"LEFT", JK_LEFT, true}, {"RIGHT", JK_RIGHT, true},
    {"FULL", JK_FULL, true},    {"CROSS", JK_CROSS, false},
  };
  st->jkind = JK_INNER;
  st->nusing = -1;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    if (!fe_accept_kw(p, kinds[i].w)) continue;
    st->jkind = kinds[i].k;
    if (kinds[i].outer) fe_accept_kw(p, "OUTER");
    break;
  }
  if (!fe_expect_kw(p, "JOIN", NULL)) return false;
  if (!(st->src = parse_relation(p))) return false;
  p->stage = "JOIN";
  if (parse_alias(p, &st->src->alias, k_hjoin_words) < 0) return false;
  fe_token *t = fe_cur(p);
  if (fe_accept_kw(p, "ON")) {
    if (st->jkind == JK_CROSS)
      return fe_fail(p, t->pos, "CROSS JOIN takes no ON or USING: use JOIN … ON");
    return (st->on = fe_parse_expr(p)) != NULL;
  }
  if (fe_accept_kw(p, "USING")) {
    if (st->jkind == JK_CROSS)
      return fe_fail(p, t->pos, "CROSS JOIN takes no ON or USING: use JOIN … USING");
    st->nusing = 0;
    if (!fe_expect_punct(p, "(", NULL)) return false;
    if (!parse_names(p, &st->usings, &st->nusing, "a column name")) return false;
    return fe_expect_punct(p, ")", "',' or ')'");
  }
  return true;
}

/* `|> DISTINCT`: nothing after the word. */
static bool parse_distinct(fe_parser *p, fe_stage *st) {
  (void)p, (void)st;
  return true;
}

/* `|> UNION ALL (q), …`, `|> UNION [DISTINCT] (q), …`, `|> INTERSECT [ALL |
 * DISTINCT] (q), …`, `|> EXCEPT [ALL | DISTINCT] (q), …`: each q a
 * parenthesised pipeline or select, or a name (a FORK's, a table's). */
static bool parse_setop(fe_parser *p, fe_stage *st) {
  if (fe_accept_kw(p, "ALL")) st->all = true;
  else fe_accept_kw(p, "DISTINCT");
  int cap = 0;
  do {
    /* (pipeline), (select), or a relation by name (a FORK's, a table) */
    fe_source *s = parse_relation(p);
    if (!s) return false;
    p->stage = fe_stage_names[st->kind];
    if (!fe_push_ptr(p, &st->srcs, &st->nsrcs, &cap, s)) return false;
  } while (fe_accept_punct(p, ","));
  return true;
}

/* `|> FORK AS name` (LANGUAGE.md §8): the name later stages read the
 * stream at this point by. */
static bool parse_fork(fe_parser *p, fe_stage *st) {
  if (!fe_expect_kw(p, "AS", NULL)) return false;
  return fe_parse_name(p, &st->alias, "a name for the fork");
}

/* `|> SQL (select)`: the select's text between the balanced parentheses,
 * for SQLite (st->src, a SRC_SQL source; `@input` in it is the stream). */
static bool parse_sql_stage(fe_parser *p, fe_stage *st) {
  fe_token *t = fe_cur(p);
  if (!fe_tok_is_punct(t, "(")) return fe_syntax_error(p, t, "'(' and a SELECT");
  fe_source *s = fe_alloc(p, sizeof *s);
  if (!s) return false;
  s->pos = t->pos;
  p->i++;
  bool pipe = fe_at_pipeline_start(p);
  p->i--;
  if (pipe)
    return fe_fail(p, fe_peek(p, 1)->pos,
                   "expected a SELECT in the parentheses, but got a pipeline: its stages go "
                   "after |> in this pipeline");
  p->sql_stage = true;
  st->src = parse_paren_source(p, s);
  p->sql_stage = false;
  return st->src != NULL;
}

static bool stage_error(fe_parser *p, fe_token *t, const char *what) {
  p->stage = "PIPELINE";
  return fe_syntax_error(p, t, what);
}

static bool begin(fe_parser *p, fe_stage *st, fe_stagekind kind, int nwords) {
  st->kind = kind;
  p->stage = fe_stage_names[kind];
  p->i += nwords;
  return true;
}

/* `|> [INNER | LEFT [OUTER] | RIGHT [OUTER] | FULL [OUTER] | CROSS |
 * NATURAL] JOIN`: LANGUAGE.md §8's JOIN stage (NATURAL is refused). True
 * when the tokens at the cursor start one. */
static bool at_join(fe_parser *p) {
  static const char *const kinds[] = {"INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL"};
  int k = 0;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && k == 0; i++)
    if (fe_at_kw(p, kinds[i])) k = 1;
  if (k && fe_tok_is_kw(fe_peek(p, k), "OUTER")) k++;
  return fe_tok_is_kw(fe_peek(p, k), "JOIN");
}

/* stages.def, in order: the words that select each stage and its parse
 * function. */
static const struct stage_entry {
  const char *w1, *w2;
  bool (*parse)(fe_parser *, fe_stage *);
} k_stages[ST__COUNT] = {
#define STAGE(name, str, w1, w2, parse, bind, words) {w1, w2, parse},
#include "../ir/stages.def"
#undef STAGE
};

/* "a, b or c" of the stage names whose first word is `w1` (without that
 * word, then " after w1"), or of every stage name when w1 is NULL;
 * between lead and tail. */
static const char *stage_list(fe_parser *p, const char *w1, const char *lead, const char *tail) {
  rt_buf m = {0};
  rt_buf_printf(&m, "%s", lead);
  int n = 0, total = 0;
  for (int k = 0; k < ST__COUNT; k++) total += !w1 || (k_stages[k].w2 && !strcmp(k_stages[k].w1, w1));
  for (int k = 0; k < ST__COUNT; k++) {
    if (w1 && !(k_stages[k].w2 && !strcmp(k_stages[k].w1, w1))) continue;
    const char *name = fe_stage_names[k];
    if (w1) name += strlen(w1) + 1;
    rt_buf_printf(&m, "%s%s", n == 0 ? "" : w1 && n == total - 1 ? " or " : ", ", name);
    n++;
  }
  rt_buf_printf(&m, "%s%s%s", w1 ? " after " : "", w1 ? w1 : "", tail);
  /* a failed append leaves a shorter list: out of memory, not a message */
  const char *out = m.data && !m.failed ? rt_arena_strndup(p->a, m.data, m.len) : NULL;
  if (!out) fe_oom(p), out = lead;
  rt_buf_free(&m);
  return out;
}

/* One stage; the cursor is just after `|>`. */
static bool parse_stage(fe_parser *p, fe_stage *st) {
  fe_token *t = fe_cur(p);
  st->pos = t->pos;
  if (at_join(p)) {
    begin(p, st, ST_JOIN, 0);
    if (fe_at_kw(p, "NATURAL"))
      return fe_fail(p, t->pos, "NATURAL JOIN is not supported: name the columns with USING (…)");
    return parse_hjoin(p, st);
  }
  if (fe_tok_is_kw(t, "LEFT")) {
    /* LEFT INTERVAL JOIN, or §9.3's LEFT INTERVAL FIND */
    bool find = fe_tok_is_kw(fe_peek(p, 1), "INTERVAL") && fe_tok_is_kw(fe_peek(p, 2), "FIND");
    begin(p, st, find ? ST_IV_FIND : ST_IJOIN, 1);
    st->left = true;
    if (!fe_expect_kw(p, "INTERVAL", NULL) || !fe_expect_kw(p, find ? "FIND" : "JOIN", NULL))
      return false;
    return find ? parse_ifind(p, st) : parse_join(p, st);
  }
  const char *lead = NULL;   /* the first word of two-word stages, seen */
  for (int k = 0; k < ST__COUNT; k++) {
    const struct stage_entry *e = &k_stages[k];
    if (!fe_tok_is_kw(t, e->w1)) continue;
    if (e->w2 && !fe_tok_is_kw(fe_peek(p, 1), e->w2)) {
      lead = e->w1;
      continue;
    }
    begin(p, st, (fe_stagekind)k, e->w2 ? 2 : 1);
    return e->parse(p, st);
  }
  if (lead) {
    /* "FLATTEN, JOIN or FILL GAPS after INTERVAL" */
    return stage_error(p, fe_peek(p, 1), stage_list(p, lead, "", ""));
  }
  return stage_error(p, t, stage_list(p, NULL, "a pipe stage (", ")"));
}

fe_pipeline *fe_parse_pipeline_at(fe_parser *p) {
  fe_pipeline *pl = fe_alloc(p, sizeof *pl);
  if (!pl) return NULL;
  pl->pos = fe_cur(p)->pos;
  const struct source_entry *se = fe_at_kw(p, "FROM") ? NULL : source_at(p, 0);
  pl->src = se ? se->parse(p) : parse_from(p);
  if (!pl->src) return NULL;
  int cap = 0;
  while (fe_cur(p)->kind == TK_PIPE) {
    p->i++;
    fe_stage *st = fe_push_p(p, &pl->stages, &pl->nstages, &cap, sizeof *st);
    if (!st || !parse_stage(p, st)) return NULL;
  }
  pl->endpos = fe_prev_end(p);
  return pl;
}
