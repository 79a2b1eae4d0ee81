/*
 * proto_input.h — the bytes of a protobuf trace file, whole, in memory.
 *
 * Protobuf import keeps every packet in place until the sorted parse
 * (zero-copy: sort items point into this buffer), so the file is needed as
 * one buffer. A plain file is mapped read-only (MAP_PRIVATE; the kernel
 * pages it in as the tokenizer walks it); a gzip or zlib file (1F 8B /
 * 78 xx) is inflated into anonymous memory that grows with mremap, with
 * concatenated gzip members read one after another. A compressed stream
 * cut short keeps what inflated and records where it broke, so the
 * importer can load the packets before the damage.
 *
 * pb_input_release() hands back pages the importer no longer needs (all
 * packets before an offset were parsed), which keeps peak memory near
 * the size of the tables being built rather than file + tables.
 */
#ifndef PJ_PROTO_INPUT_H
#define PJ_PROTO_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/rt.h"

typedef struct pb_input {
  uint8_t *data;        /* the (decompressed) trace bytes */
  size_t len;
  size_t cap;           /* mapped bytes (anonymous buffers) */
  size_t released;      /* bytes [0, released) handed back */
  int64_t file_size;    /* bytes of the file as given */
  uint64_t head_fnv;    /* FNV-1a-64 of its first min(4096, size) bytes */
  uint8_t head[4096];   /* those bytes (for trace_uuid, §1.11) */
  size_t headlen;
  int compressed;       /* 1 gzip, 2 zlib, 0 plain */
  int anon;             /* data is anonymous memory (else a file mapping) */
  char damage[160];     /* non-empty: the compressed stream broke there */
} pb_input;

/* Opens path and fills in. Returns 1, or 0 with err set ("TRACE: …")
 * when the file cannot be read or holds nothing. */
int pb_input_open(pb_input *in, const char *path, rt_err *err);
/* The same over bytes already in memory (copied when compressed, else
 * used in place; the caller keeps them alive). */
int pb_input_from_memory(pb_input *in, const uint8_t *p, size_t n, rt_err *err);
/* Drops bytes [0, upto) from memory: the importer will not read them again. */
void pb_input_release(pb_input *in, size_t upto);
void pb_input_close(pb_input *in);

/* Inflates a zlib or gzip blob (compressed_packets) into a malloc'd
 * buffer; *out_n its size. Returns NULL when it is not valid deflate data
 * (a cut stream returns what inflated, with *cut = 1). */
uint8_t *pb_inflate(const uint8_t *p, size_t n, size_t *out_n, int *cut);

#endif
