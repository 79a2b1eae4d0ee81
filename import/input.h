/*
 * input.h — a trace file's bytes in memory, and what format they are.
 *
 * A plain file is mapped read-only (pages the importer has read can be
 * dropped with im_input_release, so a large file does not stay resident).
 * A gzip file is decompressed with ISA-L's streaming inflate, either into
 * one buffer (im_input_open, for importers that need it whole) or as a
 * window that im_input_more slides forward (im_input_open_stream, the
 * JSON importer: memory is the window, not the decompressed file). A
 * truncated or damaged stream gives everything up to the damage
 * (input.damaged says where).
 */
#ifndef PJ_IMPORT_INPUT_H
#define PJ_IMPORT_INPUT_H

#include "../runtime/rt.h"

typedef enum im_format {
  IM_FMT_UNKNOWN = 0, IM_FMT_JSON, IM_FMT_PROTO, IM_FMT_GZIP,
} im_format;

/* What a buffer holds, from its first bytes: gzip (1F 8B), JSON (after
 * removing whitespace it starts with `{"` or `[{"`, TRACES.md §2.1.1),
 * protobuf (first byte 0x0A, §3.1.1), else unknown. */
im_format im_detect(const void *buf, size_t len);

typedef struct im_input {
  const char *data;     /* the (decompressed) bytes */
  size_t len;
  int gzip;             /* the file was gzip-compressed */
  int64_t file_size;    /* bytes on disk */
  unsigned char head[4096];   /* the first bytes as stored (trace_uuid) */
  size_t headlen;
  int64_t damaged;      /* gzip: offset in the file where decompression
                           stopped early, else -1 */
  char damage_msg[128];
  /* ownership */
  void *map;            /* mmap'd file, or NULL */
  size_t map_len;
  char *owned;          /* malloc'd decompressed bytes (or the window) */
  size_t released;      /* bytes at the start already dropped */
  /* streaming gzip: data[0..len) are the bytes from offset win_off of
   * the decompressed stream; eof: none come after them */
  void *gz;             /* decoder state, NULL once everything is in data */
  char *window;         /* the mapped window (cap bytes) */
  int eof;
  size_t win_off, cap;
  size_t map_released;  /* compressed bytes given back */
  int64_t in_done;      /* compressed bytes decoded so far (progress) */
} im_input;

/* Opens path; 1, or 0 with err set ("TRACE: cannot open …"). */
int im_input_open(im_input *in, const char *path, rt_err *err);
/* The same, a gzip file as a window (the first bytes decompressed). */
int im_input_open_stream(im_input *in, const char *path, rt_err *err);
/* Streaming: drops data[0..keep), keeps the rest at the start of the
 * window (a larger window when it is more than half of it) and
 * decompresses after it. Returns the bytes added; 0 at the end (eof), -1
 * out of memory. Pointers into data are invalid afterwards. */
int64_t im_input_more(im_input *in, size_t keep);
/* Streaming at its end (eof): frees the window and the decoder (data
 * becomes NULL; win_off + len stays the stream's size). */
void im_input_drop(im_input *in);
/* Streaming: decompresses the rest so data holds the whole stream (right
 * after opening); a no-op for other inputs. */
int im_input_whole(im_input *in, rt_err *err);
/* The same over bytes in memory: used in place (the caller keeps them
 * alive), or decompressed when they are gzip. */
int im_input_memory(im_input *in, const void *p, size_t n, rt_err *err);
/* Says the bytes before `upto` are not needed any more (their pages are
 * given back; reading them afterwards gives zeros). */
void im_input_release(im_input *in, size_t upto);
void im_input_close(im_input *in);

#endif
