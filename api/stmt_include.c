/*
 * stmt_include.c — INCLUDE PERFETTO MODULE (LANGUAGE.md §7.4) and the
 * module path.
 *
 * Module a.b.c is the file a/b/c.sql in the first folder of the module
 * path that has it. The path is, in this order: the folders given to
 * pj_engine_add_module_path (the CLI's --module-path), the folders of
 * PIPEJIT_MODULE_PATH (`:`-separated, read at each INCLUDE), then the
 * modules that come with pipejit (modules/ of the source tree), found
 * next to the library or program: <dir>/../share/pipejit/modules when
 * installed, <dir>/modules in the build tree (CMake copies them there).
 * A folder earlier in the path hides a module of the same name later.
 *
 * A module runs once per engine: it counts as included from the moment
 * it starts (so a module that includes itself, directly or not, stops
 * there), and a second INCLUDE does nothing. `a.b.*` includes every
 * module under a/b/, at any depth, in name order.
 *
 * A module that fails leaves nothing behind: definitions, columnar
 * tables, SQLite objects and the included list go back to what they were
 * before the INCLUDE (defs.c's snapshot), and the error names the module,
 * its file, and the line and column in it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "defs.h"

#define STAGE "INCLUDE PERFETTO MODULE"
/* Includes nested deeper than this are refused (each holds a file and a
 * savepoint); a cycle never gets there, since a module counts as
 * included as soon as it starts. */
#define MAX_INCLUDE_DEPTH 64

/* ---- the module path -------------------------------------------------- */

static char **str_push(char ***v, int *n, int *cap, const char *s) {
  if (*n == *cap) {
    int c = *cap ? *cap * 2 : 8;
    char **nv = realloc(*v, sizeof *nv * (size_t)c);
    if (!nv) return NULL;
    *v = nv;
    *cap = c;
  }
  char *copy = strdup(s);
  if (!copy) return NULL;
  (*v)[(*n)++] = copy;
  return *v;
}

pj_status pj_engine_add_module_path(pj_engine *e, const char *dir) {
  pj__clear_error(e);
  if (!dir || !*dir) return pj__failf(e, "module path: the folder name is empty");
  pj_defs *d = e->defs;
  for (int i = 0; i < d->npaths; i++)
    if (!strcmp(d->paths[i], dir)) return PJ_OK;
  if (!str_push(&d->paths, &d->npaths, &d->cappaths, dir)) return PJ_NOMEM;
  return PJ_OK;
}

/* The folder pipejit's own modules are in, or NULL: next to the binary
 * that holds this code (the shared library, or a program linked with the
 * static one), installed or in the build tree. */
static const char *builtin_dir(char *buf, size_t cap) {
  Dl_info info;
  if (!dladdr((void *)pj_engine_add_module_path, &info) || !info.dli_fname) return NULL;
  char path[PATH_MAX];
  if (!realpath(info.dli_fname, path)) return NULL;
  char *slash = strrchr(path, '/');
  if (!slash) return NULL;
  *slash = 0;
  static const char *const rel[] = {"/../share/pipejit/modules", "/modules"};
  for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
    struct stat sb;
    snprintf(buf, cap, "%s%s", path, rel[i]);
    if (stat(buf, &sb) == 0 && S_ISDIR(sb.st_mode)) return buf;
  }
  return NULL;
}

/* The whole path, in search order (strings owned by `out`). */
typedef struct modpath {
  int n, cap;
  char **dirs;
} modpath;

static void path_free(modpath *m) {
  for (int i = 0; i < m->n; i++) free(m->dirs[i]);
  free(m->dirs);
}

static int path_build(pj_engine *e, modpath *m) {
  memset(m, 0, sizeof *m);
  for (int i = 0; i < e->defs->npaths; i++)
    if (!str_push(&m->dirs, &m->n, &m->cap, e->defs->paths[i])) return 0;
  const char *env = getenv("PIPEJIT_MODULE_PATH");
  while (env && *env) {
    const char *colon = strchr(env, ':');
    size_t n = colon ? (size_t)(colon - env) : strlen(env);
    if (n > 0 && n < PATH_MAX) {
      char dir[PATH_MAX];
      memcpy(dir, env, n);
      dir[n] = 0;
      if (!str_push(&m->dirs, &m->n, &m->cap, dir)) return 0;
    }
    env = colon ? colon + 1 : NULL;
  }
  char buf[PATH_MAX + 64];
  const char *own = builtin_dir(buf, sizeof buf);
  if (own && !str_push(&m->dirs, &m->n, &m->cap, own)) return 0;
  return 1;
}

