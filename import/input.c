/*
 * input.c — reading a trace file into memory (see input.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <isa-l/igzip_lib.h>

#include "input.h"

im_format im_detect(const void *buf, size_t len) {
  const unsigned char *b = buf;
  if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b) return IM_FMT_GZIP;
  /* §2.1.1: whitespace removed, `{"` or `[{"` */
  char first[3];
  size_t n = 0;
  for (size_t i = 0; i < len && i < 4096 && n < 3; i++) {
    unsigned char c = b[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    first[n++] = (char)c;
  }
  if (n >= 2 && first[0] == '{' && first[1] == '"') return IM_FMT_JSON;
  if (n >= 3 && first[0] == '[' && first[1] == '{' && first[2] == '"') return IM_FMT_JSON;
  if (len >= 1 && b[0] == 0x0a) return IM_FMT_PROTO;
  return IM_FMT_UNKNOWN;
}

/* ---- gzip: ISA-L's streaming inflate ----------------------------------------------
 * (3-6x zlib's speed here, and unlike libdeflate it streams, so a large
 * trace never needs its whole decompressed text in memory). A damaged or
 * truncated stream gives everything up to the damage; concatenated
 * members are one stream, and zero padding after the last is ignored. */

typedef struct im_gz {
  struct inflate_state st;
  const unsigned char *src;
  size_t n;
  int done;              /* the stream ended (or was damaged) */
} im_gz;

static void gz_damage(im_input *in, im_gz *g, const char *how) {
  size_t at = (size_t)(g->st.next_in - g->src);
  in->damaged = (int64_t)at;
  snprintf(in->damage_msg, sizeof in->damage_msg, "the gzip data %s at byte %lld", how, (long long)at);
  g->done = 1;
}

/* Decompresses up to room bytes into dst; returns how many. Past the
 * stream's end (or damage) returns 0 and in->eof is set. The compressed
 * pages read are given back as it goes. */
static size_t gz_fill(im_input *in, char *dst, size_t room) {
  im_gz *g = in->gz;
  size_t got = 0;
  while (!g->done && got < room) {
    g->st.next_out = (uint8_t *)dst + got;
    g->st.avail_out = (uint32_t)(room - got > (1u << 30) ? (1u << 30) : room - got);
    uint32_t before = g->st.avail_out;
    int r = isal_inflate(&g->st);
    got += before - g->st.avail_out;
    if (r < 0) {
      gz_damage(in, g, "is damaged");
      break;
    }
    if (g->st.block_state == ISAL_BLOCK_FINISH) {
      const unsigned char *p = g->st.next_in, *e = g->src + g->n;
      while (p < e && *p == 0) p++;
      if (p == e) {
        g->done = 1;
        break;
      }
      /* another member */
      isal_inflate_reset(&g->st);
      g->st.crc_flag = ISAL_GZIP;
      g->st.next_in = (uint8_t *)p;
      g->st.avail_in = (uint32_t)((size_t)(e - p) > UINT32_MAX ? UINT32_MAX : (size_t)(e - p));
      continue;
    }
    if (g->st.avail_in == 0) {
      size_t used = (size_t)(g->st.next_in - g->src);
      if (used < g->n) {   /* inputs over 4 GiB go in 4 GiB pieces */
        size_t left = g->n - used;
        g->st.avail_in = (uint32_t)(left > UINT32_MAX ? UINT32_MAX : left);
        continue;
      }
      if (g->st.avail_out) gz_damage(in, g, "ends early");   /* starved: nothing more will come */
      break;
    }
  }
  if (in->map) {
    /* compressed bytes behind the decoder are not needed any more */
    size_t used = (size_t)(g->st.next_in - g->src) & ~(size_t)4095;
    if (used > in->map_released + (64u << 10)) {
      madvise((char *)in->map + in->map_released, used - in->map_released, MADV_DONTNEED);
      in->map_released = used;
    }
  }
  in->in_done = (int64_t)(g->st.next_in - g->src);
  if (g->done) in->eof = 1;   /* everything decoded is out */
  return got;
}

static int gz_start(im_input *in, const unsigned char *src, size_t n, rt_err *err) {
  im_gz *g = calloc(1, sizeof *g);
  if (!g) return rt_errorf(err, -1, "TRACE: out of memory");
  isal_inflate_init(&g->st);
  g->st.crc_flag = ISAL_GZIP;
  g->src = src;
  g->n = n;
  g->st.next_in = (uint8_t *)src;
  g->st.avail_in = (uint32_t)(n > UINT32_MAX ? UINT32_MAX : n);
  in->gz = g;
  in->gzip = 1;
  return 1;
}

enum { WINDOW = 128 << 10 };

/* The window is mapped here, not malloc'd: growing it for a large event
 * would otherwise free a large malloc block, which raises malloc's mmap
 * threshold and puts the importer's growing table columns on the heap
 * (where realloc copies and fragments). */
