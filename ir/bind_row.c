/*
 * bind_row.c — the binder's row model: building rows, aliases, and name
 * lookup with the error texts of LANGUAGE.md §6.
 *
 * A bare name looks only at bare entries of the current row; `q.name`
 * looks in alias q's snapshot (bare and qualified-only entries alike).
 * Several entries of one name are ambiguous, even two copies of one
 * column (`SELECT x, x` then `WHERE x > 0` fails: §6).
 */
#include "bind.h"

bool ir_name_eq(const char *a, const char *b) { return rt_strieq(a, b) != 0; }

void ir_rowb_add(ir_binder *b, ir_rowb *rb, const char *name, int col, bool qonly) {
  if (rb->n == rb->cap) {
    int cap = rb->cap ? rb->cap * 2 : 8;
    ir_entry *e = ir_alloc(b, sizeof(ir_entry) * (size_t)cap);
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

ir_rowsave ir_row_save(const ir_binder *b) {
  return (ir_rowsave){b->row, b->naliases, b->aliases};
}

void ir_row_restore(ir_binder *b, const ir_rowsave *s) {
  b->row = s->row;
  b->naliases = s->naliases;
  b->aliases = s->aliases;
}

void ir_alias_set_one(ir_binder *b, const char *name, ir_row row) {
  if (!name) {
    b->naliases = 0;
    b->aliases = NULL;
    return;
  }
  ir_alias *a = ir_alloc(b, sizeof *a);
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

static const char *cand_qual(const ir_binder *b, ir_row row, const char *qual, int i) {
  return qual ? qual : qualifier_of(b, row.e[i].name, row.e[i].col);
}

/* How candidate m of an ambiguous name is shown: `q.x` when an alias
 * reaches it, else `x`; when two candidates would read the same (two
 * copies of one column after `EXTEND x`, or two unqualified `x`), each
 * says its position in the row as `*` lists it: `x (column 1)`, or in
 * the alias's snapshot for `q.x`: `q.x (column 1 of q)`. */
static void describe(const ir_binder *b, ir_row row, const char *qual, const int *cands,
                     int ncand, int m, rt_buf *msg) {
  const ir_entry *c = &row.e[cands[m]];
  const char *mine = cand_qual(b, row, qual, cands[m]);
  bool clash = false;
  for (int k = 0; k < ncand && !clash; k++) {
    const char *theirs = k == m ? NULL : cand_qual(b, row, qual, cands[k]);
    clash = k != m && (mine == NULL) == (theirs == NULL) && (!mine || ir_name_eq(mine, theirs));
  }
  if (clash && qual) rt_buf_printf(msg, "%s.%s (column %d of %s)", qual, c->name, cands[m] + 1, qual);
  else if (clash) rt_buf_printf(msg, "%s (column %d)", c->name, cands[m] + 1);
  else if (mine) rt_buf_printf(msg, "%s.%s", mine, c->name);
  else rt_buf_printf(msg, "%s", c->name);
}

/* Finds `name` among the entries of `row` (bare ones only when bare_only).
 * Two entries of one name are ambiguous even when they hold the same
 * column (LANGUAGE.md §6: after `EXTEND x`, a bare `x` is never silently
 * the first or the last). `where` (may be NULL) says whose row it is in
 * the message: "column 'ts' of b is ambiguous". Returns 1 found, 0 not
 * found, -1 error. */
int ir_lookup(ir_binder *b, ir_row row, bool bare_only, const char *qual, const char *name,
              const char *where, int pos, int *col, const char **entry_name) {
  enum { MAXC = 16 };
  int cands[MAXC], ncand = 0, total = 0;
  for (int i = 0; i < row.n; i++) {
    const ir_entry *en = &row.e[i];
    if ((bare_only && en->qonly) || !ir_name_eq(en->name, name)) continue;
    if (ncand < MAXC) cands[ncand++] = i;
    total++;
  }
  if (total == 0) return 0;
  if (total == 1) {
    *col = row.e[cands[0]].col;
    *entry_name = row.e[cands[0]].name;
    return 1;
  }
  /* List the candidates: "a.x or b.x", "a.x, b.x or c.x". */
  rt_buf msg = {0};
  for (int m = 0; m < ncand; m++) {
    if (m) rt_buf_printf(&msg, "%s", m == total - 1 ? " or " : ", ");
    describe(b, row, qual, cands, ncand, m, &msg);
  }
  if (total > ncand) rt_buf_printf(&msg, " or %d more", total - ncand);
  if (msg.failed || !msg.data) {   /* a list cut short would name fewer */
    rt_buf_free(&msg);
    ir_oom(b);
  }
  ir_fail(b, pos, "column '%s'%s%s is ambiguous: it could be %s", name, where ? " of " : "",
          where ? where : "", msg.data);
  rt_buf_free(&msg);
  return -1;
}

int ir_resolve(ir_binder *b, const char *qual, const char *name, int pos, int namepos,
               int *col, const char **entry_name) {
  if (qual) {
    const ir_alias *a = ir_alias_find(b, qual);
    if (!a) return ir_fail(b, pos, "no such table alias: '%s'", qual);
    int r = ir_lookup(b, a->row, false, qual, name, NULL, namepos, col, entry_name);
    if (r < 0) return 0;
    if (r == 0) return ir_fail(b, namepos, "no such column: '%s.%s'", qual, name);
    return 1;
  }
  int r = ir_lookup(b, b->row, true, NULL, name, NULL, pos, col, entry_name);
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
  int *cols = ir_alloc(b, sizeof(int) * (size_t)(max ? max : 1));
  /* Mark columns already taken with a per-column flag to stay linear. */
  bool *seen = ir_alloc(b, (size_t)b->p->ncols + 1);
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
