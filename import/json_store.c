/*
 * json_store.c — the Chrome JSON importer's event store (json.h): records
 * in blocks of mapped memory and their sort keys, given back while pass 2
 * consumes them; and the compact record encoding (varints, zigzag for
 * signed values, absent fields cost nothing).
 *
 * Record: flags, ph, thread index, name+1, cat+1, then by flags dur, tts,
 * tdur, the id kinds and ids, the arg set id, the raw args (length and
 * bytes). ts lives in the key.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>

#include "json.h"
#include "trace.h"

/* ---- memory ---------------------------------------------------------------------- */

void *jt_map(size_t n) {
  void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* Faults pages in with one call instead of a trap per page (the store is
 * written right away); a kernel without it just faults as usual. */
static void populate(void *p, size_t n) {
#ifdef MADV_POPULATE_WRITE
  madvise(p, n, MADV_POPULATE_WRITE);
#else
  (void)p, (void)n;
#endif
}

void *jt_remap(void *p, size_t old, size_t n) {
  if (!p) return jt_map(n);
  void *q = mremap(p, old ? old : 1, n, MREMAP_MAYMOVE);
  return q == MAP_FAILED ? NULL : q;
}

void jt_unmap(void *p, size_t n) {
  if (p) munmap(p, n ? n : 1);
}

void jt_release(void *from, void *to) {
  uintptr_t a = ((uintptr_t)from + 4095) & ~(uintptr_t)4095, b = (uintptr_t)to & ~(uintptr_t)4095;
  if (b > a) madvise((void *)a, b - a, MADV_DONTNEED);
}

/* ---- the store ----------------------------------------------------------------------- */

/* Small blocks first (a small trace gives them back early), 1 MiB once
 * the store is large (fewer mappings). */
enum { BLOCK = 1 << 20, SMALL_BLOCK = 32 << 10, SMALL_BLOCKS = 512 };

char *js_store_add(jstore *st, size_t n, int64_t ts) {
  jblock *b = st->nblocks ? &st->blocks[st->nblocks - 1] : NULL;
  if (!b || b->cap - b->len < n) {
    if (n > UINT32_MAX - BLOCK) return NULL;   /* one args object over 4 GiB */
    if (!im_grow((void **)&st->blocks, &st->cblocks, st->nblocks + 1, sizeof *st->blocks)) return NULL;
    uint32_t unit = st->nblocks < SMALL_BLOCKS ? SMALL_BLOCK : BLOCK;
    uint32_t cap = n > unit ? (uint32_t)n : unit;
    char *p = jt_map(cap);
    if (!p) return NULL;
    populate(p, cap);
    b = &st->blocks[st->nblocks++];
    *b = (jblock){.p = p, .cap = cap};
  }
  if (st->nkeys == st->ckeys) {
    size_t old = (size_t)st->ckeys * sizeof *st->keys;
    int64_t c = st->ckeys ? st->ckeys * 2 : 4096;
    jkey *k = jt_remap(st->keys, old, (size_t)c * sizeof *k);
    if (!k) return NULL;
    st->keys = k;
    st->ckeys = c;
  }
  uint64_t ref = (uint64_t)(st->nblocks - 1) << 32 | b->len;
  st->keys[st->nkeys++] = (jkey){(uint64_t)ts, ref};
  char *out = b->p + b->len;
  b->len += (uint32_t)n;
  b->live++;
  return out;
}

const char *js_store_rec(const jstore *st, uint64_t ref) {
  return st->blocks[ref >> 32].p + (uint32_t)ref;
}

void js_store_done(jstore *st, uint64_t ref) {
  jblock *b = &st->blocks[ref >> 32];
  /* the block being filled is never given back: pass 1 is over by now */
  if (--b->live == 0) {
    jt_unmap(b->p, b->cap);
    b->p = NULL;
  }
}

void js_store_free(jstore *st) {
  for (int64_t i = 0; i < st->nblocks; i++) jt_unmap(st->blocks[i].p, st->blocks[i].cap);
  free(st->blocks);
  jt_unmap(st->keys, (size_t)st->ckeys * sizeof *st->keys);
  memset(st, 0, sizeof *st);
}

/* ---- records ------------------------------------------------------------------------ */

static inline char *put_u(char *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (char)(v | 0x80);
    v >>= 7;
  }
  *p++ = (char)v;
  return p;
}
static inline char *put_s(char *p, int64_t v) {
  return put_u(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
static inline const char *get_u(const char *p, uint64_t *v) {
  uint64_t x = 0;
  int shift = 0;
  for (;;) {
    uint8_t b = (uint8_t)*p++;
    x |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
    shift += 7;
  }
  *v = x;
  return p;
}
static inline const char *get_s(const char *p, int64_t *v) {
  uint64_t u;
  p = get_u(p, &u);
  *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
  return p;
}

size_t jt_encoded_size(const jev *e) {
  return JREC_MAX + ((e->flags & JF_ARGS) ? e->args_len : 0);
}

size_t jt_encode(char *out, const jev *e) {
  char *p = put_u(out, e->flags);
  *p++ = e->ph;
  p = put_u(p, e->thread);
  p = put_u(p, (uint32_t)(e->name + 1));   /* IM_NULL_STR + 1 wraps to 0 */
  p = put_u(p, (uint64_t)(uint32_t)(e->cat + 1));
  if (e->flags & JF_DUR) p = put_s(p, e->dur);
  if (e->flags & JF_TTS) p = put_s(p, e->tts);
  if (e->flags & JF_TDUR) p = put_s(p, e->tdur);
  if (e->flags & JF_IDS) {
    *p++ = (char)(e->id_kind | e->bind_kind << 2);
    *p++ = (char)e->id2_kind;
    if (e->id_kind) p = put_s(p, e->id);
    if (e->id2_kind) p = put_s(p, e->id2);
    if (e->bind_kind) p = put_s(p, e->bind_id);
  }
  if (e->flags & JF_ARGSET) p = put_u(p, (uint64_t)e->argset);
  if (e->flags & JF_ARGS) {
    p = put_u(p, e->args_len);
    memcpy(p, e->args, e->args_len);
    p += e->args_len;
  }
  return (size_t)(p - out);
}

void jt_decode(const char *p, jev *e) {
  uint64_t u;
  p = get_u(p, &u);
  e->flags = (uint32_t)u;
  e->ph = *p++;
  p = get_u(p, &u);
  e->thread = (uint32_t)u;
  p = get_u(p, &u);
  e->name = (uint32_t)(u - 1);
  p = get_u(p, &u);
  e->cat = (uint32_t)(u - 1);
  static const char scopes[4] = {0, 'g', 'p', 't'};
  e->scope = scopes[(e->flags >> JF_SCOPE_SHIFT) & 3];
  e->dur = e->tts = e->tdur = 0;
  if (e->flags & JF_DUR) p = get_s(p, &e->dur);
  if (e->flags & JF_TTS) p = get_s(p, &e->tts);
  if (e->flags & JF_TDUR) p = get_s(p, &e->tdur);
  e->id_kind = e->id2_kind = e->bind_kind = 0;
  e->id = e->id2 = e->bind_id = 0;
  if (e->flags & JF_IDS) {
    e->id_kind = (uint8_t)(*p & 3);
    e->bind_kind = (uint8_t)((*p++ >> 2) & 3);
    e->id2_kind = (uint8_t)*p++;
    if (e->id_kind) p = get_s(p, &e->id);
    if (e->id2_kind) p = get_s(p, &e->id2);
    if (e->bind_kind) p = get_s(p, &e->bind_id);
  }
  e->argset = IM_NONE;
  if (e->flags & JF_ARGSET) {
    p = get_u(p, &u);
    e->argset = (int64_t)u;
  }
  e->args = NULL;
  e->args_len = 0;
  if (e->flags & JF_ARGS) {
    p = get_u(p, &u);
    e->args_len = (uint32_t)u;
    e->args = p;
  }
}

/* systemTraceEvents entries: kind, then the line (length, bytes) or the
 * switch's cpu, out pid/tid/state, in pid/tid/prio. */
size_t jt_sys_size(const jsys *y) { return 80 + (y->kind == 'l' ? y->len : 0); }

size_t jt_sys_encode(char *out, const jsys *y) {
  char *p = out;
  *p++ = y->kind;
  if (y->kind == 'l') {
    p = put_u(p, y->len);
    memcpy(p, y->text, y->len);
    return (size_t)(p + y->len - out);
  }
  p = put_u(p, y->cpu);
  p = put_s(p, y->out_pid), p = put_s(p, y->out_tid), p = put_s(p, y->out_state);
  p = put_s(p, y->in_pid), p = put_s(p, y->in_tid), p = put_s(p, y->in_prio);
  return (size_t)(p - out);
}

void jt_sys_decode(const char *p, jsys *y) {
  uint64_t u;
  y->kind = *p++;
  if (y->kind == 'l') {
    p = get_u(p, &u);
    y->len = (uint32_t)u;
    y->text = p;
    return;
  }
  p = get_u(p, &u);
  y->cpu = (uint32_t)u;
  p = get_s(p, &y->out_pid), p = get_s(p, &y->out_tid), p = get_s(p, &y->out_state);
  p = get_s(p, &y->in_pid), p = get_s(p, &y->in_tid), p = get_s(p, &y->in_prio);
}
