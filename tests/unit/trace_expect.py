#!/usr/bin/env python3
"""Expected numbers for a Chrome JSON trace, derived from the raw events
with Python's json module only (not from pipejit's importer), for
test_trace_json.c. Prints `key value` lines:

  slices_nonzero   B events + X events with dur > 0 (slices with dur != 0)
  slices_zero      X with dur 0 + instants (i/I/R, thread ones with a tid) + n
  max_depth        deepest B/X nesting on one thread (simple stack walk)
  counters         numeric members of C events' args
  sched_cpu_<n>    Fuchsia context switches on cpu n
  process <pid> <name> / thread <pid> <tid> <name>   M names (last wins)
"""
import gzip, json, sys
from collections import Counter, defaultdict

def num(v):
    if isinstance(v, bool): return None
    if isinstance(v, (int, float)): return v
    if isinstance(v, str):
        try: return float(v)
        except ValueError: return None
    return None

def us(v):
    v = num(v)
    if v is None: return None
    return int(v) * 1000 if float(v).is_integer() else round(v * 1000.0)

d = json.load(gzip.open(sys.argv[1], 'rt') if sys.argv[1].endswith('.gz') else open(sys.argv[1]))
ev = d['traceEvents'] if isinstance(d, dict) else d
out = {}
nonzero = zero = counters = 0
per_thread = defaultdict(list)
pnames, tnames = {}, {}
for i, e in enumerate(ev):
    ph, ts = e.get('ph'), us(e.get('ts'))
    pid, tid = e.get('pid', 0), e.get('tid', 0)
    if tid == 0 and pid != 0: tid = pid
    if ph == 'M':
        name = (e.get('args') or {}).get('name')
        if e.get('name') == 'process_name' and isinstance(name, str) and name: pnames[pid] = name
        if e.get('name') == 'thread_name' and isinstance(name, str) and name: tnames[(pid, tid)] = name
        continue
    if ts is None or ts < 0: continue
    if ph == 'B':
        nonzero += 1
        per_thread[(pid, tid)].append((ts, 2, 0, i, 'B'))
    elif ph == 'b':
        nonzero += 1
    elif ph == 'E':
        per_thread[(pid, tid)].append((ts, 0, 0, i, 'E'))
    elif ph == 'X' and 'dur' in e:
        dur = us(e['dur'])
        if dur > 0: nonzero += 1
        elif dur == 0: zero += 1
        if dur >= 0: per_thread[(pid, tid)].append((ts, 1, -dur, i, ('X', ts + dur)))
    elif ph in ('i', 'I', 'R'):
        s = e.get('s')
        if s in ('g', 'p') or 'tid' in e: zero += 1
    elif ph == 'n':
        zero += 1
    elif ph == 'C':
        counters += sum(1 for v in (e.get('args') or {}).values() if num(v) is not None)
max_depth = 0
for evs in per_thread.values():
    evs.sort()
    stack = []   # end time, or None while open
    for ts, _, _, _, what in evs:
        while stack and stack[-1] is not None and stack[-1] <= ts: stack.pop()
        if what == 'E':
            for k in range(len(stack) - 1, -1, -1):
                if stack[k] is None:
                    del stack[k:]
                    break
            continue
        max_depth = max(max_depth, len(stack))
        stack.append(None if what == 'B' else what[1])
print('slices_nonzero', nonzero)
print('slices_zero', zero)
print('max_depth', max_depth)
print('counters', counters)
sysev = d.get('systemTraceEvents') if isinstance(d, dict) else None
if isinstance(sysev, dict):
    for cpu, n in sorted(Counter(e['cpu'] for e in sysev['events'] if e.get('ph') == 'k').items()):
        print('sched_cpu_%d' % cpu, n)
for pid, name in sorted(pnames.items()): print('process', pid, name)
for (pid, tid), name in sorted(tnames.items()): print('thread', pid, tid, name)
