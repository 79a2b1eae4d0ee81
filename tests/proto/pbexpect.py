#!/usr/bin/env python3
"""pbexpect.py — expected numbers for the protobuf importer's tests, from
an independent decoder (this file's own minimal wire-format reader, no
pipejit code), so the C tests compare against numbers derived another way.

usage: pbexpect.py TRACE [TRACE…]   prints `key value` lines per trace:
  packets N                   Trace.packet records
  field.<n> N                 packets whose payload is TracePacket field n
  (more keys are added by the tests that need them)
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


def main():
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
