/*
 * params.c — the engine's parameters (pj_engine_bind_*): named values
 * that every statement the engine runs reads for its $name, :name or
 * @name, as sqlite3's shell binds its parameter table to every
 * statement. The CLI's --param and the shell's .param set them.
 *
 * One name whatever the prefix: "$min", ":min", "@min" and "min" are the
 * same parameter (a user who sets min means it wherever the query spells
 * it). Two places read them: a handle's run (pj__query_engine_params,
 * called by query.c before it decides whether the plan is stale, so a
 * real or text value types the plan as a bound one would) and a SQL
 * statement once prepared (pj__sql_bind_params). A handle's own binding
 * wins: the engine's value fills only parameters the handle left unbound,
 * and is read again at every run, so changing it changes the next run.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "engine.h"

/* The name without its prefix; NULL for a numbered or empty name. */
static const char *bare(const char *name) {
  if (!name) return NULL;
  if (*name == '$' || *name == ':' || *name == '@') name++;
  if (!*name || (*name >= '0' && *name <= '9')) return NULL;
  return name;
}

/* The characters the lexer takes in a parameter name (frontend/lex.c). */
static int valid_name(const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (!(c == '_' || c == '$' || c >= 0x80 || (c >= '0' && c <= '9') ||
          ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')))
      return 0;
  }
  return 1;
}

static int find(const pj_engine *e, const char *bare_name) {
  for (int i = 0; i < e->nparams; i++)
    if (!strcmp(e->params[i].name, bare_name)) return i;
  return -1;
}

const pj__param *pj__param_find(const pj_engine *e, const char *name) {
  const char *b = bare(name);
  if (!b || !e->nparams || name[0] == b[0]) return NULL;   /* no prefix: not a named parameter */
  int i = find(e, b);
  return i < 0 ? NULL : &e->params[i];
}

static void clear_value(pj__param *p) {
  free((char *)p->v.s);
  memset(&p->v, 0, sizeof p->v);
  p->v.name = p->name;
}

/* The slot for name, new or old (its value cleared), or NULL with the
 * engine's error set. */
static pj__param *slot(pj_engine *e, const char *name) {
  pj__clear_error(e);
  const char *b = bare(name);
  if (!b || !valid_name(b)) {
    pj__failf(e, "parameter '%s': expected a name ($name, :name, @name or name)",
              name ? name : "");
    return NULL;
  }
  int i = find(e, b);
  if (i >= 0) {
    clear_value(&e->params[i]);
    return &e->params[i];
  }
  if (e->nparams == e->cap_params) {
    int cap = e->cap_params ? e->cap_params * 2 : 8;
    pj__param *np = realloc(e->params, (size_t)cap * sizeof *np);
    if (!np) {
      pj__failf(e, "parameter '%s': out of memory", name);
      return NULL;
    }
    e->params = np;
    e->cap_params = cap;
  }
  pj__param *p = &e->params[e->nparams];
  memset(p, 0, sizeof *p);
  if (!(p->name = strdup(b))) {
    pj__failf(e, "parameter '%s': out of memory", name);
    return NULL;
  }
  p->v.name = p->name;
  e->nparams++;
  return p;
}

pj_status pj_engine_bind_int64(pj_engine *e, const char *name, int64_t v) {
  pj__param *p = slot(e, name);
  if (!p) return PJ_ERROR;
  p->v.type = PJ_TYPE_INT64;
  p->v.i = v;
  return PJ_OK;
}

pj_status pj_engine_bind_double(pj_engine *e, const char *name, double v) {
  pj__param *p = slot(e, name);
  if (!p) return PJ_ERROR;
  p->v.type = PJ_TYPE_DOUBLE;
  p->v.d = v;
  return PJ_OK;
}

pj_status pj_engine_bind_text(pj_engine *e, const char *name, const char *s, size_t len) {
  char *copy = malloc(len + 1);
  if (!copy) return pj__failf(e, "parameter '%s': out of memory", name ? name : "");
  if (len) memcpy(copy, s, len);
  copy[len] = 0;
  pj__param *p = slot(e, name);
  if (!p) {
    free(copy);
    return PJ_ERROR;
  }
  p->v.type = PJ_TYPE_STRING;
  p->v.s = copy;
  p->v.len = len;
  return PJ_OK;
}

pj_status pj_engine_bind_null(pj_engine *e, const char *name) {
  pj__param *p = slot(e, name);
  if (!p) return PJ_ERROR;
  p->v.is_null = 1;
  return PJ_OK;
}

pj_status pj_engine_unbind(pj_engine *e, const char *name) {
  pj__clear_error(e);
  const char *b = bare(name);
  int i = b ? find(e, b) : -1;
  if (i < 0) return pj__failf(e, "parameter '%s' has no value", name ? name : "");
  clear_value(&e->params[i]);
  free(e->params[i].name);
  memmove(&e->params[i], &e->params[i + 1], (size_t)(e->nparams - i - 1) * sizeof *e->params);
  e->nparams--;
  for (int k = 0; k < e->nparams; k++) e->params[k].v.name = e->params[k].name;
  return PJ_OK;
}

void pj_engine_clear_bindings(pj_engine *e) {
  for (int i = 0; i < e->nparams; i++) {
    clear_value(&e->params[i]);
    free(e->params[i].name);
  }
  e->nparams = 0;
}

void pj__params_free(pj_engine *e) {
  pj_engine_clear_bindings(e);
  free(e->params);
  e->params = NULL;
  e->cap_params = 0;
}

int pj_engine_param_count(const pj_engine *e) { return e->nparams; }

pj_status pj_engine_param(const pj_engine *e, int i, pj_param *out) {
  if (i < 0 || i >= e->nparams) return PJ_ERROR;
  *out = e->params[i].v;
  return PJ_OK;
}

/* ---- where statements read them ----------------------------------------- */

int pj__sql_bind_params(const pj_engine *e, void *stmt) {
  sqlite3_stmt *q = stmt;
  if (!e->nparams) return SQLITE_OK;
  int n = sqlite3_bind_parameter_count(q);
  for (int k = 1; k <= n; k++) {
    const pj__param *p = pj__param_find(e, sqlite3_bind_parameter_name(q, k));
    if (!p) continue;
    int rc = p->v.is_null                 ? sqlite3_bind_null(q, k)
             : p->v.type == PJ_TYPE_INT64 ? sqlite3_bind_int64(q, k, p->v.i)
             : p->v.type == PJ_TYPE_DOUBLE
                 ? sqlite3_bind_double(q, k, p->v.d)
                 : sqlite3_bind_text64(q, k, p->v.s, p->v.len, SQLITE_TRANSIENT, SQLITE_UTF8);
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}