static char *win_map(size_t n) {
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* Streaming: the first window. */
static int gz_stream(im_input *in, const unsigned char *src, size_t n, rt_err *err) {
  if (!gz_start(in, src, n, err)) return 0;
  in->cap = WINDOW;
  in->window = win_map(in->cap);
  if (!in->window) return rt_errorf(err, -1, "TRACE: out of memory");
  in->data = in->window;
  in->len = gz_fill(in, in->window, in->cap);
  if (!in->len) in->eof = 1;
  return 1;
}

int64_t im_input_more(im_input *in, size_t keep) {
  if (!in->gz || in->eof) return 0;
  if (keep > in->len) keep = in->len;
  size_t kept = in->len - keep;
  /* an event longer than half the window: a window twice as large */
  memmove(in->window, in->window + keep, kept);
  size_t cap = in->cap;
  if (kept > cap / 2) cap *= 2;                                /* a large event */
  else if (cap > WINDOW && kept < WINDOW / 2) cap = WINDOW;   /* back once it passed */
  if (cap != in->cap) {
    void *w = mremap(in->window, in->cap, cap, MREMAP_MAYMOVE);
    if (w == MAP_FAILED) return -1;
    in->window = w;
    in->cap = cap;
  }
  in->data = in->window;
  in->win_off += keep;
  size_t got = gz_fill(in, in->window + kept, in->cap - kept);
  in->len = kept + got;
  return (int64_t)got;
}

void im_input_drop(im_input *in) {
  if (!in->gz || !in->eof) return;
  if (in->window) munmap(in->window, in->cap);
  in->window = NULL;
  in->data = NULL;   /* len stays: win_off + len is the stream's size */
  free(in->gz);
  in->gz = NULL;
  if (in->map) madvise(in->map, in->map_len & ~(size_t)4095, MADV_DONTNEED);
}

int im_input_whole(im_input *in, rt_err *err) {
  if (!in->gz) return 1;
  im_gz *g = in->gz;
  /* ISIZE (the last 4 bytes) is the size mod 2^32: a first guess;
   * deflate expands at most ~1032:1, so a larger ISIZE is damage (or a
   * trailer that is not one) and must not size the first allocation */
  const unsigned char *src = g->src;
  size_t n = g->n;
  size_t guess = n >= 18 ? (size_t)src[n - 4] | (size_t)src[n - 3] << 8 | (size_t)src[n - 2] << 16 |
                               (size_t)src[n - 1] << 24
                         : 0;
  if (guess < n || guess / 1032 > n) guess = n * 4;
  size_t cap = guess + 1 > in->len ? guess + 1 : in->len + 1, len = in->len;
  char *out = malloc(cap);
  if (!out) return rt_errorf(err, -1, "TRACE: out of memory");
  memcpy(out, in->data, in->len);
  while (!in->eof) {
    if (len == cap) {
      char *o = realloc(out, cap * 2);
      if (!o) {
        free(out);
        return rt_errorf(err, -1, "TRACE: out of memory");
      }
      out = o, cap *= 2;
    }
    len += gz_fill(in, out + len, cap - len);
  }
  char *o = realloc(out, len ? len : 1);
  munmap(in->window, in->cap);
  in->window = NULL;
  in->owned = o ? o : out;
  in->data = in->owned;
  in->len = len;
  in->cap = len;
  free(in->gz);
  in->gz = NULL;
  if (in->map) {   /* the compressed bytes are not needed any more */
    munmap(in->map, in->map_len);
    in->map = NULL;
  }
  return 1;
}

static int open_file(im_input *in, const char *path, int stream, rt_err *err) {
  memset(in, 0, sizeof *in);
  in->damaged = -1;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return rt_errorf(err, -1, "TRACE: cannot open '%s': %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return rt_errorf(err, -1, "TRACE: '%s' is not a regular file", path);
  }
  in->file_size = st.st_size;
  size_t n = (size_t)st.st_size;
  void *m = n ? mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
  close(fd);
  if (n && m == MAP_FAILED)
    return rt_errorf(err, -1, "TRACE: cannot read '%s': %s", path, strerror(errno));
  in->map = m;
  in->map_len = n;
  in->headlen = n < sizeof in->head ? n : sizeof in->head;
  if (n) memcpy(in->head, m, in->headlen);
  if (im_detect(m, n) == IM_FMT_GZIP) {
    madvise(m, n, MADV_SEQUENTIAL);
    if (!gz_stream(in, m, n, err)) return 0;
    return stream ? 1 : im_input_whole(in, err);
  }
  madvise(m, n, MADV_SEQUENTIAL);
  in->data = m;
  in->len = n;
  in->eof = 1;
  return 1;
}

int im_input_open(im_input *in, const char *path, rt_err *err) { return open_file(in, path, 0, err); }
int im_input_open_stream(im_input *in, const char *path, rt_err *err) {
  return open_file(in, path, 1, err);
}

int im_input_memory(im_input *in, const void *p, size_t n, rt_err *err) {
  memset(in, 0, sizeof *in);
  in->damaged = -1;
  in->file_size = (int64_t)n;
  in->headlen = n < sizeof in->head ? n : sizeof in->head;
  if (n) memcpy(in->head, p, in->headlen);
  if (im_detect(p, n) == IM_FMT_GZIP) return gz_stream(in, p, n, err) && im_input_whole(in, err);
  in->data = p;   /* borrowed: never released or freed */
  in->len = n;
  in->eof = 1;
  return 1;
}

/* Drops whole pages of the buffer before upto: the file's mapping, or the
 * decompressed buffer (a large malloc is its own mapping, so its pages can
 * be given back while it stays allocated; what is read there later is 0). */
void im_input_release(im_input *in, size_t upto) {
  if (in->gz) return;   /* a window: what it holds is replaced by im_input_more */
  char *base = in->map ? in->map : in->owned;
  if (!base || upto > in->len) return;
  uintptr_t page = 4096;
  /* everything before upto goes: the page holding the last release's
   * end too (rounding it up would keep one page per call) */
  uintptr_t from = ((uintptr_t)base + in->released) & ~(page - 1);
  if (from < (uintptr_t)base) from = ((uintptr_t)base + page - 1) & ~(page - 1);
  uintptr_t to = ((uintptr_t)base + upto) & ~(page - 1);
  if (to > from) madvise((void *)from, to - from, MADV_DONTNEED);
  in->released = upto;
}

void im_input_close(im_input *in) {
  free(in->gz);
  if (in->window) munmap(in->window, in->cap);
  if (in->map) munmap(in->map, in->map_len);
  free(in->owned);
  memset(in, 0, sizeof *in);
}
