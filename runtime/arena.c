/*
 * arena.c — the bump allocator (rt_arena) and the growable malloc buffer
 * (rt_buf).
 *
 * An arena hands out zeroed, 16-aligned pieces of blocks that only ever get
 * freed all at once. Blocks double in size (4 KiB up to 1 MiB) so a small
 * query wastes little and a big one does few mallocs; a request larger than
 * a quarter of the next block gets a block of its own, linked behind the
 * current one so the current block's free tail is not abandoned.
 *
 * Allocation failure returns NULL (the library never aborts); callers treat
 * it like any other out-of-memory condition.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "rt.h"

struct rt_arena_block {
  rt_arena_block *next;
  size_t size;   /* usable bytes after the header */
  size_t used;
  /* 16-aligned payload follows (the header is padded to 32 bytes). */
};

#define HDR ((sizeof(rt_arena_block) + 15) & ~(size_t)15)
#define MIN_BLOCK ((size_t)4096)
#define MAX_BLOCK ((size_t)1 << 20)

static char *payload(rt_arena_block *b) { return (char *)b + HDR; }

void rt_arena_init(rt_arena *a) {
  a->head = NULL;
  a->used_total = 0;
}

static rt_arena_block *block_new(size_t size) {
  rt_arena_block *b = malloc(HDR + size);
  if (!b) return NULL;
  b->next = NULL;
  b->size = size;
  b->used = 0;
  return b;
}

void *rt_arena_alloc(rt_arena *a, size_t n) {
  size_t need = (n + 15) & ~(size_t)15;
  if (need == 0) need = 16;   /* distinct pointers for zero-size requests */
  rt_arena_block *h = a->head;
  if (!h || h->size - h->used < need) {
    size_t next = h ? h->size * 2 : MIN_BLOCK;
    if (next > MAX_BLOCK) next = MAX_BLOCK;
    if (need > next / 4) {
      /* Own block; keep the current head (and its free space) in front. */
      rt_arena_block *b = block_new(need);
      if (!b) return NULL;
      b->used = need;
      if (h) {
        b->next = h->next;
        h->next = b;
      } else {
        a->head = b;
      }
      a->used_total += need;
      memset(payload(b), 0, need);
      return payload(b);
    }
    rt_arena_block *b = block_new(next);
    if (!b) return NULL;
    b->next = h;
    a->head = h = b;
  }
  void *p = payload(h) + h->used;
  h->used += need;
  a->used_total += need;
  memset(p, 0, need);
  return p;
}

void *rt_arena_memdup(rt_arena *a, const void *p, size_t n) {
  void *d = rt_arena_alloc(a, n);
  if (d && n) memcpy(d, p, n);
  return d;
}

char *rt_arena_strndup(rt_arena *a, const char *s, size_t n) {
  char *d = rt_arena_alloc(a, n + 1);
  if (d && n) memcpy(d, s, n);
  return d;   /* already NUL-terminated: arena memory is zeroed */
}

char *rt_arena_strdup(rt_arena *a, const char *s) { return rt_arena_strndup(a, s, strlen(s)); }

char *rt_arena_printf(rt_arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *d = rt_arena_alloc(a, (size_t)n + 1);
  if (!d) return NULL;
  va_start(ap, fmt);
  vsnprintf(d, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return d;
}

void rt_arena_free(rt_arena *a) {
  rt_arena_block *b = a->head;
  while (b) {
    rt_arena_block *next = b->next;
    free(b);
    b = next;
  }
  a->head = NULL;
  a->used_total = 0;
}

/* ---- rt_buf ------------------------------------------------------------- */

/* Keeps data NUL-terminated (one spare byte) so text dumps can be used as C
 * strings directly. */
void rt_buf_reserve(rt_buf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->len + extra + 1) cap *= 2;
  char *d = realloc(b->data, cap);
  if (!d) {
    b->failed = true;
    return;
  }
  b->data = d;
  b->cap = cap;
}

void rt_buf_append(rt_buf *b, const void *p, size_t n) {
  rt_buf_reserve(b, n);
  if (b->len + n + 1 > b->cap) return;   /* out of memory: drop */
  if (n) memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = 0;
}

void rt_buf_printf(rt_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  rt_buf_reserve(b, (size_t)n);
  if (b->len + (size_t)n + 1 > b->cap) return;   /* failed: out of memory */
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void rt_buf_free(rt_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->failed = false;
}
