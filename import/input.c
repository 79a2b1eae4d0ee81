/*
 * input.c — reading a trace file into memory (see input.h).
 */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libdeflate.h>
#include <zlib.h>

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

/* zlib's streaming inflate: everything up to the damage. */
static int inflate_partial(im_input *in, const unsigned char *src, size_t n, rt_err *err) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 15 + 32) != Z_OK) return rt_errorf(err, -1, "TRACE: out of memory");
  size_t cap = n * 4 + 4096, len = 0;
  char *out = malloc(cap);
  int rc = Z_OK;
  z.next_in = (unsigned char *)src;
  while (out) {
    z.avail_in = (uInt)((src + n) - z.next_in > (1 << 30) ? (1 << 30) : (src + n) - z.next_in);
    if (len == cap) {
      char *o = realloc(out, cap * 2);
      if (!o) break;
      out = o, cap *= 2;
    }
    z.next_out = (unsigned char *)out + len;
    z.avail_out = (uInt)(cap - len > (1u << 30) ? (1u << 30) : cap - len);
    size_t before = z.avail_out;
    rc = inflate(&z, Z_NO_FLUSH);
    len += before - z.avail_out;
    if (rc == Z_STREAM_END) {
      /* concatenated members */
      if (z.next_in < src + n && inflateReset(&z) == Z_OK) continue;
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) break;
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;   /* truncated */
  }
  size_t consumed = (size_t)(z.next_in - src);
  inflateEnd(&z);
  if (!out) return rt_errorf(err, -1, "TRACE: out of memory");
  in->owned = out;
  in->data = out;
  in->len = len;
  if (rc != Z_STREAM_END) {
    in->damaged = (int64_t)consumed;
    snprintf(in->damage_msg, sizeof in->damage_msg, "the gzip data %s at byte %lld",
             consumed >= n ? "ends early" : "is damaged", (long long)consumed);
  }
  return 1;
}

static int gunzip(im_input *in, const unsigned char *src, size_t n, rt_err *err) {
  /* ISIZE (the last 4 bytes) is the size mod 2^32: a first guess. */
  size_t guess = n >= 18 ? (size_t)src[n - 4] | (size_t)src[n - 3] << 8 | (size_t)src[n - 2] << 16 |
                               (size_t)src[n - 1] << 24
                         : 0;
  /* deflate expands at most ~1032:1: a larger ISIZE is damage (or a
   * trailer that is not one), and must not size the first allocation */
  if (guess < n || guess / 1032 > n) guess = n * 4;
  struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
  if (!d) return rt_errorf(err, -1, "TRACE: out of memory");
  size_t cap = guess + 1, len = 0, pos = 0;
  char *out = malloc(cap);
  enum libdeflate_result r = LIBDEFLATE_SUCCESS;
  while (out && pos < n) {
    size_t in_used = 0, got = 0;
    r = libdeflate_gzip_decompress_ex(d, src + pos, n - pos, out + len, cap - len, &in_used, &got);
    if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
      char *o = realloc(out, cap * 2);
      if (!o) {
        free(out);
        out = NULL;
        break;
      }
      out = o, cap *= 2;
      continue;
    }
    if (r != LIBDEFLATE_SUCCESS) break;
    pos += in_used;
    len += got;
    /* trailing zero padding after the last member is not another one */
    while (pos < n && src[pos] == 0) pos++;
  }
  libdeflate_free_decompressor(d);
  if (!out) return rt_errorf(err, -1, "TRACE: out of memory");
  if (r != LIBDEFLATE_SUCCESS) {
    free(out);
    return inflate_partial(in, src, n, err);
  }
  char *o = realloc(out, len ? len : 1);
  in->owned = o ? o : out;
  in->data = in->owned;
  in->len = len;
  return 1;
}

int im_input_open(im_input *in, const char *path, rt_err *err) {
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
    in->gzip = 1;
    int ok = gunzip(in, m, n, err);
    munmap(m, n);
    in->map = NULL;
    return ok;
  }
  madvise(m, n, MADV_SEQUENTIAL);
  in->data = m;
  in->len = n;
  return 1;
}

int im_input_memory(im_input *in, const void *p, size_t n, rt_err *err) {
  memset(in, 0, sizeof *in);
  in->damaged = -1;
  in->file_size = (int64_t)n;
  in->headlen = n < sizeof in->head ? n : sizeof in->head;
  if (n) memcpy(in->head, p, in->headlen);
  if (im_detect(p, n) == IM_FMT_GZIP) {
    in->gzip = 1;
    return gunzip(in, p, n, err);
  }
  in->data = p;   /* borrowed: never released or freed */
  in->len = n;
  return 1;
}

/* Drops whole pages of the buffer before upto: the file's mapping, or the
 * decompressed buffer (a large malloc is its own mapping, so its pages can
 * be given back while it stays allocated; what is read there later is 0). */
void im_input_release(im_input *in, size_t upto) {
  char *base = in->map ? in->map : in->owned;
  if (!base || upto > in->len) return;
  uintptr_t page = 4096;
  uintptr_t from = ((uintptr_t)base + in->released + page - 1) & ~(page - 1);
  uintptr_t to = ((uintptr_t)base + upto) & ~(page - 1);
  if (to > from) madvise((void *)from, to - from, MADV_DONTNEED);
  in->released = upto;
}

void im_input_close(im_input *in) {
  if (in->map) munmap(in->map, in->map_len);
  free(in->owned);
  memset(in, 0, sizeof *in);
}
