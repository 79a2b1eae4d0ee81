/*
 * map.c — the builder's hash map: uint64 keys to int64 values, open
 * addressing with linear probing, grown at half full. Composite keys are
 * hashed by the caller (im_hash), who keeps a chain per record to tell
 * colliding keys apart.
 */
#include <stdlib.h>

#include "../runtime/store.h"
#include "trace.h"

uint64_t im_hash(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

uint64_t im_hash_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t x = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) x = (x ^ b[i]) * 0x100000001b3ull;
  return im_hash(h, x);
}

static uint64_t slot_of(uint64_t key) { return rt_hash_i64(key); }

int64_t im_map_get(const im_map *m, uint64_t key) {
  if (!m->cap) return IM_NONE;
  uint64_t mask = (uint64_t)m->cap - 1;
  for (uint64_t i = slot_of(key) & mask;; i = (i + 1) & mask) {
    if (!m->used[i]) return IM_NONE;
    if (m->keys[i] == key) return m->vals[i];
  }
}

static int rehash(im_map *m, int64_t cap) {
  im_map nm = {.cap = cap, .n = m->n};
  nm.keys = malloc((size_t)cap * sizeof *nm.keys);
  nm.vals = malloc((size_t)cap * sizeof *nm.vals);
  nm.used = calloc((size_t)cap, 1);
  if (!nm.keys || !nm.vals || !nm.used) {
    im_map_free(&nm);
    return 0;
  }
  uint64_t mask = (uint64_t)cap - 1;
  for (int64_t j = 0; j < m->cap; j++) {
    if (!m->used[j]) continue;
    uint64_t i = slot_of(m->keys[j]) & mask;
    while (nm.used[i]) i = (i + 1) & mask;
    nm.used[i] = 1;
    nm.keys[i] = m->keys[j];
    nm.vals[i] = m->vals[j];
  }
  im_map_free(m);
  *m = nm;
  return 1;
}

int im_map_put(im_map *m, uint64_t key, int64_t val) {
  if ((m->n + 1) * 2 > m->cap && !rehash(m, m->cap ? m->cap * 2 : 64)) return 0;
  uint64_t mask = (uint64_t)m->cap - 1;
  uint64_t i = slot_of(key) & mask;
  while (m->used[i] && m->keys[i] != key) i = (i + 1) & mask;
  if (!m->used[i]) {
    m->used[i] = 1;
    m->keys[i] = key;
    m->n++;
  }
  m->vals[i] = val;
  return 1;
}

void im_map_free(im_map *m) {
  free(m->keys);
  free(m->vals);
  free(m->used);
  memset(m, 0, sizeof *m);
}
