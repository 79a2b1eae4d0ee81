/*
 * catalog.c — the engine's finalized tables by name (ASCII
 * case-insensitive), in creation order. The catalog holds one reference to
 * each table; a running query takes its own, so replacing or dropping a
 * table never frees data a query is still reading.
 */
#include <stdlib.h>

#include "rt.h"

struct rt_catalog {
  int n, cap;
  rt_table **tables;
};

rt_catalog *rt_catalog_new(void) { return calloc(1, sizeof(rt_catalog)); }

void rt_catalog_free(rt_catalog *c) {
  if (!c) return;
  for (int i = 0; i < c->n; i++) rt_table_unref(c->tables[i]);
  free(c->tables);
  free(c);
}

static int find(const rt_catalog *c, const char *name) {
  for (int i = 0; i < c->n; i++)
    if (rt_strieq(c->tables[i]->name, name)) return i;
  return -1;
}

rt_table *rt_catalog_get(rt_catalog *c, const char *name) {
  int i = find(c, name);
  return i < 0 ? NULL : c->tables[i];
}

bool rt_catalog_put(rt_catalog *c, rt_table *t) {
  int i = find(c, t->name);
  if (i >= 0) {
    /* Replace in place: the old table lives on while queries hold it. */
    rt_table *old = c->tables[i];
    c->tables[i] = t;
    rt_table_unref(old);
    return true;
  }
  if (c->n == c->cap) {
    int cap = c->cap ? c->cap * 2 : 8;
    rt_table **nt = realloc(c->tables, (size_t)cap * sizeof *nt);
    if (!nt) {
      rt_table_unref(t);   /* we were given the reference; do not leak it */
      return false;
    }
    c->tables = nt;
    c->cap = cap;
  }
  c->tables[c->n++] = t;
  return true;
}

void rt_catalog_remove(rt_catalog *c, const char *name) {
  int i = find(c, name);
  if (i < 0) return;
  rt_table *t = c->tables[i];
  memmove(c->tables + i, c->tables + i + 1, (size_t)(c->n - i - 1) * sizeof *c->tables);
  c->n--;
  rt_table_unref(t);
}

int rt_catalog_count(const rt_catalog *c) { return c->n; }

rt_table *rt_catalog_at(rt_catalog *c, int i) { return i >= 0 && i < c->n ? c->tables[i] : NULL; }
