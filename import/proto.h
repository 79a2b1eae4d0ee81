/*
 * proto.h — the Perfetto protobuf trace importer (TRACES.md §3): .pftrace,
 * .perfetto-trace, .pb files, plain or gzip / zlib compressed.
 *
 * The whole file is read into one buffer (import/input.h) and
 * imported in two passes (proto_import.h): a read pass in file order that
 * resolves per-sequence state, clocks and delta values and pushes sort
 * items, and a parse pass in timestamp order that feeds the trace builder
 * (builder.h). Damage (a cut or malformed file) keeps what came before it:
 * the import succeeds, `stats` counts the damage and *warning says where
 * (byte offset, packet number).
 */
#ifndef PJ_IMPORT_PROTO_H
#define PJ_IMPORT_PROTO_H

#include "import/builder.h"
#include "import/input.h"

/* Is this the start of a protobuf trace (a Trace.packet field, 0x0A)? */
int pb_detect(const void *head, size_t n);

/* Imports the file at path into t (which the caller then finishes).
 * warning (may be NULL, cap bytes) gets a description of the first
 * damage, or "". Returns 1, or 0 with err set ("TRACE: …") when the file
 * cannot be read at all or memory ran out. */
int pb_import_file(im_trace *t, const char *path, char *warning, size_t cap, rt_err *err);
/* The same over an input already open (pj_engine_load_trace opened it to
 * detect the format); the caller closes it. */
int pb_import_input(im_trace *t, im_input *in, const char *name, char *warning, size_t cap,
                    rt_err *err);
/* The same over bytes in memory (name names the trace_file row). */
int pb_import_memory(im_trace *t, const void *p, size_t n, const char *name, char *warning,
                     size_t cap, rt_err *err);

#endif
