/*
 * tree_mem.c — memory for TREE ACCUMULATE's large per-row arrays (the
 * numbering's hash map, the ordering's child lists).
 *
 * Those arrays are read at random, one cache miss per access, and at a
 * million rows they span tens of MiB: with 4 KiB pages nearly every access
 * is also a TLB miss, and the first touch of every page is a page fault.
 * Large blocks are therefore mapped on 2 MiB boundaries and advised as
 * transparent huge pages (the kernel may decline; it is only a hint).
 * Small blocks use calloc, so the sanitizers see them as usual.
 *
 * Arrays that are written before they are read (the in-place table's
 * parent nodes, DOWN's running values) need no zeroing, yet fresh pages
 * are zeroed by the kernel on their first touch: at 10M rows that was
 * 120 MB cleared per run, 15-25% of a tree_up / tree_down run's CPU on
 * either thread count (perf, kernel clear_page under the table check and
 * the JIT's row loop). So freed big blocks go to a small cache (at most
 * CACHE_N blocks, CACHE_BYTES in all, the oldest unmapped to make room),
 * and rt_tree_big_alloc_any serves such arrays from it:
 * the next run over the same tables reuses the pages as they are. Zeroed
 * allocations never take a cached block (clearing it would be a serial
 * pass on the thread that allocates; the kernel clears fresh pages on
 * whichever thread first touches them).
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "runtime/budget.h"
#include "tree.h"

#define RT_TREE_BIG ((size_t)4 << 20)
#define RT_TREE_HUGE ((size_t)2 << 20)

static size_t big_len(size_t bytes) { return (bytes + RT_TREE_HUGE - 1) & ~(RT_TREE_HUGE - 1); }

/* Every such array is TREE ACCUMULATE's state, whichever stage's segment
 * is running when it grows (the numbering grows in the segment of the
 * stage that follows it). */
#define HOLDER "TREE ACCUMULATE"

enum { CACHE_N = 4 };
#define CACHE_BYTES ((size_t)512 << 20)

static struct {
  pthread_mutex_t mu;
  int n;
  void *p[CACHE_N];     /* oldest first */
  size_t len[CACHE_N];
  size_t bytes;
} cache = {.mu = PTHREAD_MUTEX_INITIALIZER};

bool rt_tree_big_junk;

/* The smallest cached block of at least len bytes and at most twice that
 * (a bigger one is left for a bigger array), taken out; NULL if none. */
static void *cache_take(size_t len, size_t *got) {
  pthread_mutex_lock(&cache.mu);
  int best = -1;
  for (int i = 0; i < cache.n; i++)
    if (cache.len[i] >= len && cache.len[i] / 2 <= len && (best < 0 || cache.len[i] < cache.len[best]))
      best = i;
  void *p = NULL;
  if (best >= 0) {
    p = cache.p[best];
    *got = cache.len[best];
    cache.bytes -= cache.len[best];
    for (int i = best; i + 1 < cache.n; i++) cache.p[i] = cache.p[i + 1], cache.len[i] = cache.len[i + 1];
    cache.n--;
  }
  pthread_mutex_unlock(&cache.mu);
  return p;
}

/* Keeps block p (len bytes) for reuse, unmapping the oldest blocks that
 * no longer fit beside it (or p itself when it is over the whole cap). */
static void cache_put(void *p, size_t len) {
  if (len > CACHE_BYTES) {
    munmap(p, len);
    return;
  }
  void *drop[CACHE_N];
  size_t dlen[CACHE_N];
  int nd = 0;
  pthread_mutex_lock(&cache.mu);
  while (cache.n > 0 && (cache.n == CACHE_N || cache.bytes + len > CACHE_BYTES)) {
    drop[nd] = cache.p[0], dlen[nd++] = cache.len[0];
    cache.bytes -= cache.len[0];
    for (int i = 0; i + 1 < cache.n; i++) cache.p[i] = cache.p[i + 1], cache.len[i] = cache.len[i + 1];
    cache.n--;
  }
  cache.p[cache.n] = p, cache.len[cache.n++] = len;
  cache.bytes += len;
  pthread_mutex_unlock(&cache.mu);
  for (int i = 0; i < nd; i++) munmap(drop[i], dlen[i]);
}

/* A fresh 2 MiB-aligned mapping of len bytes advised as huge pages. */
static void *map_big(size_t len) {
  char *p = mmap(NULL, len + RT_TREE_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED) return NULL;
  /* keep the 2 MiB-aligned part, give back the slack on both sides */
  char *a = (char *)(((uintptr_t)p + RT_TREE_HUGE - 1) & ~(uintptr_t)(RT_TREE_HUGE - 1));
  if (a > p) munmap(p, (size_t)(a - p));
  size_t tail = (size_t)((p + len + RT_TREE_HUGE) - (a + len));
  if (tail) munmap(a + len, tail);
  madvise(a, len, MADV_HUGEPAGE);
  return a;   /* anonymous mappings are zero-filled */
}

static void *big_alloc(size_t bytes, bool zero) {
  /* Charged to the run's memory budget (budget.h); NULL when over it. */
  if (!rt_budget_charge_as(HOLDER, (int64_t)bytes)) return NULL;
  void *p;
  size_t len = big_len(bytes), got = 0;
  if (bytes < RT_TREE_BIG) p = zero ? calloc(1, bytes ? bytes : 1) : malloc(bytes ? bytes : 1);
  else if (!zero && (p = cache_take(len, &got))) (void)0;
  else {
    /* a zeroed block: give back a cached one of its size first, whose huge
     * pages the kernel then hands out again, instead of finding (and, with
     * memory fragmented, compacting for) new ones */
    void *old = zero ? cache_take(len, &got) : NULL;
    if (old) munmap(old, got);
    got = 0;
    p = map_big(len);
  }
  if (!p) {
    rt_budget_credit_as(HOLDER, (int64_t)bytes);
    return NULL;
  }
  /* a cached block longer than asked: the tail goes back to the system,
   * so that rt_tree_big_free's length (from bytes) is the mapping's */
  if (got > len) munmap((char *)p + len, got - len);
  if (!zero && rt_tree_big_junk) memset(p, 0xa5, bytes);
  return p;
}

void *rt_tree_big_alloc(size_t bytes) { return big_alloc(bytes, true); }
void *rt_tree_big_alloc_any(size_t bytes) { return big_alloc(bytes, false); }

void rt_tree_big_free(void *p, size_t bytes) {
  if (!p) return;
  rt_budget_credit_as(HOLDER, (int64_t)bytes);
  if (bytes < RT_TREE_BIG) free(p);
  else cache_put(p, big_len(bytes));
}
