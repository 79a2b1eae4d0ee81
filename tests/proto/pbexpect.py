#!/usr/bin/env python3
"""pbexpect.py — expected numbers for the protobuf importer's tests, from
an independent decoder (this file's own minimal wire-format reader, no
pipejit code), so the C tests compare against numbers derived another way.

usage: pbexpect.py TRACE [TRACE…]   prints `key value` lines per trace:
  packets N                   Trace.packet records
  field.<n> N                 packets whose payload is TracePacket field n
  te.slices N                 TrackEvent slices (SLICE_BEGIN + INSTANT)
  te.tracks N                 distinct track uuids with slices
  te.depth.min/max N          nesting depth range (per track, in ts order)
  te.thread <tid> <name>      thread names from TrackDescriptor.thread
  cs.switch.<cpu> N           compact_sched switches per cpu
  cs.waking.<cpu> N           compact_sched wakings per cpu
  cs.wakings_before_first_switch N  wakings earlier than the first switch of their cpu
  pt.processes N / pt.threads N    ProcessTree entries (processes with a cmdline)
  pt.process <pid> <name>     ProcessTree names (cmdline[0], first word if alone)
"""
import gzip
import sys


def varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError("bad varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """Yields (field, wire_type, value) over a message; value is an int or bytes."""
    i = 0
    while i < len(b):
        tag, i = varint(b, i)
        fid, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wt == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ValueError("cut")
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        yield fid, wt, v


NON_PAYLOAD = {3, 8, 10, 12, 13, 41, 42, 58, 59, 79, 87, 98}


def packets(data):
    for fid, wt, v in fields(data):
        if fid == 1 and wt == 2:
            yield v


def packed(v):
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def summary(data):
    """The te./cs./pt. keys, decoded straight from the wire."""
    out = []
    events = []          # (ts, arrival, uuid, type)
    threads = {}
    cs_sw, cs_wk, firsts = {}, {}, {}
    procs, nthreads, pnames = 0, 0, {}
    for n, p in enumerate(packets(data)):
        ts = None
        te = None
        for fid, wt, v in fields(p):
            if fid == 8:
                ts = v
            elif fid == 11 and wt == 2:
                te = v
            elif fid == 60 and wt == 2:
                for df, dw, dv in fields(v):
                    if df == 4 and dw == 2:
                        tid = name = None
                        for tf, tw, tv in fields(dv):
                            if tf == 2:
                                tid = tv
                            if tf == 5:
                                name = tv.decode()
                        threads[tid] = name
            elif fid == 2 and wt == 2:
                for pf, pw, pv in fields(v):
                    if pf == 1:
                        argv = [x for f2, w2, x in fields(pv) if f2 == 3]
                        pid = [x for f2, w2, x in fields(pv) if f2 == 1][0]
                        if argv:
                            procs += 1
                            nm = argv[0].decode(errors="replace")
                            if len(argv) == 1:
                                nm = nm.split(" ")[0]
                            pnames[pid] = nm
                    elif pf == 2:
                        nthreads += 1
            elif fid == 1 and wt == 2:
                cpu = [x for f2, w2, x in fields(v) if f2 == 1][0]
                for bf, bw, bv in fields(v):
                    if bf != 4:
                        continue
                    arrs = {f2: x for f2, w2, x in fields(bv) if f2 != 5}
                    sw = packed(arrs.get(1, b""))
                    wk = packed(arrs.get(7, b""))
                    cs_sw[cpu] = cs_sw.get(cpu, 0) + len(sw)
                    cs_wk[cpu] = cs_wk.get(cpu, 0) + len(wk)
                    # absolute times: running sums of the deltas
                    acc = 0
                    for d in sw:
                        acc += d
                        firsts.setdefault(cpu, [[], []])[0].append(acc)
                    acc = 0
                    for d in wk:
                        acc += d
                        firsts.setdefault(cpu, [[], []])[1].append(acc)
        if te is not None:
            typ, uuid = 0, 0
            for f2, w2, x in fields(te):
                if f2 == 9:
                    typ = x
                if f2 == 11:
                    uuid = x
            events.append((ts, n, uuid, typ))
    if events:
        events.sort()
        stacks, depths, tracks, slices = {}, [], set(), 0
        for ts, n, uuid, typ in events:
            st = stacks.setdefault(uuid, [])
            if typ == 1:
                depths.append(len(st))
                st.append(ts)
                slices += 1
                tracks.add(uuid)
            elif typ == 2 and st:
                st.pop()
            elif typ == 3:
                depths.append(len(st))
                slices += 1
                tracks.add(uuid)
        out.append("te.slices %d" % slices)
        out.append("te.tracks %d" % len(tracks))
        out.append("te.depth.min %d" % min(depths))
        out.append("te.depth.max %d" % max(depths))
        for tid in sorted(threads):
            out.append("te.thread %d %s" % (tid, threads[tid]))
    for cpu in sorted(cs_sw):
        out.append("cs.switch.%d %d" % (cpu, cs_sw[cpu]))
    for cpu in sorted(cs_wk):
        out.append("cs.waking.%d %d" % (cpu, cs_wk[cpu]))
    if firsts:
        early = 0
        for sws, wks in firsts.values():
            first = min(sws) if sws else None
            early += sum(1 for w in wks if first is None or w < first)
        out.append("cs.wakings_before_first_switch %d" % early)
    if procs:
        out.append("pt.processes %d" % procs)
        out.append("pt.threads %d" % nthreads)
        for pid in sorted(pnames):
            out.append("pt.process %d %s" % (pid, pnames[pid]))
    return out


def main():
    if sys.argv[1] == "--summary":
        for path in sys.argv[2:]:
            data = open(path, "rb").read()
            if data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            print("\n".join(summary(data)))
        return
    for path in sys.argv[1:]:
        data = open(path, "rb").read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        counts = {}
        n = 0
        for p in packets(data):
            n += 1
            for fid, wt, v in fields(p):
                if fid not in NON_PAYLOAD and wt == 2:
                    counts[fid] = counts.get(fid, 0) + 1
                    break
        print("packets", n)
        for k in sorted(counts):
            print("field.%d %d" % (k, counts[k]))


if __name__ == "__main__":
    main()
