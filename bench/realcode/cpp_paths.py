#!/usr/bin/python3
"""The two C++ paths side by side on folders of LibTorch code (docs/cpp.md, bench/README.md).

    bench/realcode/cpp_paths.py [--trainlint build/trainlint] [--cache DIR] FOLDER...

Each FOLDER is one run (`trainlint FOLDER`, all rules, the folder's own configuration ignored;
`A+B` lints the folders A and B together as one run),
once on the fast path (--no-clang) and once on the typed path (--clang, precompiled headers kept
in --cache). Prints, per folder, the C++ files, each path's wall time, the findings of each, the
findings only one path has, and the typed path's messages (files Clang could not type). The
typed path's first folder pays for the precompiled header unless --cache already holds it.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(binary, folder, extra, cache):
    cmd = [binary, "--isolated", "--format", "json", "--cache-dir", cache] + extra + folder.split("+")
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    if p.returncode not in (0, 1):
        sys.exit("trainlint failed on %s (%d): %s" % (folder, p.returncode, p.stderr[-2000:]))
    doc = json.loads(p.stdout)
    found = {(f["path"], f["range"]["start"]["line"], f["code"]) for f in doc["findings"]}
    msgs = [m["path"] + ": " + m["message"] for m in doc.get("messages", [])]
    return wall, found, msgs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trainlint", default=os.path.join(ROOT, "build", "trainlint"))
    ap.add_argument("--cache", default="/tmp/trainlint-cpp-paths-cache")
    ap.add_argument("folders", nargs="+")
    a = ap.parse_args()
    print("| folder | C++ files | fast s | typed s | fast findings | typed findings | typed only | fast only | Clang messages |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |")
    details = []
    for folder in a.folders:
        n = sum(1 for part in folder.split("+") for _, _, fs in os.walk(part) for f in fs
                if f.endswith((".cpp", ".cc", ".cxx", ".h", ".hpp")))
        # a fresh cache folder per path keeps the whole-run cache out; the typed path's PCH stays
        tf, fast, _ = run(a.trainlint, folder, ["--no-clang", "--no-cache"], a.cache)
        tt, typed, msgs = run(a.trainlint, folder, ["--clang"], a.cache)
        only_t, only_f = sorted(typed - fast), sorted(fast - typed)
        print("| %s | %d | %.1f | %.1f | %d | %d | %d | %d | %d |" % (folder, n, tf, tt, len(fast), len(typed), len(only_t), len(only_f), len(msgs)))
        sys.stdout.flush()
        details.append((folder, only_t, only_f, msgs))
    for folder, only_t, only_f, msgs in details:
        for k in only_t:
            print("typed only: %s:%d %s" % k)
        for k in only_f:
            print("fast only: %s:%d %s" % k)
        for m in msgs:
            print("message: " + m)


if __name__ == "__main__":
    main()