/* "/a, /b" for messages. */
static void path_list(const modpath *m, char *out, size_t cap) {
  size_t at = 0;
  out[0] = 0;
  for (int i = 0; i < m->n && at + 1 < cap; i++)
    at += (size_t)snprintf(out + at, cap - at, "%s%s", i ? ", " : "", m->dirs[i]);
}

/* ---- finding modules ------------------------------------------------ */

/* a.b.c → a/b/c (into buf). */
static void rel_path(const char *name, char *buf, size_t cap) {
  snprintf(buf, cap, "%s", name);
  for (char *p = buf; *p; p++)
    if (*p == '.') *p = '/';
}

typedef struct found {
  char *name;           /* a.b.c */
  char *file;           /* its file */
} found;

typedef struct foundlist {
  int n, cap;
  found *v;
} foundlist;

static void found_free(foundlist *f) {
  for (int i = 0; i < f->n; i++) {
    free(f->v[i].name);
    free(f->v[i].file);
  }
  free(f->v);
}

static int found_add(foundlist *f, const char *name, const char *file) {
  for (int i = 0; i < f->n; i++)
    if (!strcmp(f->v[i].name, name)) return 1;   /* an earlier folder has it */
  if (f->n == f->cap) {
    int c = f->cap ? f->cap * 2 : 16;
    found *nv = realloc(f->v, sizeof *nv * (size_t)c);
    if (!nv) return 0;
    f->v = nv;
    f->cap = c;
  }
  f->v[f->n].name = strdup(name);
  f->v[f->n].file = strdup(file);
  if (!f->v[f->n].name || !f->v[f->n].file) {
    free(f->v[f->n].name);
    free(f->v[f->n].file);
    return 0;
  }
  f->n++;
  return 1;
}

/* A name part of a module: letters, digits, '_' (what a.b.c can spell). */
static bool module_word(const char *s, size_t n) {
  if (!n) return false;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (!(((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  }
  return true;
}

/* Every module under folder dir (whose module prefix is `prefix`). */
static int collect(const char *dir, const char *prefix, foundlist *f, int depth) {
  if (depth > 32) return 1;
  DIR *d = opendir(dir);
  if (!d) return 1;
  struct dirent *de;
  int ok = 1;
  while (ok && (de = readdir(d))) {
    const char *nm = de->d_name;
    size_t n = strlen(nm);
    if (nm[0] == '.') continue;
    char path[PATH_MAX], name[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, nm);
    struct stat sb;
    if (stat(path, &sb) != 0) continue;
    if (S_ISDIR(sb.st_mode)) {
      if (!module_word(nm, n)) continue;
      snprintf(name, sizeof name, "%s.%s", prefix, nm);
      ok = collect(path, name, f, depth + 1);
    } else if (n > 4 && !strcmp(nm + n - 4, ".sql") && module_word(nm, n - 4)) {
      snprintf(name, sizeof name, "%s.%.*s", prefix, (int)(n - 4), nm);
      ok = found_add(f, name, path);
    }
  }
  closedir(d);
  return ok;
}

static int cmp_found(const void *a, const void *b) {
  return strcmp(((const found *)a)->name, ((const found *)b)->name);
}

/* The modules `spec` names (a.b.c, or a.b.* for all under a/b), from
 * the first folder that has each. 0 when out of memory. */
static int find_modules(const modpath *m, const char *spec, foundlist *f) {
  size_t n = strlen(spec);
  bool star = n >= 2 && !strcmp(spec + n - 2, ".*");
  char rel[PATH_MAX], path[PATH_MAX + 8];
  if (star) {
    char prefix[PATH_MAX];
    snprintf(prefix, sizeof prefix, "%.*s", (int)(n - 2), spec);
    rel_path(prefix, rel, sizeof rel);
    for (int i = 0; i < m->n; i++) {
      snprintf(path, sizeof path, "%s/%s", m->dirs[i], rel);
      if (!collect(path, prefix, f, 0)) return 0;
    }
    if (f->n > 1) qsort(f->v, (size_t)f->n, sizeof *f->v, cmp_found);
    return 1;
  }
  rel_path(spec, rel, sizeof rel);
  for (int i = 0; i < m->n; i++) {
    snprintf(path, sizeof path, "%s/%s.sql", m->dirs[i], rel);
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) return found_add(f, spec, path);
  }
  return 1;
}

/* ---- running a module ------------------------------------------------ */

static bool included(pj_defs *d, const char *name) {
  for (int i = 0; i < d->nincluded; i++)
    if (!strcmp(d->included[i], name)) return true;
  return false;
}

/* The file's bytes (malloc'd, NUL-terminated), or NULL with errno set. */
static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  rt_buf b = {0};
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) rt_buf_append(&b, chunk, n);
  int bad = ferror(f);
  fclose(f);
  rt_buf_append(&b, "", 1);
  if (bad || b.failed || !b.data) {   /* a module is run whole or not at all */
    int why = bad ? EIO : ENOMEM;
    rt_buf_free(&b);
    errno = why;
    return NULL;
  }
  *len = b.len - 1;
  return b.data;
}

