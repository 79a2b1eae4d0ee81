/*
 * hooks.h — what the command-line tool (cli/) needs beyond pipejit.h, and
 * the only internal header it includes: observers of pj_engine_exec (its
 * --dump, --timing and --compare see every pipeline a script runs,
 * including those inside CREATE PERFETTO TABLE) and whether a text ends
 * with a complete statement (the shell's continuation prompt). Internal:
 * not part of the public API, not exported by libpipejit.so.
 */
#ifndef PJ_HOOKS_H
#define PJ_HOOKS_H

#include <stddef.h>

#include "pipejit.h"

/* Observers of pj_engine_exec, for tools (the CLI's --dump, --timing and
 * --compare). Internal: not part of the public API. Every member may be
 * NULL. */
typedef struct pj__hooks {
  void *ctx;
  /* Called with every pipeline the script runs (a pipeline statement or
   * CREATE PERFETTO TABLE … AS <pipeline>) after it is compiled and before
   * it runs. A non-zero return stops the script (status PJ_ERROR if the
   * hook recorded an error, else PJ_OK). The hook may run the query itself
   * (pj_query_run) and read its plan and code. */
  int (*before_run)(void *ctx, pj_query *q, const char *stmt_text, size_t stmt_len,
                    size_t stmt_offset);
  /* Called after every statement that succeeded, with its timing;
   * `pipeline` is 1 when it ran a pipeline (else SQLite did the work). */
  void (*after_stmt)(void *ctx, const char *stmt_text, size_t stmt_len, size_t stmt_offset,
                     const pj_timing *t, int pipeline);
  /* Called before every statement of the script runs (its text with the
   * comments before it; the CLI's --echo). */
  void (*before_stmt)(void *ctx, const char *stmt_text, size_t stmt_len, size_t stmt_offset);
} pj__hooks;

/* Installs observers for pj_engine_exec (replaces any previous ones). */
void pj__engine_set_hooks(pj_engine *e, const pj__hooks *h);

/* Makes sure the engine's JIT exists (it is made at the first compile
 * otherwise): PJ_ERROR with the reason as the engine's error when there
 * is none, because LLVM cannot be initialized here or the library was
 * built without it (PJ_WITH_LLVM=OFF). The CLI checks --mode jit with it
 * before running anything. */
pj_status pj__engine_jit(pj_engine *e);

/* The settings of `from` (mode, opt level, memory limit, module path)
 * given to `to`: the shell's .open makes a new engine with the user's
 * options. PJ_NOMEM or PJ_OK. */
pj_status pj__engine_copy_settings(pj_engine *to, const pj_engine *from);

/* 1 when text (len bytes) holds no unfinished statement: its last
 * statement ends with a ';' (not one inside a string, comment or
 * parentheses) or there is none — only blanks, ';'s and comments, every
 * block comment closed; like sqlite3_complete for scripts. */
int pj__script_complete(const char *text, size_t len);
/* 1 when text holds no statement at all (blanks, ';'s and comments). */
int pj__script_empty(const char *text, size_t len);

#endif
