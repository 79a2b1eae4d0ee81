/*
 * sqlite3_api.h — forced first include (-include) of every object built
 * into the loadable extension (build/pipejit_sqlite.so).
 *
 * The library's sources call sqlite3_* directly. Inside an extension they
 * must instead call the host's SQLite through the routine table it hands
 * to the entry point: the host may have SQLite linked in statically, and
 * two copies of SQLite on one connection would corrupt it. sqlite3ext.h
 * turns every sqlite3_xxx call into sqlite3_api->xxx; including it first
 * makes the sources' own `#include <sqlite3.h>` a no-op (header guard), so
 * the same sources compile unchanged. ext/pipejit_sqlite.c defines
 * sqlite3_api (SQLITE_EXTENSION_INIT1).
 */
#ifndef PJ_EXT_SQLITE3_API_H
#define PJ_EXT_SQLITE3_API_H
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#endif
