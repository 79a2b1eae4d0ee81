/*
 * bind_graph.c — binds the graph sources (LANGUAGE.md §9.5):
 * `GRAPH (DFS | BFS | DOMINATOR) TREE NODES n EDGES e FROM seeds`.
 *
 * Each relation is bound inline like a FROM (…) subpipeline and ends in
 * an IV_BUFFER sink carrying its columns (live.c then trims them to what
 * is read: NODES' unread payload is never buffered, and of EDGES and
 * FROM only the keys are); the GRAPH source after the three buffers runs
 * the algorithm (exec/driver_graph.c) and serves the tree.
 *
 * Keys: NODES.id, EDGES.src and EDGES.dst, and the seeds' id (or their
 * only column), each an integer of any kind. Output row: NODES' columns,
 * bare, then `parent_id` and `depth`; NODES' qualifier (its alias, else
 * its table's name) names that row. NODES may not have its own
 * parent_id or depth: TREE ACCUMULATE and the tree operators read the
 * bare parent_id, which must be the tree's.
 */
#include "runtime/graph/graph.h"
#include "bind.h"

static const char *const k_rel[] = {"NODES", "EDGES", "FROM"};

/* Relation j's bare integer column `name`: -1 with the error set when it
 * is missing, ambiguous or not an integer. */
static int key_col(ir_binder *b, ir_row row, int j, const char *name, int pos) {
  int col;
  const char *nm;
  int r = ir_lookup(b, row, true, NULL, name, k_rel[j], pos, &col, &nm);
  if (r < 0) return -1;
  if (r == 0) return ir_fail(b, pos, "expected %s to have a%s %s column", k_rel[j],
                             name[0] == 'i' ? "n" : "", name), -1;
  rt_type t = b->p->cols[col].type;
  if (!rt_type_is_int(t))
    return ir_fail(b, pos, "expected %s.%s to be an integer, but it is %s", k_rel[j], name,
                   t == RT_STR ? "a string" : "a double"), -1;
  return col;
}

/* The seeds' key: their id, else their only bare column. */
static int seed_col(ir_binder *b, ir_row row, int pos) {
  int col;
  const char *nm;
  int r = ir_lookup(b, row, true, NULL, "id", k_rel[2], pos, &col, &nm);
  if (r < 0) return -1;
  if (r == 0) {
    int nbare = 0;
    for (int i = 0; i < row.n; i++)
      if (!row.e[i].qonly) nbare++, col = row.e[i].col, nm = row.e[i].name;
    if (nbare != 1)
      return ir_fail(b, pos, "expected the seeds (FROM) to have an id column, or only one column"), -1;
  }
  rt_type t = b->p->cols[col].type;
  if (!rt_type_is_int(t))
    return ir_fail(b, pos, "expected the seeds' %s to be an integer, but it is %s", nm,
                   t == RT_STR ? "a string" : "a double"), -1;
  return col;
}

/* The alias a relation binds: its AS name, else a table's name. */
static const char *rel_qual(const fe_source *s) {
  return s->alias.name ? s->alias.name : s->kind == SRC_NAME || s->kind == SRC_CALL ? s->name : NULL;
}

int ir_bind_graph(ir_binder *b, const fe_source *src) {
  static const char *const stages[] = {"GRAPH DFS TREE", "GRAPH BFS TREE", "GRAPH DOMINATOR TREE"};
  int algo = src->kind == SRC_GRAPH_DFS   ? RT_GRAPH_DFS
             : src->kind == SRC_GRAPH_BFS ? RT_GRAPH_BFS
                                          : RT_GRAPH_DOMINATOR;
  const char *stage = stages[algo];
  ir_plan *p = b->p;
  b->stage = stage;
  if (src->nops != 3) return ir_fail(b, src->pos, "expected NODES, EDGES and FROM");
  ir_row rows[3];
  ir_op *bufs[3];
  int keys[4] = {-1, -1, -1, -1};
  for (int j = 0; j < 3; j++) {
    const fe_source *o = src->ops[j];
    if (!ir_bind_source(b, o, stage)) return 0;
    b->stage = stage;
    rows[j] = b->row;
    if (j == 0 && (keys[0] = key_col(b, rows[0], 0, "id", o->pos)) < 0) return 0;
    if (j == 1 && ((keys[1] = key_col(b, rows[1], 1, "src", o->pos)) < 0 ||
                   (keys[2] = key_col(b, rows[1], 1, "dst", o->pos)) < 0))
      return 0;
    if (j == 2 && (keys[3] = seed_col(b, rows[2], o->pos)) < 0) return 0;
    if (j == 0) {
      static const char *const added[] = {"parent_id", "depth"};
      for (int a = 0; a < 2; a++) {
        int col;
        const char *nm;
        int r = ir_lookup(b, rows[0], false, NULL, added[a], k_rel[0], o->pos, &col, &nm);
        if (r != 0)
          return r < 0 ? 0
                       : ir_fail(b, o->pos,
                                 "expected NODES not to have a column named %s, since the tree "
                                 "adds it: DROP or RENAME it first",
                                 nm);
      }
    }
    int *cols;
    int n = ir_iv_row_cols(b, rows[j], &cols);
    bufs[j] = ir_add_ivbuf(b, o->pos, n, cols);
  }
  ir_op *op = ir_op_add(b, IR_GRAPH, src->pos);
  struct ir_graph *g = &op->graph;
  g->algo = algo;
  for (int j = 0; j < 3; j++) {
    g->bufs[j] = bufs[j];
    bufs[j]->ivbuf.user = op;
  }
  g->id_col = keys[0];
  g->src_col = keys[1];
  g->dst_col = keys[2];
  g->seed_col = keys[3];
  g->parent_out = ir_col_new(p, "parent_id", RT_I64, true);
  g->depth_out = ir_col_new(p, "depth", RT_I64, false);

  ir_rowb rb = {0};
  for (int i = 0; i < rows[0].n; i++)
    if (!rows[0].e[i].qonly) ir_rowb_add(b, &rb, rows[0].e[i].name, rows[0].e[i].col, false);
  ir_rowb_add(b, &rb, "parent_id", g->parent_out, false);
  ir_rowb_add(b, &rb, "depth", g->depth_out, false);
  b->row = ir_rowb_done(&rb);
  ir_alias_set_one(b, rel_qual(src->ops[0]), b->row);
  return 1;
}
