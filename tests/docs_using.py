#!/usr/bin/env python3
"""docs/using.md's code blocks are the examples' text: each fenced block must appear verbatim in
the examples/ file that the paragraph before it names (the last "examples/....:" there), and
every example that install.consumer builds appears in the guide.

    python3 docs_using.py SOURCE_DIR
"""
import re
import sys

root = sys.argv[1]
text = open(f"{root}/docs/using.md", encoding="utf-8").read()
failures = []
named = set()
for m in re.finditer(r"```[a-z]*\n(.*?)\n```", text, re.S):
    before = text[: m.start()]
    refs = re.findall(r"(examples/[\w./-]+\w)", before.rstrip("\n").split("\n\n")[-1])
    if not refs:
        failures.append(f"a block at offset {m.start()} has no examples/ file named before it")
        continue
    path = refs[-1]
    named.add(path)
    try:
        source = open(f"{root}/{path}", encoding="utf-8").read()
    except OSError as e:
        failures.append(f"{path}: {e}")
        continue
    if m.group(1) not in source:
        failures.append(f"the block after '{path}' is not that file's text")
for example in ("consumer/main.cpp", "consumer/barrier_c.c", "consumer/barrier_omp.c", "consumer/team_collectives.cpp",
                "consumer/emulate.cpp", "consumer/cluster.cpp", "consumer/CMakeLists.txt", "consumer-c/CMakeLists.txt",
                "consumer-c/Makefile"):
    if f"examples/{example}" not in named:
        failures.append(f"examples/{example} has no block in docs/using.md")
if failures:
    print("docs/using.md:\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"docs/using.md: {len(named)} example files, every block verbatim")
