/*
 * proto_seq.c — per-sequence state of the protobuf importer (TRACES.md
 * §3.3): sequences by trusted_packet_sequence_id, their generations, and
 * interned data.
 *
 * A generation is what a packet sees of its sequence when it is parsed
 * after sorting: the interned-data epoch (bumped at each incremental
 * state clear), the TracePacketDefaults and the thread descriptor. The
 * read pass starts a generation whenever one of them changes and records
 * the logical offset where it starts; the parse pass finds a packet's
 * generation by binary search on that offset, so sort items need not
 * carry it. Interned messages are keyed (sequence, epoch, field, iid) and
 * copied into the importer's arena: a later definition of the same key
 * in the same epoch replaces the earlier one, as in trace_processor.
 */
#include <stdlib.h>

#include "import/proto_import.h"

int pb_grow(void **v, size_t *cap, size_t need, size_t sz) {
  if (need <= *cap) return 1;
  size_t c = *cap ? *cap : 16;
  while (c < need) c += c / 2 + 16;
  void *p = realloc(*v, c * sz);
  if (!p) return 0;
  *v = p;
  *cap = c;
  return 1;
}

uint32_t pb_str(pb_imp *m, const void *p, size_t n) {
  const uint8_t *b = p;
  uint64_t head = 0, tail = 0;
  memcpy(&head, b, n < 8 ? n : 8);
  if (n > 8) memcpy(&tail, b + n - 8, 8);
  uint64_t h = (head * 0x9e3779b97f4a7c15ull) ^ (tail * 0xc2b2ae3d27d4eb4full) ^ n;
  unsigned slot = (unsigned)(h >> 52) & (PB_STR_CACHE - 1);
  __typeof__(m->str_cache[0]) *e = &m->str_cache[slot];
  if (e->len == n + 1 && e->head == head && e->tail == tail) {   /* len + 1: 0 marks an empty slot */
    /* up to 16 bytes, head and tail are the whole string */
    if (n <= 16) return e->id;
    size_t have;
    const char *s = rt_str_get(m->sp, e->id, &have);
    if (have == n && memcmp(s + 8, b + 8, n - 16) == 0) return e->id;
  }
  uint32_t id = im_str(m->t, p, n);
  e->id = id;
  e->len = (uint32_t)n + 1;
  e->head = head;
  e->tail = tail;
  return id;
}

pb_seq *pb_seq_get(pb_imp *m, uint32_t id) {
  /* packets of one sequence come in runs */
  if (m->last_seq1 && m->last_seq_id == id) return &m->seqs.v[m->last_seq1 - 1];
  int64_t i = im_map_get(&m->seq_by_id, id);
  if (i != IM_NONE) {
    m->last_seq_id = id, m->last_seq1 = (size_t)i + 1;
    return &m->seqs.v[i];
  }
  pb_seq s;
  memset(&s, 0, sizeof s);
  s.id = id;
  if (!PB_PUSH(m->seqs, s) || !im_map_put(&m->seq_by_id, id, (int64_t)m->seqs.n - 1)) {
    im_oom(m->t);
    return NULL;
  }
  pb_seq *n = &m->seqs.v[m->seqs.n - 1];
  pb_seq_new_gen(m, n, 0, (pb_span){NULL, 0});
  return n;
}

uint32_t pb_seq_index(const pb_imp *m, const pb_seq *s) { return (uint32_t)(s - m->seqs.v); }

int pb_seq_new_gen(pb_imp *m, pb_seq *s, uint64_t lpos, pb_span defaults) {
  pb_gen g = {.lstart = lpos, .epoch = s->epoch, .defaults = defaults, .has_td = s->has_td,
              .td_pid = s->td_pid, .td_tid = s->td_tid};
  /* several changes in one packet: the last generation covers it */
  if (s->gens.n && s->gens.v[s->gens.n - 1].lstart == lpos) {
    s->gens.v[s->gens.n - 1] = g;
    return 1;
  }
  if (!PB_PUSH(s->gens, g)) return im_oom(m->t);
  return 1;
}

const pb_gen *pb_seq_gen_at(const pb_seq *s, uint64_t lpos) {
  size_t lo = 0, hi = s->gens.n;   /* last gen with lstart <= lpos */
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (s->gens.v[mid].lstart <= lpos) lo = mid;
    else hi = mid;
  }
  return &s->gens.v[lo];
}

static uint64_t intern_key(uint32_t seq, uint32_t epoch, uint32_t field, uint64_t iid) {
  return im_hash(im_hash(im_hash(seq, epoch), field), iid);
}

int pb_intern_put(pb_imp *m, uint32_t seq, uint32_t epoch, uint32_t field, pb_span msg) {
  pb_field f;
  uint64_t iid = 0;
  if (pb_find(msg, 1, &f)) iid = f.v;
  uint8_t *copy = msg.n ? rt_arena_memdup(&m->arena, msg.p, msg.n) : NULL;
  if (msg.n && !copy) return im_oom(m->t);
  pb_interned *old = pb_intern_get(m, seq, epoch, field, iid);
  if (old) {
    old->p = copy;
    old->len = (uint32_t)msg.n;
    old->str = UINT32_MAX;
    return 1;
  }
  pb_interned e = {.iid = iid, .seq = seq, .epoch = epoch, .field = field, .len = (uint32_t)msg.n,
                   .p = copy, .str = UINT32_MAX};
  uint64_t k = intern_key(seq, epoch, field, iid);
  int64_t head = im_map_get(&m->interned_by_key, k);
  if (!PB_PUSH(m->interned, e) || !PB_PUSH(m->interned_next, head) ||
      !im_map_put(&m->interned_by_key, k, (int64_t)m->interned.n - 1))
    return im_oom(m->t);
  return 1;
}

pb_interned *pb_intern_get(pb_imp *m, uint32_t seq, uint32_t epoch, uint32_t field,
                           uint64_t iid) {
  /* names and categories are looked up again and again: a direct-mapped
   * cache of hits in front of the map */
  uint64_t k = (iid * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)seq << 20) ^ ((uint64_t)epoch << 40) ^
               ((uint64_t)field << 56);
  __typeof__(m->intern_cache[0]) *c = &m->intern_cache[(k * 0xbf58476d1ce4e5b9ull) >> 54];
  if (c->idx1) {
    pb_interned *e = &m->interned.v[c->idx1 - 1];
    if (e->iid == iid && e->seq == seq && e->epoch == epoch && e->field == field) return e;
  }
  int64_t i = im_map_get(&m->interned_by_key, intern_key(seq, epoch, field, iid));
  for (; i != IM_NONE; i = m->interned_next.v[i]) {
    pb_interned *e = &m->interned.v[i];
    if (e->iid == iid && e->seq == seq && e->epoch == epoch && e->field == field) {
      c->idx1 = (uint64_t)i + 1;
      return e;
    }
  }
  return NULL;
}

uint32_t pb_intern_str(pb_imp *m, pb_interned *e, uint32_t strfield) {
  if (strfield == 2 && e->str != UINT32_MAX) return e->str;
  pb_field f;
  if (!pb_find((pb_span){e->p, e->len}, strfield, &f) || f.wt != PB_LEN) return IM_NULL_STR;
  uint32_t s = im_str(m->t, (const char *)f.s.p, f.s.n);
  if (strfield == 2) e->str = s;   /* the name / str field of every message we cache */
  return s;
}
