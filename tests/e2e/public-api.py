#!/usr/bin/env python3
"""The public API of libmapscope, read from its headers: every function and
object declared extern in include/mapscope/*.h (static inline functions
are not symbols). Prints one name a line, sorted.

usage: public-api.py HEADER...
"""
import re
import sys


def declared(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    # The C++ guards' extern "C" { and } lie inside #ifdef __cplusplus blocks.
    text = re.sub(r"#ifdef __cplusplus.*?#endif", " ", text, flags=re.S)
    text = re.sub(r"#[^\n]*(\\\n[^\n]*)*", " ", text)
    names = set()
    # Declarations at file scope end in ';' at brace depth 0; bodies of
    # static inline functions and struct definitions are skipped whole.
    depth, start = 0, 0
    for i, c in enumerate(text):
        if c == "{":
            if depth == 0:
                head = text[start:i]
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
                if re.search(r"\bstatic\b", head) or not re.search(r"\(", head):
                    continue
        elif c == ";" and depth == 0:
            decl = text[start:i]
            start = i + 1
            if re.search(r"\b(static|typedef)\b", decl):
                continue
            m = re.search(r"\b(ms_[a-z0-9_]+)\s*\(", decl)
            if m and not re.search(r"\(\s*\*\s*" + m.group(1), decl):
                names.add(m.group(1))
                continue
            m = re.search(r"\bextern\b.*\b(ms_[a-z0-9_]+)\s*(\[[^]]*\])?\s*$", decl, flags=re.S)
            if m:
                names.add(m.group(1))
    return names


names = set()
for path in sys.argv[1:]:
    with open(path) as f:
        names |= declared(f.read())
print("\n".join(sorted(names)))
