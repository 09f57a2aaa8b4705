#!/usr/bin/env python3
"""Checks real JSON output against docs/json-schema.md's field tables.

usage: check-json-schema.py SCHEMA.md LABEL=FILE...

Each table in the schema follows a marker `<!-- json: LABEL PATH -->`: LABEL
names a kind of run (report, timeline, ...), PATH the objects it describes
(`.` the top object or each line of JSON Lines, `.regions[]` each element of
regions, `.advice[].region` an object inside each element). Every FILE is
decoded as strict UTF-8 and parsed; for each table, a field an object has
that the table lacks fails, and so does a field of the table that no object
of any FILE of that label had. Where the table gives a type (int, bool,
string, hex string, object, array, null, "X or null"), each value is checked
against it.
"""
import json
import re
import sys

MARK = re.compile(r"<!--\s*json:\s*(\S+)\s+(\S+)\s*-->")
HEX = re.compile(r"^0x[0-9a-f]+$")


def parse_schema(text):
    """{(label, path): {field: type text}} from the marked tables."""
    tables, key = {}, None
    for line in text.splitlines():
        m = MARK.search(line)
        if m:
            key = (m.group(1), m.group(2))
            tables[key] = {}
            continue
        if key is None:
            continue
        if not line.startswith("|"):
            if line.strip() == "" and tables[key]:
                key = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        names = re.findall(r"`([^`]+)`", cells[0])
        if not names or cells[0] == "field":
            continue
        types = [t.strip() for t in cells[1].split(",")] if len(cells) > 1 else [""]
        if len(types) != len(names):
            types = [cells[1] if len(cells) > 1 else ""] * len(names)
        for n, t in zip(names, types):
            tables[key][n] = t
    return tables


def type_ok(value, spec):
    """None when the spec is not one this checker knows, else whether value fits."""
    alts = [a.strip() for a in spec.split(" or ")] if spec else []
    checks = {
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "bool": lambda v: isinstance(v, bool),
        "string": lambda v: isinstance(v, str),
        "hex string": lambda v: isinstance(v, str) and bool(HEX.match(v)),
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "null": lambda v: v is None,
    }
    if not alts or any(a not in checks for a in alts):
        return None
    return any(checks[a](value) for a in alts)


def at_path(obj, path):
    """The objects PATH names inside obj."""
    objs = [obj]
    for step in [s for s in path.split(".") if s]:
        many = step.endswith("[]")
        name = step[:-2] if many else step
        nxt = []
        for o in objs:
            v = o.get(name) if isinstance(o, dict) else None
            if many and isinstance(v, list):
                nxt.extend(v)
            elif not many and v is not None:
                nxt.append(v)
        objs = nxt
    return [o for o in objs if isinstance(o, dict)]


def load(path):
    """The file's objects: one JSON value, or JSON Lines. Bytes must be strict UTF-8."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", errors="strict")
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def main(argv):
    with open(argv[1], encoding="utf-8") as f:
        tables = parse_schema(f.read())
    runs = {}
    for arg in argv[2:]:
        label, _, path = arg.partition("=")
        runs.setdefault(label, []).extend(load(path))
    bad = []
    for label in sorted({l for l, _ in tables} - set(runs)):
        bad.append(f"{label}: documented, but no output of it was checked")
    for label in sorted(set(runs) - {l for l, _ in tables}):
        bad.append(f"{label}: output given, but the schema has no table for it")
    for (label, path), fields in sorted(tables.items()):
        seen = set()
        for top in runs.get(label, []):
            for o in at_path(top, path):
                for k, v in o.items():
                    seen.add(k)
                    if k not in fields:
                        continue
                    if type_ok(v, fields[k]) is False:
                        bad.append(f"{label} {path}: {k} = {v!r} is not {fields[k]}")
        for k in sorted(seen - set(fields)):
            bad.append(f"{label} {path}: the output has '{k}', the schema does not")
        for k in sorted(set(fields) - seen):
            bad.append(f"{label} {path}: the schema has '{k}', no output had it")
    for line in dict.fromkeys(bad):
        print("FAIL:", line)
    print(f"{len(tables)} tables, {sum(len(v) for v in runs.values())} objects checked")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
