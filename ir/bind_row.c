/*
 * bind_row.c — the binder's row model: building rows, aliases, and name
 * lookup with the error texts of LANGUAGE.md §6.
 *
 * A bare name looks only at bare entries of the current row; `q.name`
 * looks in alias q's snapshot (bare and qualified-only entries alike).
 * Several entries of one name are ambiguous only when they hold different
 * columns: `SELECT x, x` then `WHERE x > 0` is fine.
 */
#include "bind.h"

bool ir_name_eq(const char *a, const char *b) { return rt_strieq(a, b) != 0; }

void ir_rowb_add(ir_binder *b, ir_rowb *rb, const char *name, int col, bool qonly) {
  if (rb->n == rb->cap) {
    int cap = rb->cap ? rb->cap * 2 : 8;
    ir_entry *e = rt_arena_alloc(&b->p->arena, sizeof(ir_entry) * (size_t)cap);
    if (rb->n) memcpy(e, rb->e, sizeof(ir_entry) * (size_t)rb->n);
    rb->e = e;
    rb->cap = cap;
  }
  rb->e[rb->n++] = (ir_entry){name, col, qonly};
}

ir_row ir_rowb_done(ir_rowb *rb) { return (ir_row){rb->n, rb->e}; }

const ir_alias *ir_alias_find(const ir_binder *b, const char *name) {
  for (int i = 0; i < b->naliases; i++)
    if (ir_name_eq(b->aliases[i].name, name)) return &b->aliases[i];
  return NULL;
}

void ir_alias_set_one(ir_binder *b, const char *name, ir_row row) {
  if (!name) {
    b->naliases = 0;
    b->aliases = NULL;
    return;
  }
  ir_alias *a = rt_arena_alloc(&b->p->arena, sizeof *a);
  a->name = name;
  a->row = row;
  b->naliases = 1;
  b->aliases = a;
}

/* The alias through which entry (name, col) is reachable as alias.name,
 * for "it could be a.x or b.x"; NULL when none is (a column made by a
 * later stage, or renamed since). */
static const char *qualifier_of(const ir_binder *b, const char *name, int col) {
  for (int i = 0; i < b->naliases; i++)
    for (int j = 0; j < b->aliases[i].row.n; j++)
      if (b->aliases[i].row.e[j].col == col && ir_name_eq(b->aliases[i].row.e[j].name, name))
        return b->aliases[i].name;
  return NULL;
}

/* Finds `name` among the entries of `row` (bare ones only when bare_only);
 * reports ambiguity between distinct columns. Returns 1 found, 0 not
 * found, -1 error. */
static int lookup(ir_binder *b, ir_row row, bool bare_only, const char *qual, const char *name,
                  int pos, int *col, const char **entry_name) {
  int found = -1;
  for (int i = 0; i < row.n; i++) {
    const ir_entry *en = &row.e[i];
    if ((bare_only && en->qonly) || !ir_name_eq(en->name, name)) continue;
    if (found < 0) {
      found = i;
    } else if (row.e[found].col != en->col) {
      /* List every distinct candidate: "a.x or b.x", "a.x, b.x or c.x". */
      rt_buf msg = {0};
      int ncand = 0;
      int cands[64];
      for (int k = 0; k < row.n && ncand < 64; k++) {
        const ir_entry *c = &row.e[k];
        if ((bare_only && c->qonly) || !ir_name_eq(c->name, name)) continue;
        bool dup = false;
        for (int m = 0; m < ncand; m++) dup |= row.e[cands[m]].col == c->col;
        if (!dup) cands[ncand++] = k;
      }
      for (int m = 0; m < ncand; m++) {
        const ir_entry *c = &row.e[cands[m]];
        const char *q = qual ? qual : qualifier_of(b, c->name, c->col);
        if (m) rt_buf_printf(&msg, "%s", m == ncand - 1 ? " or " : ", ");
        if (q) rt_buf_printf(&msg, "%s.%s", q, c->name);
        else rt_buf_printf(&msg, "%s", c->name);
      }
      ir_fail(b, pos, "column '%s' is ambiguous: it could be %s", name, msg.data);
      rt_buf_free(&msg);
      return -1;
    }
  }
  if (found < 0) return 0;
  *col = row.e[found].col;
  *entry_name = row.e[found].name;
  return 1;
}

int ir_resolve(ir_binder *b, const char *qual, const char *name, int pos, int namepos,
               int *col, const char **entry_name) {
  if (qual) {
    const ir_alias *a = ir_alias_find(b, qual);
    if (!a) return ir_fail(b, pos, "no such table alias: '%s'", qual);
    int r = lookup(b, a->row, false, qual, name, namepos, col, entry_name);
    if (r < 0) return 0;
    if (r == 0) return ir_fail(b, namepos, "no such column: '%s.%s'", qual, name);
    return 1;
  }
  int r = lookup(b, b->row, true, NULL, name, pos, col, entry_name);
  if (r < 0) return 0;
  if (r == 0) {
    if (ir_alias_find(b, name))
      return ir_fail(b, pos, "expected a column, but '%s' is a table alias", name);
    return ir_fail(b, pos, "no such column: '%s'", name);
  }
  return 1;
}

int ir_row_all_cols(ir_binder *b, int **out) {
  int max = b->row.n;
  for (int i = 0; i < b->naliases; i++) max += b->aliases[i].row.n;
  int *cols = rt_arena_alloc(&b->p->arena, sizeof(int) * (size_t)(max ? max : 1));
  /* Mark columns already taken with a per-column flag to stay linear. */
  bool *seen = rt_arena_alloc(&b->p->arena, (size_t)b->p->ncols + 1);
  int n = 0;
  for (int pass = -1; pass < b->naliases; pass++) {
    ir_row r = pass < 0 ? b->row : b->aliases[pass].row;
    for (int i = 0; i < r.n; i++)
      if (!seen[r.e[i].col]) {
        seen[r.e[i].col] = true;
        cols[n++] = r.e[i].col;
      }
  }
  *out = cols;
  return n;
}
