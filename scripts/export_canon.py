#!/usr/bin/env python3
"""export_canon.py DB — prints every table of a `pipejit --export` file in a
canonical text form, so that two imports of the same trace can be compared
with diff (e.g. before and after a speed change of an importer).

arg_set_id values are opaque (TRACES.md §1.10.6: they depend on the order
sets are written), so every *arg_set_id column is replaced by the content
of its set, and the args table is printed as the sorted list of distinct
sets. Everything else is printed as stored, rows in id order.
"""
import sqlite3
import sys


def main():
    db = sqlite3.connect(sys.argv[1])
    sets = {}
    for sid, fk, k, iv, sv, rv, vt in db.execute(
            "SELECT arg_set_id, flat_key, key, int_value, string_value, real_value, value_type"
            " FROM __intrinsic_args ORDER BY id"):
        sets.setdefault(sid, []).append(f"{k}|{fk}|{vt}|{iv}|{sv}|{rv}")
    canon = {sid: "{" + ";".join(rows) + "}" for sid, rows in sets.items()}
    tables = [r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    for t in tables:
        if t == "__intrinsic_args":
            print(f"== {t}")
            for c in sorted(set(canon.values())):
                print(c)
            continue
        cur = db.execute(f'SELECT * FROM "{t}"')
        cols = [d[0] for d in cur.description]
        print(f"== {t} ({', '.join(cols)})")
        argcols = [i for i, c in enumerate(cols) if c.endswith("arg_set_id")]
        for row in cur:
            row = list(row)
            for i in argcols:
                if row[i] is not None:
                    row[i] = canon.get(row[i], f"<missing {row[i]}>")
            print("|".join("NULL" if v is None else str(v) for v in row))


if __name__ == "__main__":
    main()
