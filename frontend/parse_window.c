/*
 * parse_window.c — the window of a window function call (LANGUAGE.md §8):
 *
 *   OVER ( [PARTITION BY expr, …] [ORDER BY expr [ASC|DESC] [NULLS …], …]
 *          [ROWS | RANGE | GROUPS  frame] [EXCLUDE …] )
 *   frame  BETWEEN bound AND bound | bound
 *   bound  UNBOUNDED PRECEDING | UNBOUNDED FOLLOWING | CURRENT ROW
 *          | expr PRECEDING | expr FOLLOWING
 *
 * SQLite's grammar, so that what SQLite reads is read here too; which
 * frames the engine computes, and the order rules of the bounds, are the
 * binder's (bind_window.c), with errors at the bound.
 */
#include "parse.h"

static bool parse_bound(fe_parser *p, fe_fbnd *b) {
  fe_token *t = fe_cur(p);
  b->pos = t->pos;
  if (fe_accept_kw(p, "UNBOUNDED")) {
    if (fe_accept_kw(p, "PRECEDING")) b->kind = FB_UNBOUNDED_PRECEDING;
    else if (fe_accept_kw(p, "FOLLOWING")) b->kind = FB_UNBOUNDED_FOLLOWING;
    else return fe_syntax_error(p, fe_cur(p), "PRECEDING or FOLLOWING");
    return true;
  }
  if (fe_accept_kw(p, "CURRENT")) {
    b->kind = FB_CURRENT;
    return fe_expect_kw(p, "ROW", NULL);
  }
  if (!(b->n = fe_parse_expr(p))) return false;
  if (fe_accept_kw(p, "PRECEDING")) b->kind = FB_PRECEDING;
  else if (fe_accept_kw(p, "FOLLOWING")) b->kind = FB_FOLLOWING;
  else return fe_syntax_error(p, fe_cur(p), "PRECEDING or FOLLOWING");
  return true;
}

static bool parse_frame(fe_parser *p, fe_window *w) {
  w->framed = true;
  w->unitpos = fe_cur(p)->pos;
  w->unit = fe_accept_kw(p, "ROWS") ? FU_ROWS : fe_accept_kw(p, "RANGE") ? FU_RANGE : FU_GROUPS;
  if (w->unit == FU_GROUPS) p->i++;
  if (fe_accept_kw(p, "BETWEEN")) {
    if (!parse_bound(p, &w->start) || !fe_expect_kw(p, "AND", NULL)) return false;
    if (!parse_bound(p, &w->end)) return false;
  } else {
    if (!parse_bound(p, &w->start)) return false;
    w->end = (fe_fbnd){FB_CURRENT, NULL, w->start.pos};
  }
  if (fe_at_kw(p, "EXCLUDE")) {
    w->excludepos = fe_cur(p)->pos;
    p->i++;
    /* EXCLUDE NO OTHERS | CURRENT ROW | GROUP | TIES: read, then refused */
    if (fe_accept_kw(p, "NO")) return fe_expect_kw(p, "OTHERS", NULL);
    if (fe_accept_kw(p, "CURRENT")) return fe_expect_kw(p, "ROW", NULL);
    if (fe_accept_kw(p, "GROUP") || fe_accept_kw(p, "TIES")) return true;
    return fe_syntax_error(p, fe_cur(p), "NO OTHERS, CURRENT ROW, GROUP or TIES");
  }
  return true;
}

fe_window *fe_parse_window(fe_parser *p, int overpos) {
  fe_window *w = fe_alloc(p, sizeof *w);
  if (!w) return NULL;
  w->pos = overpos;
  w->excludepos = -1;
  if (!fe_expect_punct(p, "(", NULL)) return NULL;
  if (fe_accept_kw(p, "PARTITION")) {
    if (!fe_expect_kw(p, "BY", NULL)) return NULL;
    int cap = 0;
    do {
      fe_expr *e = fe_parse_expr(p);
      if (!e) return NULL;
      if (!fe_push_ptr(p, &w->part, &w->npart, &cap, e)) return NULL;
    } while (fe_accept_punct(p, ","));
  }
  if (fe_accept_kw(p, "ORDER")) {
    if (!fe_expect_kw(p, "BY", NULL) || !fe_parse_order_list(p, &w->order, &w->norder)) return NULL;
  }
  if ((fe_at_kw(p, "ROWS") || fe_at_kw(p, "RANGE") || fe_at_kw(p, "GROUPS")) && !parse_frame(p, w))
    return NULL;
  const char *what = w->framed ? "')'"
                     : w->norder ? "ROWS, RANGE or ')'"
                     : w->npart  ? "ORDER BY, ROWS, RANGE or ')'"
                                 : "PARTITION BY, ORDER BY, ROWS, RANGE or ')'";
  if (!fe_expect_punct(p, ")", what)) return NULL;
  return w;
}
