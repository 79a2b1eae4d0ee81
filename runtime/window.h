/*
 * window.h — window functions (LANGUAGE.md §8) over a WINDOW op's buffer.
 *
 * The WINDOW breaker buffers its input rows (a rowbuf, as SORT does);
 * when the input ends the driver adds one column per window call to that
 * buffer and calls rt_window_run, which sorts the rows once per distinct
 * window (partition keys, then order keys), finds the partitions and the
 * peer groups in that order and writes each call's value into its column
 * at the row's own (input) position. The next segment then reads the
 * buffer in input order, as the stage keeps the input's row order.
 *
 * Values are SQLite's (window.c of SQLite 3.40): ranking over peers,
 * LAG/LEAD by position in the partition with a per-row offset and
 * default, frames of ROWS, GROUPS (peer groups) and RANGE (by the one
 * order key's value; the default frame is RANGE BETWEEN UNBOUNDED
 * PRECEDING AND CURRENT ROW) over which FIRST_VALUE, LAST_VALUE,
 * NTH_VALUE and the aggregates are computed. Every frame's start and end only move forwards within a
 * partition, so each aggregate is one pass: prefix counts and exact
 * (128-bit) prefix sums for integers, a compensated running sum for
 * doubles (adding rows that enter, removing rows that leave), and a
 * monotonic deque for MIN and MAX. Nothing is O(rows × frame).
 */
#ifndef PJ_WINDOW_H
#define PJ_WINDOW_H

#include "store.h"

/* The window functions, in ir/windows.def's order (ir_wins[] is indexed
 * by this). */
typedef enum rt_winfn {
  RT_WIN_ROW_NUMBER, RT_WIN_RANK, RT_WIN_DENSE_RANK, RT_WIN_PERCENT_RANK, RT_WIN_CUME_DIST,
  RT_WIN_NTILE, RT_WIN_LAG, RT_WIN_LEAD, RT_WIN_FIRST_VALUE, RT_WIN_LAST_VALUE,
  RT_WIN_NTH_VALUE, RT_WIN_COUNT_STAR, RT_WIN_COUNT, RT_WIN_SUM, RT_WIN_TOTAL, RT_WIN_AVG,
  RT_WIN_MIN, RT_WIN_MAX,
  RT_WIN__COUNT
} rt_winfn;

/* Frame bounds and units (SQL's). A frame starts at `start` and ends at
 * `end`, both inclusive; for RANGE and GROUPS, CURRENT ROW is the first
 * (start) or last (end) peer of the current row. */
typedef enum rt_winbound {
  RT_WB_UNBOUNDED_PRECEDING, RT_WB_PRECEDING, RT_WB_CURRENT, RT_WB_FOLLOWING,
  RT_WB_UNBOUNDED_FOLLOWING,
} rt_winbound;
typedef enum rt_winunit { RT_WU_ROWS, RT_WU_RANGE, RT_WU_GROUPS } rt_winunit;

/* n PRECEDING / FOLLOWING: rows (ROWS), peer groups (GROUPS) or, for
 * RANGE, the distance of the one order key's value from the current
 * row's (start_d / end_d, a number; start_n / end_n when it is whole). */
typedef struct rt_winframe {
  rt_winunit unit;
  rt_winbound start, end;
  int64_t start_n, end_n;   /* >= 0 */
  double start_d, end_d;
} rt_winframe;

/* One distinct window: keys[0..npart) partition (any order groups them;
 * NULLs form one partition), keys[npart..nkeys) order the rows within a
 * partition. Columns are the buffer's. */
typedef struct rt_winspec {
  int nkeys, npart;
  const rt_sortkey *keys;
} rt_winspec;

/* One call. arg: buffer column of the value (-1: none, COUNT(*)); narg:
 * buffer column of LAG/LEAD's offset, NTILE's or NTH_VALUE's n (-1: the
 * constant n); dflt: LAG/LEAD's default (-1: NULL). out: the buffer
 * column written, of the call's output stored type (SUM: the argument's;
 * LAG/LEAD/FIRST/LAST/NTH/MIN/MAX: the argument's, which the default has
 * too; the ranks and counts RT_I64; PERCENT_RANK, CUME_DIST, TOTAL, AVG
 * RT_F64). stage and pos name it in errors. */
typedef struct rt_wincall {
  rt_winfn fn;
  int spec;
  int arg, narg, dflt;
  int64_t n;
  rt_winframe frame;
  int out;
  const char *stage;
  int pos;
} rt_wincall;

/* Computes every call over b's rows into its out column (which must
 * exist, every row NULL). Returns 0, or -1 with err set: "<stage>:
 * integer overflow", the argument errors SQLite gives ("argument of
 * ntile must be a positive integer", "second argument to nth_value must
 * be a positive integer"), or out of memory. */
int rt_window_run(rt_rowbuf *b, int nspecs, const rt_winspec *specs, int ncalls,
                  const rt_wincall *calls, const rt_strpool *sp, rt_err *err);

/* Whether call fn reads its frame (the aggregates, FIRST_VALUE,
 * LAST_VALUE, NTH_VALUE); the others ignore it, as in SQLite. */
bool rt_win_uses_frame(rt_winfn fn);

#endif
