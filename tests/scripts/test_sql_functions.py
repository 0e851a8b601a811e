#!/usr/bin/env python3
# SPDX-License-Identifier: MPL-2.0
# test_sql_functions.py - SQL functions have one home: migrations/ defines none (no CREATE
# FUNCTION, AGGREGATE or PROCEDURE, no trigger calling one), each sql/functions/NN_name.sql
# defines the function or view it is named after and nothing else of that kind, with CREATE OR
# REPLACE (it is applied again whenever it changes), no name is defined in two files, and a file
# calls only functions of files with a smaller NN (they are applied in file name order).
import os
import re
import sys

SRC = os.environ.get("RT_TEST_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
MIGRATIONS = os.path.join(SRC, "migrations")
FUNCTIONS = os.path.join(SRC, "sql", "functions")
CREATE = re.compile(r"\bcreate\s+(or\s+replace\s+)?(function|aggregate|procedure|view|trigger)"
                    r"\s+([a-z_][a-z0-9_]*)", re.I)
FILE_NAME = re.compile(r"^([0-9]{2})_([a-z0-9_]+)\.sql$")


def code(path):
    """The file's SQL without -- comments and '...' strings (the prose names functions freely)."""
    with open(path, encoding="utf-8") as f:
        return re.sub(r"'(?:[^']|'')*'", "''", re.sub(r"--[^\n]*", "", f.read()))


def main():
    failures = []
    for name in sorted(os.listdir(MIGRATIONS)):
        if not name.endswith(".sql"):
            continue
        for m in CREATE.finditer(code(os.path.join(MIGRATIONS, name))):
            if m.group(2).lower() in ("function", "aggregate", "procedure", "trigger"):
                failures.append(f"migrations/{name} has CREATE {m.group(2).upper()} "
                                f"{m.group(3)}: it belongs in sql/functions/")

    files = {}  # function name -> (NN, file)
    defined = {}  # every name a CREATE in sql/functions makes -> the files making it
    bodies = {}
    for name in sorted(os.listdir(FUNCTIONS)):
        if not name.endswith(".sql"):
            continue
        m = FILE_NAME.match(name)
        if not m:
            failures.append(f"sql/functions/{name}: expected NN_name.sql")
            continue
        files[m.group(2)] = (int(m.group(1)), name)
        text = code(os.path.join(FUNCTIONS, name))
        bodies[m.group(2)] = text
        made = set()
        for c in CREATE.finditer(text):
            if c.group(2).lower() == "trigger":
                continue
            if not c.group(1):
                failures.append(f"sql/functions/{name}: CREATE {c.group(2).upper()} "
                                f"{c.group(3)} without OR REPLACE cannot be applied twice")
            made.add(c.group(3))
            defined.setdefault(c.group(3), []).append(name)
        if made != {m.group(2)}:
            failures.append(f"sql/functions/{name} defines {sorted(made)}, "
                            f"expected only {m.group(2)}")
    for fn, where in sorted(defined.items()):
        if len(where) > 1:
            failures.append(f"{fn} is defined in {len(where)} files: {', '.join(where)}")

    for fn, text in bodies.items():
        level, name = files[fn]
        for other, (other_level, other_name) in files.items():
            if other != fn and re.search(r"\b" + other + r"\b", text) and other_level >= level:
                failures.append(f"sql/functions/{name} uses {other} of {other_name}: "
                                f"give {name} a larger number")

    if len(files) < 20:
        failures.append(f"only {len(files)} function files in {FUNCTIONS}")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(files)} SQL function files, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
