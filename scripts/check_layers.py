#!/usr/bin/env python3
"""check_layers.py SRCDIR BUILDDIR — the layering rules of the tree (issue 13).

1. No #include cycle: the include graph of the tree's own files is acyclic.
2. exec/ includes no header of codegen/ or interp/: it reaches the backends
   only through exec/backend.h.
3. cli/ includes only pipejit.h, its own headers, api/hooks.h and the
   operator lists ir/*.def (data: the shell's completion words).
4. No call cycle between folders, read from the objects the linker sees
   (file A depends on file B when A references a symbol B defines): api/ ->
   exec/ -> ir/ -> runtime/ and so on, never back.
5. No call cycle between files except the recursive parts listed in
   KNOWN_CYCLES (mutual recursion a recursive-descent parser, the binder,
   the interpreter's expression evaluator and the importers' record walkers
   are built on). A cycle must match an entry exactly: a new file drawn
   into one, or a new cycle, fails until it is broken or listed here with
   the reason.
Prints each violation and exits 1, else prints a summary and exits 0.
"""
import collections, glob, os, re, subprocess, sys

KNOWN_CYCLES = [
    # recursive descent: statements, stages and expressions parse each other,
    # and a SQL statement's ( FROM … ) pipelines (sqlpipe.c) are parsed as stages;
    # PERFETTO INDEX statements (parse_index.c) use the statement parser's helpers,
    # and a PerfettoSQL statement's body (parse_perfetto.c) is a pipeline or SQL;
    # a window (parse_window.c) holds expressions and ORDER BY's keys
    {"frontend/parse.c", "frontend/parse_expr.c", "frontend/parse_index.c",
     "frontend/parse_perfetto.c", "frontend/parse_stage.c", "frontend/parse_window.c",
     "frontend/sqlpipe.c"},
    # the binder: stages bind expressions and sources, which bind stages (a
    # view's or table function's body inlined as a source: bind_defs.c; a window
    # call's arguments and keys are expressions, met again in its item: bind_window.c)
    # (JOIN, the set operations, the GRAPH sources (bind_graph.c) and the
    # §9.4 tree operators (bind_tshape.c) bind their relations as sources;
    # so do the interval sources, through their shared relation helpers:
    # bind_ivrel.c, bind_ivsrc.c; and §9.2's reshaping stages, which bind
    # operands and expressions: bind_reshape.c)
    {"ir/bind.c", "ir/bind_ivrel.c", "ir/bind_ivsrc.c", "ir/bind_reshape.c", "ir/bind_defs.c", "ir/bind_distinct.c", "ir/bind_expr.c", "ir/bind_interval.c",
     "ir/bind_join.c", "ir/bind_row.c", "ir/bind_setop.c", "ir/bind_sqlfn.c", "ir/bind_stage.c",
     "ir/bind_subq.c",
     "ir/bind_text.c", "ir/bind_tree.c", "ir/bind_window.c", "ir/live.c", "ir/plan.c",
     "ir/print.c", "ir/segment.c", "ir/verify.c", "ir/bind_fork.c", "ir/bind_sql.c",
     "ir/bind_graph.c", "ir/bind_tshape.c",
     # §9's interval operators bind their relations as sources too
     "ir/bind_ivrel.c", "ir/bind_ivsrc.c", "ir/bind_ivmatch.c"},
    # expressions evaluate string functions and calls of PerfettoSQL and trace
    # functions (vm_callout.c), which evaluate their arguments
    {"interp/vm_callout.c", "interp/vm_expr.c", "interp/vm_str.c"},
    # a JOIN probe runs the rest of its segment on each chunk of its output
    # (vm_rest), and the rest may hold another probe
    {"interp/vm.c", "interp/vm_join.c"},
    # the interval intersection and its streaming sweep (runtime/interval/:
    # rt_isect_reserve could move below both)
    {"runtime/interval/isect.c", "runtime/interval/isect_sweep.c"},
    # the importers' walkers over nested records
    {"import/args.c", "import/finish.c", "import/sched.c", "import/slices.c", "import/stats.c",
     "import/tables.c", "import/threads.c", "import/tracks.c"},
    {"import/proto_ftrace_read.c", "import/proto_read.c", "import/proto_te_read.c"},
    {"import/json.c", "import/json_args.c", "import/json_events.c", "import/json_read.c"},
    # CREATE PERFETTO TABLE AS a statement with pipelines: sqlpipes.c rewrites
    # it and runs it through engine_table.c's SQL-rows-to-table (splitting
    # engine_table.c into the SQL runner and CREATE would break it)
    {"api/engine_table.c", "api/sqlpipes.c"},
    # a module is a script: INCLUDE PERFETTO MODULE runs one (pj__exec_text),
    # whose statements may INCLUDE
    {"api/script.c", "api/stmt_include.c"},
    # the same in the shell: .read FILE runs a script (input.c) whose lines
    # may be dot-commands (dot.c), .read among them
    {"cli/dot.c", "cli/input.c"},
]

