/*
 * export.c — writes an imported trace into a SQLite file the way
 * trace_processor_shell's export does (TRACES.md §4): the __intrinsic_*
 * tables as plain tables, the user views over them with trace_processor's
 * definitions, and — a superset — `_trace_bounds` and the typed track
 * tables materialized, so that every view of the file resolves.
 *
 * The rows are copied by SQLite itself (CREATE TABLE … AS SELECT from the
 * engine's virtual tables) into a database attached for the purpose.
 */
#include <stdio.h>
#include <unistd.h>

#include <sqlite3.h>

#include "export.h"

/* Plain tables: name in the file, and the SELECT over the engine's tables. */
static const char *const tables[][2] = {
    {"__intrinsic_slice",
     "SELECT id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id, thread_ts,"
     " thread_dur, thread_instruction_count, thread_instruction_delta FROM temp.slice"},
    {"__intrinsic_thread",
     "SELECT utid, tid, name, start_ts, end_ts, upid, is_main_thread, is_idle, machine_id,"
     " arg_set_id FROM temp.thread"},
    {"__intrinsic_process",
     "SELECT upid, pid, name, start_ts, end_ts, parent_upid, uid, android_appid,"
     " android_user_id, cmdline, arg_set_id, machine_id FROM temp.process"},
    {"__intrinsic_track", "SELECT * FROM temp.__intrinsic_track"},
    {"__intrinsic_counter", "SELECT * FROM temp.counter"},
    {"__intrinsic_sched_slice", "SELECT * FROM temp.sched_slice"},
    {"__intrinsic_thread_state", "SELECT * FROM temp.thread_state"},
    {"__intrinsic_state", "SELECT * FROM temp.state"},
    {"__intrinsic_flow", "SELECT * FROM temp.flow"},
    {"__intrinsic_args", "SELECT * FROM temp.args"},
    {"__intrinsic_metadata", "SELECT * FROM temp.metadata"},
    {"__intrinsic_stats", "SELECT * FROM temp.stats"},
    {"__intrinsic_cpu", "SELECT * FROM temp.cpu"},
    {"__intrinsic_ftrace_event", "SELECT * FROM temp.ftrace_event"},
    {"__intrinsic_trace_file", "SELECT * FROM temp.trace_file"},
    {"__intrinsic_machine", "SELECT * FROM temp.machine"},
    {"_trace_bounds", "SELECT * FROM temp.trace_bounds"},
    {"thread_track", "SELECT * FROM temp.thread_track"},
    {"process_track", "SELECT * FROM temp.process_track"},
    {"cpu_track", "SELECT * FROM temp.cpu_track"},
    {"cpu_counter_track", "SELECT * FROM temp.cpu_counter_track"},
    {"process_counter_track", "SELECT * FROM temp.process_counter_track"},
    {"thread_counter_track", "SELECT * FROM temp.thread_counter_track"},
    {"state_track", "SELECT * FROM temp.state_track"},
    {"process_state_track", "SELECT * FROM temp.process_state_track"},
    {"thread_state_track", "SELECT * FROM temp.thread_state_track"},
};

/* Views, in dependency order. */
static const char *const views[][2] = {
    {"slice", "SELECT *, category AS cat, id AS slice_id FROM __intrinsic_slice"},
    {"slices", "SELECT * FROM slice"},
    {"instant", "SELECT ts, track_id, name, arg_set_id FROM slice WHERE dur = 0"},
    {"thread",
     "SELECT utid, utid AS id, tid, name, start_ts, end_ts, upid, is_main_thread, is_idle,"
     " machine_id, arg_set_id FROM __intrinsic_thread"},
    {"process",
     "SELECT upid, upid AS id, pid, name, start_ts, end_ts, parent_upid, uid, android_appid,"
     " android_user_id, cmdline, arg_set_id, machine_id FROM __intrinsic_process"},
    {"track",
     "SELECT id, name, type, dimension_arg_set_id, parent_id, source_arg_set_id, machine_id,"
     " track_group_id FROM __intrinsic_track"},
    {"counter_track",
     "SELECT id, name, parent_id, type, dimension_arg_set_id, source_arg_set_id, machine_id,"
     " counter_unit AS unit, description FROM __intrinsic_track WHERE event_type = 'counter'"},
    {"counter", "SELECT * FROM __intrinsic_counter"},
    {"counters",
     "SELECT v.*, t.name, t.unit FROM counter v JOIN counter_track t ON v.track_id = t.id"
     " ORDER BY ts"},
    {"sched_slice", "SELECT * FROM __intrinsic_sched_slice"},
    {"sched", "SELECT *, ts + dur AS ts_end FROM __intrinsic_sched_slice"},
    {"thread_state", "SELECT * FROM __intrinsic_thread_state"},
    {"state", "SELECT * FROM __intrinsic_state"},
    {"flow", "SELECT * FROM __intrinsic_flow"},
    {"args", "SELECT * FROM __intrinsic_args"},
    {"metadata", "SELECT * FROM __intrinsic_metadata"},
    {"stats", "SELECT * FROM __intrinsic_stats"},
    {"cpu", "SELECT * FROM __intrinsic_cpu WHERE cpu IS NOT NULL"},
    {"ftrace_event", "SELECT * FROM __intrinsic_ftrace_event"},
    {"raw", "SELECT * FROM ftrace_event"},
    {"trace_file", "SELECT * FROM __intrinsic_trace_file"},
    {"machine", "SELECT * FROM __intrinsic_machine"},
    {"trace_bounds", "SELECT * FROM _trace_bounds"},
};

static int run(sqlite3 *db, const char *sql, rt_err *err) {
  char *msg = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK) return 1;
  rt_errorf(err, -1, "EXPORT: %s", msg ? msg : sqlite3_errmsg(db));
  sqlite3_free(msg);
  return 0;
}

int im_export(void *dbp, rt_catalog *cat, const char *path, rt_err *err) {
  sqlite3 *db = dbp;
  if (!rt_catalog_get(cat, "__intrinsic_track") || !rt_catalog_get(cat, "slice"))
    return rt_errorf(err, -1, "EXPORT: no trace has been imported");
  if (unlink(path) != 0 && access(path, F_OK) == 0)
    return rt_errorf(err, -1, "EXPORT: cannot replace '%s'", path);
  char *sql = sqlite3_mprintf("ATTACH %Q AS pj_export", path);
  int ok = sql && run(db, sql, err);
  sqlite3_free(sql);
  if (!ok) return 0;
  ok = run(db, "BEGIN", err);
  for (size_t i = 0; ok && i < sizeof tables / sizeof *tables; i++) {
    sql = sqlite3_mprintf("CREATE TABLE pj_export.\"%w\" AS %s", tables[i][0], tables[i][1]);
    ok = sql && run(db, sql, err);
    sqlite3_free(sql);
  }
  for (size_t i = 0; ok && i < sizeof views / sizeof *views; i++) {
    sql = sqlite3_mprintf("CREATE VIEW pj_export.\"%w\" AS %s", views[i][0], views[i][1]);
    ok = sql && run(db, sql, err);
    sqlite3_free(sql);
  }
  rt_err ignore = {.offset = -1};
  if (ok) ok = run(db, "COMMIT", err);
  else run(db, "ROLLBACK", &ignore);
  run(db, "DETACH pj_export", ok ? err : &ignore);
  if (!ok) unlink(path);
  return ok && !err->set;
}