/* Runs one module's file; an error is rewritten to name it. */
static pj_status run_module(pj_engine *e, const found *m, const char *script, int pos) {
  rt_err err = {.offset = -1};
  size_t len = 0;
  char *text = read_file(m->file, &len);
  if (!text) {
    if (errno == ENOMEM) rt_errorf(&err, pos, STAGE ": out of memory reading module '%s'", m->name);
    else rt_errorf(&err, pos, STAGE ": cannot read module '%s' (%s): %s", m->name, m->file,
                   strerror(errno));
    return pj__fail(e, &err, script);
  }
  pj_defs *d = e->defs;
  if (!str_push(&d->included, &d->nincluded, &d->capincluded, m->name)) {
    free(text);
    return pj__failf(e, STAGE ": out of memory");
  }
  d->include_depth++;
  pj_status s = pj__exec_text(e, text, len);
  d->include_depth--;
  if (s != PJ_OK && e->err.set) {
    char where[64] = "";
    if (e->errline > 0) snprintf(where, sizeof where, ", line %d, column %d", e->errline, e->errcol);
    char msg[sizeof e->err.msg];
    snprintf(msg, sizeof msg, "%s", e->err.msg);
    rt_err wrapped = {.offset = -1};
    /* an INCLUDE inside the module already named its own module */
    rt_errorf(&wrapped, pos, STAGE ": in module %s (%s%s): %s", m->name, m->file, where,
              strncmp(msg, STAGE ": ", sizeof STAGE + 1) ? msg : msg + sizeof STAGE + 1);
    pj__fail(e, &wrapped, script);
  }
  free(text);
  return s;
}

pj_status pj__exec_include(pj_engine *e, const char *script, const fe_stmt *st) {
  rt_err err = {.offset = -1};
  pj_defs *d = e->defs;
  if (d->include_depth >= MAX_INCLUDE_DEPTH) {
    rt_errorf(&err, st->modulepos, STAGE ": modules include each other more than %d deep",
              MAX_INCLUDE_DEPTH);
    return pj__fail(e, &err, script);
  }
  modpath mp;
  foundlist f = {0};
  if (!path_build(e, &mp) || !find_modules(&mp, st->module, &f)) {
    path_free(&mp);
    found_free(&f);
    return pj__failf(e, STAGE ": out of memory");
  }
  if (f.n == 0) {
    char dirs[1024], rel[PATH_MAX];
    path_list(&mp, dirs, sizeof dirs);
    size_t n = strlen(st->module);
    bool star = n >= 2 && !strcmp(st->module + n - 2, ".*");
    rel_path(st->module, rel, sizeof rel);
    if (star) rel[n - 1] = 0;   /* a/b/ */
    if (mp.n == 0)
      rt_errorf(&err, st->modulepos,
                STAGE ": no module '%s': the module path is empty (give folders with "
                "--module-path, PIPEJIT_MODULE_PATH or pj_engine_add_module_path)",
                st->module);
    else if (star)
      rt_errorf(&err, st->modulepos, STAGE ": no modules under '%s' (%s) in the module path: %s",
                st->module, rel, dirs);
    else
      rt_errorf(&err, st->modulepos, STAGE ": no module '%s' (%s.sql) in the module path: %s",
                st->module, rel, dirs);
    path_free(&mp);
    return pj__fail(e, &err, script);
  }
  path_free(&mp);
  pj_snapshot snap;
  pj_status s = PJ_OK;
  bool any = false;
  for (int i = 0; i < f.n && !any; i++) any = !included(d, f.v[i].name);
  if (any && (s = pj__snapshot_take(e, &snap)) != PJ_OK) {
    found_free(&f);
    return pj__failf(e, STAGE ": out of memory");
  }
  for (int i = 0; i < f.n && s == PJ_OK; i++)
    if (!included(d, f.v[i].name)) s = run_module(e, &f.v[i], script, st->modulepos);
  if (any) {
    if (s == PJ_OK) pj__snapshot_release(e, &snap);
    else pj__snapshot_restore(e, &snap);
  }
  found_free(&f);
  return s;
}
