/*
 * proto_input.c — reads a protobuf trace file into one buffer (see
 * proto_input.h): mmap for plain files, zlib inflate into growing
 * anonymous memory for gzip / zlib files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "import/proto_input.h"

static uint64_t fnv1a(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static int compressed_kind(const uint8_t *p, size_t n) {
  if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) return 1;
  /* zlib: CMF 0x78 (deflate, 32K window) with a valid FCHECK */
  if (n >= 2 && p[0] == 0x78 && ((p[0] << 8) | p[1]) % 31 == 0) return 2;
  return 0;
}

/* Grows the anonymous buffer to at least need bytes. */
static int grow_anon(pb_input *in, size_t need) {
  if (need <= in->cap) return 1;
  size_t cap = in->cap ? in->cap : (1u << 20);
  while (cap < need) cap += cap / 2 > (64u << 20) ? (64u << 20) : cap;
  void *p = in->data ? mremap(in->data, in->cap, cap, MREMAP_MAYMOVE)
                     : mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 0;
  in->data = p;
  in->cap = cap;
  return 1;
}

/* Inflates src into in's anonymous buffer, member after member. */
static int inflate_all(pb_input *in, const uint8_t *src, size_t n, rt_err *err) {
  size_t hint = n * 4;
  if (in->compressed == 1 && n >= 18) {   /* gzip ISIZE: uncompressed size mod 2^32 */
    uint32_t isize;
    memcpy(&isize, src + n - 4, 4);
    if (isize >= n / 2) hint = (size_t)isize + 64;
  }
  if (!grow_anon(in, hint < (1u << 16) ? (1u << 16) : hint))
    return rt_errorf(err, -1, "TRACE: out of memory inflating the trace");
  in->anon = 1;
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 15 + 32) != Z_OK) return rt_errorf(err, -1, "TRACE: zlib init failed");
  z.next_in = (Bytef *)src;
  const uint8_t *end = src + n;
  int rc = Z_OK;
  for (;;) {
    if (in->cap - in->len < (1u << 16) && !grow_anon(in, in->len + (1u << 20))) {
      inflateEnd(&z);
      return rt_errorf(err, -1, "TRACE: out of memory inflating the trace");
    }
    size_t room = in->cap - in->len;
    if (room > (1u << 30)) room = 1u << 30;
    size_t left = (size_t)(end - (const uint8_t *)z.next_in);
    z.avail_in = left > (1u << 30) ? (1u << 30) : (uInt)left;
    z.next_out = in->data + in->len;
    z.avail_out = (uInt)room;
    rc = inflate(&z, Z_NO_FLUSH);
    in->len += room - z.avail_out;
    if (rc == Z_STREAM_END) {
      /* another gzip member may follow (cat a.gz b.gz) */
      const uint8_t *next = z.next_in;
      if (end - next >= 2 && next[0] == 0x1f && next[1] == 0x8b) {
        inflateReset(&z);
        continue;
      }
      break;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && z.avail_out == 0) continue;
    break;   /* Z_BUF_ERROR with input exhausted (cut), Z_DATA_ERROR, … */
  }
  if (rc != Z_STREAM_END) {
    size_t at = (size_t)((const uint8_t *)z.next_in - src);
    snprintf(in->damage, sizeof in->damage, "%s stream %s at compressed byte %zu (%zu bytes inflated)",
             in->compressed == 1 ? "gzip" : "zlib",
             rc == Z_BUF_ERROR ? "cut short" : "corrupt", at, in->len);
  }
  inflateEnd(&z);
  return 1;
}

static int finish_open(pb_input *in, const uint8_t *p, size_t n, rt_err *err) {
  in->file_size = (int64_t)n;
  in->headlen = n < sizeof in->head ? n : sizeof in->head;
  memcpy(in->head, p, in->headlen);
  in->head_fnv = fnv1a(p, in->headlen);
  in->compressed = compressed_kind(p, n);
  if (!in->compressed) return 1;
  return inflate_all(in, p, n, err);
}

int pb_input_open(pb_input *in, const char *path, rt_err *err) {
  memset(in, 0, sizeof *in);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return rt_errorf(err, -1, "TRACE: cannot open '%s': %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return rt_errorf(err, -1, "TRACE: '%s' is not a regular file", path);
  }
  size_t n = (size_t)st.st_size;
  if (n == 0) {
    close(fd);
    return rt_errorf(err, -1, "TRACE: '%s' is empty", path);
  }
  uint8_t *map = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return rt_errorf(err, -1, "TRACE: cannot map '%s': %s", path, strerror(errno));
  madvise(map, n, MADV_SEQUENTIAL);
  if (!finish_open(in, map, n, err)) {
    munmap(map, n);
    pb_input_close(in);
    return 0;
  }
  if (in->compressed) {
    munmap(map, n);   /* the inflated copy is what the importer reads */
  } else {
    in->data = map;
    in->len = in->cap = n;
  }
  return 1;
}

int pb_input_from_memory(pb_input *in, const uint8_t *p, size_t n, rt_err *err) {
  memset(in, 0, sizeof *in);
  if (!finish_open(in, p, n, err)) {
    pb_input_close(in);
    return 0;
  }
  if (!in->compressed) {
    in->data = (uint8_t *)p;   /* borrowed: never unmapped (cap stays 0) */
    in->len = n;
  }
  return 1;
}

void pb_input_release(pb_input *in, size_t upto) {
  if (!in->cap || upto > in->len) return;
  size_t page = 4096;
  uintptr_t base = (uintptr_t)in->data;
  uintptr_t from = (base + in->released + page - 1) & ~(uintptr_t)(page - 1);
  uintptr_t to = (base + upto) & ~(uintptr_t)(page - 1);
  if (to > from) madvise((void *)from, to - from, MADV_DONTNEED);
  if (upto > in->released) in->released = upto;
}

void pb_input_close(pb_input *in) {
  if (in->data && in->cap) munmap(in->data, in->cap);
  memset(in, 0, sizeof *in);
}

uint8_t *pb_inflate(const uint8_t *p, size_t n, size_t *out_n, int *cut) {
  z_stream z;
  memset(&z, 0, sizeof z);
  *cut = 0;
  *out_n = 0;
  if (inflateInit2(&z, 15 + 32) != Z_OK) return NULL;
  size_t cap = n * 4 + 1024, len = 0;
  uint8_t *out = malloc(cap);
  if (!out) {
    inflateEnd(&z);
    return NULL;
  }
  z.next_in = (Bytef *)p;
  z.avail_in = (uInt)n;
  for (;;) {
    int rc;
    if (cap - len < 4096) {
      size_t nc = cap * 2;
      uint8_t *o = realloc(out, nc);
      if (!o) {
        *cut = 1;
        break;
      }
      out = o;
      cap = nc;
    }
    z.next_out = out + len;
    z.avail_out = (uInt)(cap - len > (1u << 30) ? (1u << 30) : cap - len);
    uInt before = z.avail_out;
    rc = inflate(&z, Z_NO_FLUSH);
    len += before - z.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc == Z_OK || (rc == Z_BUF_ERROR && z.avail_out == 0)) continue;
    if (len == 0) {
      inflateEnd(&z);
      free(out);
      return NULL;
    }
    *cut = 1;
    break;
  }
  inflateEnd(&z);
  *out_n = len;
  return out;
}
