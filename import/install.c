/*
 * install.c — puts a finished trace into an engine: im_trace_finish into
 * the catalog, then every table exposed to SQL as a virtual table.
 */
#include <sqlite3.h>

#include "runtime/sqlite/vtab.h"
#include "import.h"
#include "trace.h"

int im_install(im_trace *t, rt_catalog *cat, void *db, rt_err *err) {
  if (!im_trace_finish(t, cat, err)) return 0;
  for (const char *const *n = im_table_names(); *n; n++) {
    char *msg = NULL;
    if (rt_vtab_expose(db, *n, &msg) != SQLITE_OK) {
      rt_errorf(err, -1, "SQLite: cannot expose table '%s': %s", *n, msg ? msg : "unknown error");
      sqlite3_free(msg);
      return 0;
    }
  }
  return 1;
}
