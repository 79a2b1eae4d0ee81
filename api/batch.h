/*
 * batch.h — what the two halves of batch mode share: the layout of a
 * part file (batch_run.c writes one per trace, batch_merge.c reads it
 * into the output).
 *
 * A part file is a SQLite database holding
 *   __pj_batch_stmts(ord INTEGER, name TEXT, line INTEGER)
 * one row per statement that returned rows, in script order (ord 1, 2, …;
 * `name` the output table's name, `line` the statement's first line in
 * the script), and for each a table s<ord> with the statement's result
 * columns (names made unique, declared INTEGER, REAL or TEXT) and its rows
 * in result order (rowid order).
 */
#ifndef PJ_BATCH_H
#define PJ_BATCH_H

#define PJ_BATCH_STMTS "__pj_batch_stmts"
/* The column batch mode adds in front of every result's own. */
#define PJ_BATCH_TRACE_COL "trace"
/* The output's table of failed traces. */
#define PJ_BATCH_ERRORS "batch_errors"

#endif