src, build = sys.argv[1], sys.argv[2]
errors = []

# ---- includes -------------------------------------------------------------
files = subprocess.check_output(["git", "-C", src, "ls-files"], text=True).split()
fset = set(files)
inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

def resolve(frm, name):
    for base in (os.path.dirname(frm), "include", ""):
        p = os.path.normpath(os.path.join(base, name))
        if p in fset:
            return p
    return None

incs = {}
for f in files:
    if not re.search(r"\.(c|h|def)$", f) or not os.path.exists(os.path.join(src, f)):
        continue
    with open(os.path.join(src, f), errors="replace") as fh:
        text = fh.read()
    incs[f] = sorted({t for t in (resolve(f, n) for n in inc_re.findall(text)) if t})

def sccs(graph):
    """Tarjan, iterative: the strongly connected components of more than one node."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph.get(root, ())))]
        index[root] = low[root] = n[0]; n[0] += 1; stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = n[0]; n[0] += 1; stack.append(nxt); on.add(nxt)
                    work.append((nxt, iter(graph.get(nxt, ()))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(set(comp))
    return out

for comp in sccs(incs):
    errors.append("include cycle: " + " ".join(sorted(comp)))
for f, ts in incs.items():
    if f in ts:
        errors.append(f"{f} includes itself")

for f, ts in incs.items():
    if f.startswith("exec/"):
        for t in ts:
            if t.startswith(("codegen/", "interp/")):
                errors.append(f"{f} includes {t}: exec/ reaches the backends only through exec/backend.h")
    if f.startswith("cli/"):
        for t in ts:
            # the operator lists are data (the shell's completion words)
            if not (t.startswith("cli/") or t in ("include/pipejit.h", "api/hooks.h") or
                    re.match(r"ir/\w+\.def$", t)):
                errors.append(f"{f} includes {t}: cli/ uses pipejit.h and api/hooks.h only")

# ---- symbols --------------------------------------------------------------
defs, uses = {}, collections.defaultdict(set)
objdirs = [os.path.join(build, "CMakeFiles", d) for d in ("pj_objs.dir", "pipejit_cli.dir")]
nobj = 0
for d in objdirs:
    for o in glob.glob(os.path.join(d, "**", "*.c.o"), recursive=True):
        s = os.path.relpath(o, d)[: -len(".o")]
        if s not in fset:
            continue   # an object left behind by a file that moved
        nobj += 1
        for ln in subprocess.check_output(["nm", o], text=True).splitlines():
            p = ln.split()
            if len(p) == 3 and p[1] in "TDBRC":
                defs[p[2]] = s
            elif len(p) == 2 and p[0] == "U":
                uses[s].add(p[1])
if nobj == 0:
    errors.append(f"no object files under {build}: build first")
calls = collections.defaultdict(set)
why = {}
for f, us in uses.items():
    for u in us:
        t = defs.get(u)
        if t and t != f:
            calls[f].add(t)
            why.setdefault((f, t), u)

def folder(f):
    return os.path.dirname(f)

fcalls = collections.defaultdict(set)
for f, ts in calls.items():
    for t in ts:
        if folder(f) != folder(t):
            fcalls[folder(f)].add(folder(t))
for comp in sccs(fcalls):
    edges = [f"{a} -> {b} ({why[(a, b)]})" for a in sorted(calls) for b in sorted(calls[a])
             if folder(a) in comp and folder(b) in comp and folder(a) != folder(b)]
    errors.append("call cycle between folders " + " ".join(sorted(comp)) + ":\n    " +
                  "\n    ".join(edges))
known = [set(k) for k in KNOWN_CYCLES]
cycles = sccs(calls)
for comp in cycles:
    if comp not in known:
        edges = [f"{a} -> {b} ({why[(a, b)]})" for a in sorted(comp) for b in sorted(calls[a])
                 if b in comp]
        errors.append("call cycle between files " + " ".join(sorted(comp)) + ":\n    " +
                      "\n    ".join(edges))

for e in errors:
    print(e)
if errors:
    sys.exit(1)
print(f"layers: {len(incs)} files, {nobj} objects; no include cycle, no folder cycle, "
      f"{len(cycles)} known recursive file groups")
