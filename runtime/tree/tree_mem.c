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
 */
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

void *rt_tree_big_alloc(size_t bytes) {
  /* Charged to the run's memory budget (budget.h); NULL when over it. */
  if (!rt_budget_charge_as(HOLDER, (int64_t)bytes)) return NULL;
  if (bytes < RT_TREE_BIG) {
    void *s = calloc(1, bytes ? bytes : 1);
    if (!s) rt_budget_credit_as(HOLDER, (int64_t)bytes);
    return s;
  }
  size_t len = big_len(bytes);
  char *p = mmap(NULL, len + RT_TREE_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED) {
    rt_budget_credit_as(HOLDER, (int64_t)bytes);
    return NULL;
  }
  /* keep the 2 MiB-aligned part, give back the slack on both sides */
  char *a = (char *)(((uintptr_t)p + RT_TREE_HUGE - 1) & ~(uintptr_t)(RT_TREE_HUGE - 1));
  if (a > p) munmap(p, (size_t)(a - p));
  size_t tail = (size_t)((p + len + RT_TREE_HUGE) - (a + len));
  if (tail) munmap(a + len, tail);
  madvise(a, len, MADV_HUGEPAGE);
  return a;   /* anonymous mappings are zero-filled */
}

void rt_tree_big_free(void *p, size_t bytes) {
  if (!p) return;
  rt_budget_credit_as(HOLDER, (int64_t)bytes);
  if (bytes < RT_TREE_BIG) free(p);
  else munmap(p, big_len(bytes));
}
