/*
 * export.h — an imported trace into a SQLite file (TRACES.md §4).
 */
#ifndef PJ_IMPORT_EXPORT_H
#define PJ_IMPORT_EXPORT_H

#include "../runtime/rt.h"

/* Writes the trace tables of cat (exposed on the connection db) into a new
 * database file at path (replacing it). 1, or 0 with err ("EXPORT: …"). */
int im_export(void *db, rt_catalog *cat, const char *path, rt_err *err);

#endif
