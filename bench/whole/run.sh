#!/usr/bin/env bash
# Whole-process speed and memory (bench/README.md, "Whole process"), the way users run trainlint.
#
#   bench/whole/run.sh [--runs N] [TREE]            the tree (default: Debian's torch package)
#   bench/whole/run.sh --huge MB [--runs N] [TREE]  one MB-sized file made from the tree's files
#
# Tree mode: one hyperfine run, side by side: the bare parse (bench/bare/bare_parse.c: reads and
# parses the same files with the same grammars, nothing else), once with glibc's malloc defaults
# and once with the malloc tunables trainlint gives itself, and `trainlint` at -j 1, 2, 4, ... and all
# cores; then each one's peak RSS (GNU time, the median of 3 runs). Prints the ratios to both bare
# parses. Huge mode: concatenates the tree's .py files that Python itself parses (so that the
# file is valid Python) into one file of about MB megabytes in a temporary folder, then the same
# measurements on that file.
# TRAINLINT=path picks the binary and BARE=path the bare parser (default: the first build folder
# holding both: build-release/, build/, build-test/; build them with -DTRAINLINT_BENCH=ON).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)

runs=5
huge=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --huge) huge=$2; shift 2 ;;
    -*) echo "unknown option: $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
tree=${1:-/usr/lib/python3/dist-packages/torch}
[ -d "$tree" ] || { echo "not a folder: $tree (python3-torch installs the default one)" >&2; exit 2; }

tl=${TRAINLINT:-} bare=${BARE:-}
for d in build-release build build-test; do
  if [ -z "$tl" ] && [ -x "$src/$d/trainlint" ] && [ -x "$src/$d/bench/trainlint_bare_parse" ]; then
    tl=$src/$d/trainlint
    bare=${bare:-$src/$d/bench/trainlint_bare_parse}
  fi
done
[ -x "$tl" ] && [ -x "$bare" ] || { echo "build trainlint and trainlint_bare_parse (-DTRAINLINT_BENCH=ON) or set TRAINLINT and BARE" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "hyperfine is missing (scripts/deps.sh installs it)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
input=$tree
if [ -n "$huge" ]; then
  input=$tmp/huge.py
  python3 - "$tree" "$huge" "$input" <<'PY'
import ast, os, sys
root, mb, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
texts = []
for d, _, names in sorted(os.walk(root)):
    for n in sorted(names):
        if not n.endswith(".py"):
            continue
        try:
            t = open(os.path.join(d, n), encoding="utf-8").read()
            ast.parse(t)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        texts.append(t.replace("from __future__ import annotations", "") + "\n")
if not texts:
    sys.exit("no Python file in " + root)
target, size, parts = int(mb * 1e6), 0, []
while size < target:
    for t in texts:
        parts.append(t)
        size += len(t)
        if size >= target:
            break
open(out, "w", encoding="utf-8").write("".join(parts))
PY
fi
cores=$(nproc)
bytes=$( [ -n "$huge" ] && stat -c %s "$input" || find "$input" -name '*.py' -print0 | du -cb --files0-from=- | tail -1 | cut -f1)
echo "input: $input ($bytes bytes of Python); $cores cores; $runs runs each"
"$bare" "$input"

# 1, 2, then powers of two up to all cores, and all cores
jobs=(1)
for ((j = 2; j < cores; j *= 2)); do jobs+=("$j"); done
[ "$cores" -gt 1 ] && jobs+=("$cores")
# the bare parse twice: with glibc's defaults, and with the malloc tunables a trainlint lint run
# gives itself (analyzer/cli/malloc_tuning.cpp; docs/install.md, "The allocator")
tuned="GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864:glibc.malloc.arena_max=4"
names=(bare-parse bare-parse-tuned) cmds=("$bare $input" "env $tuned $bare $input")
for j in "${jobs[@]}"; do names+=("trainlint-j$j"); cmds+=("$tl --quiet --no-cache -j $j $input"); done
args=()
for i in "${!cmds[@]}"; do args+=(--command-name "${names[$i]}" "${cmds[$i]}"); done
hyperfine -N -i -w 1 --runs "$runs" --export-json "$tmp/h.json" "${args[@]}" >/dev/null

# peak RSS with GNU time (GNU_TIME=path where it is not /usr/bin/time; without it, no RSS column)
gnu_time=${GNU_TIME:-/usr/bin/time}
[ -x "$gnu_time" ] || echo "no GNU time at $gnu_time: peak RSS not measured" >&2
for i in "${!cmds[@]}"; do
  rss=()
  for r in 1 2 3; do
    [ -x "$gnu_time" ] || break
    "$gnu_time" -o "$tmp/t" -f '%M' ${cmds[$i]} >/dev/null 2>&1 || true
    rss+=("$(tail -1 "$tmp/t")")
  done
  printf '%s\n' "${rss[@]}" | sort -n | sed -n 2p > "$tmp/rss.$i"
done
python3 - "$tmp" "${names[@]}" <<'PY'
import json, statistics, sys
tmp, names = sys.argv[1], sys.argv[2:]
res = json.load(open(tmp + "/h.json"))["results"]
base = statistics.median(res[0]["times"])
base_tuned = statistics.median(res[1]["times"])
print(f"{'command':<17} {'median':>9} {'min':>8} {'x bare parse':>13} {'x tuned bare':>13} {'peak RSS':>10}")
for i, r in enumerate(res):
    m = statistics.median(r["times"])
    kb = open(f"{tmp}/rss.{i}").read().split()
    rss = f"{int(kb[0]) / 1024:>8.0f} MB" if kb and kb[0].isdigit() else f"{'n/a':>11}"
    print(f"{names[i]:<17} {m:>8.2f}s {min(r['times']):>7.2f}s {m / base:>12.2f}x {m / base_tuned:>12.2f}x {rss}")
PY
