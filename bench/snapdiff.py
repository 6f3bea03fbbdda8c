#!/usr/bin/env python3
"""Compare two snapshot folders of `analyze --format json` / text output (as made by a
snapshot script: NAME.json, NAME.txt, NAME.rc per capture).

    bench/snapdiff.py OLD_DIR NEW_DIR [--ignore-new-fields]

JSON is compared as data (key order is not semantic): the captures by position, the
flows by id, every field; fields only in NEW are listed once as additions (or ignored).
Text files are compared line by line. Prints one line per difference and a summary.
"""
import json
import os
import sys


def walk(a, b, path, out, additions):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            if k not in b:
                out.append(f"{path}.{k}: removed")
            else:
                walk(a[k], b[k], f"{path}.{k}", out, additions)
        for k in b:
            if k not in a:
                additions.add(f"{path.split('[')[0]}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} -> {len(b)} items")
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{path}[{i}]", out, additions)
    elif a != b:
        out.append(f"{path}: {json.dumps(a)[:120]} -> {json.dumps(b)[:120]}")


def main():
    old, new = sys.argv[1], sys.argv[2]
    ignore_new = "--ignore-new-fields" in sys.argv
    names = sorted(n for n in os.listdir(old) if n.endswith(".json"))
    changed = 0
    additions = set()
    for n in names:
        base = n[: -len(".json")]
        diffs = []
        for ext in (".rc",):
            a = open(os.path.join(old, base + ext)).read().strip() if os.path.exists(os.path.join(old, base + ext)) else None
            b = open(os.path.join(new, base + ext)).read().strip() if os.path.exists(os.path.join(new, base + ext)) else None
            if a != b:
                diffs.append(f"exit status {a} -> {b}")
        try:
            ja = json.load(open(os.path.join(old, n)))
        except Exception:
            ja = None
        try:
            jb = json.load(open(os.path.join(new, n)))
        except Exception:
            jb = None
        if (ja is None) != (jb is None):
            diffs.append("json: valid in one only")
        elif ja is not None:
            walk(ja.get("captures"), jb.get("captures"), "captures", diffs, additions)
            fa = {f["id"]: f for f in ja.get("flows", [])}
            fb = {f["id"]: f for f in jb.get("flows", [])}
            for i in sorted(set(fa) | set(fb)):
                if i not in fb:
                    diffs.append(f"flow {i}: missing")
                elif i not in fa:
                    diffs.append(f"flow {i}: new")
                else:
                    walk(fa[i], fb[i], f"flow {i}", diffs, additions)
            order_a = [f["id"] for f in ja.get("flows", [])]
            order_b = [f["id"] for f in jb.get("flows", [])]
            if order_a != order_b and set(order_a) == set(order_b):
                diffs.append("flows: same flows, another order")
        ta = os.path.join(old, base + ".txt")
        tb = os.path.join(new, base + ".txt")
        if os.path.exists(ta) and os.path.exists(tb):
            la, lb = open(ta).read().splitlines(), open(tb).read().splitlines()
            if la != lb:
                extra = [l for l in lb if l not in la]
                gone = [l for l in la if l not in lb]
                diffs.append(f"text: {len(gone)} lines gone, {len(extra)} new: " + " | ".join((gone[:2] + ["=>"] + extra[:3])))
        if diffs:
            changed += 1
            print(f"== {base}")
            for d in diffs[:40]:
                print("   " + d)
            if len(diffs) > 40:
                print(f"   ... {len(diffs) - 40} more")
    if additions and not ignore_new:
        print("fields added:", ", ".join(sorted(additions)))
    print(f"{len(names)} captures compared, {changed} differ")


if __name__ == "__main__":
    main()
