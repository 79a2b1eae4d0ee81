/*
 * errors.c — the engine's sticky error (pj__fail: the message, its offset
 * in the script and its line/column) and its interrupt flag: the bottom
 * of api/, which every other file of it reports through.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "engine.h"

/* ---- errors ----------------------------------------------------------- */

pj_status pj__fail(pj_engine *e, const rt_err *err, const char *text) {
  e->err = *err;
  e->err.set = 1;
  e->errtext = text;
  e->errline = e->errcol = 0;
  if (text && err->offset >= 0) fe_line_col(text, err->offset, &e->errline, &e->errcol);
  return PJ_ERROR;
}

pj_status pj__failf(pj_engine *e, const char *fmt, ...) {
  rt_err err = {.set = 1, .offset = -1};
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err.msg, sizeof err.msg, fmt, ap);
  va_end(ap);
  return pj__fail(e, &err, NULL);
}

pj_status pj__nomem_msg(pj_engine *e, pj_status s) {
  if (s == PJ_NOMEM && !e->err.set) pj__failf(e, "out of memory");
  return s;
}

/* Forgets the previous error: every call that can fail starts clean.
 * Cheap (calls run it per bind and per run, a table function's per row
 * of a join): the message is read only while set, so it is not wiped. */
void pj__clear_error(pj_engine *e) {
  e->err.set = 0;
  e->err.msg[0] = 0;
  e->err.offset = -1;
  e->errtext = NULL;
  e->errline = e->errcol = 0;
}

const char *pj_engine_errmsg(const pj_engine *e) { return e->err.set ? e->err.msg : ""; }
int pj_engine_errline(const pj_engine *e) { return e->errline; }
int pj_engine_errcol(const pj_engine *e) { return e->errcol; }
int pj_engine_erroffset(const pj_engine *e) { return e->err.set ? e->err.offset : -1; }

/* ---- interrupts ------------------------------------------------------- */

/* Only an atomic store and sqlite3_interrupt (itself an atomic store on
 * the connection, documented as callable from other threads): safe in a
 * signal handler and from another thread. The driver reads the flag
 * before every batch; SQLite checks its own at its next VM step. */
void pj_engine_interrupt(pj_engine *e) {
  if (!e) return;
  __atomic_store_n(&e->interrupt, 1, __ATOMIC_RELAXED);
  if (e->db) sqlite3_interrupt(e->db);
}

void pj__begin_run(pj_engine *e) {
  if (e->exec_depth == 0) __atomic_store_n(&e->interrupt, 0, __ATOMIC_RELAXED);
}

int pj__interrupted(const pj_engine *e) { return __atomic_load_n(&e->interrupt, __ATOMIC_RELAXED); }
