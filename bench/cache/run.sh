#!/usr/bin/env bash
# The on-disk cache (docs/cache.md; bench/README.md, "Cache"): one hyperfine run, side by side, on a
# copy of a tree (default: Debian's torch package):
#   cold       trainlint --no-cache TREE
#   unchanged  trainlint --cache-dir C TREE          (filled before; answered by the whole-run entry)
#   one edit   the same after appending a comment to one file before each run (--prepare), so that
#              the run entry misses and that file alone is parsed again; the model and the rules
#              run over every file, as they must for findings that cross files
# then the cache's size on disk. Prints each one's median and its ratio to the cold run.
# The copy keeps the tree's folder name: a package's modules are named from it, so a copy under
# another name would resolve its absolute imports (`from torch.utils.data import ...`) to nothing,
# and the link passes would see a program that is not the one users lint.
#
# usage: bench/cache/run.sh [--runs N] [-j N] [--edit REL] [TREE]
#   --edit REL: the file edited (relative to TREE; default utils/data/dataloader.py when present,
#   else the first .py file in sorted order)
# TRAINLINT=path picks the binary (default: build-release/, build/, build-test/, else PATH).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
runs=10 jobs="" edit=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    --edit) edit=$2; shift 2 ;;
    -*) echo "unknown option: $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
tree=${1:-/usr/lib/python3/dist-packages/torch}
[ -d "$tree" ] || { echo "not a folder: $tree" >&2; exit 2; }
tl=${TRAINLINT:-}
for c in "$src/build-release/trainlint" "$src/build/trainlint" "$src/build-test/trainlint"; do
  [ -z "$tl" ] && [ -x "$c" ] && tl=$c
done
[ -n "$tl" ] || tl=$(command -v trainlint || true)
[ -x "$tl" ] || { echo "no trainlint binary: build it or set TRAINLINT" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "hyperfine is missing (scripts/deps.sh installs it)" >&2; exit 2; }
tl=$(realpath "$tl")  # the runs are made from inside the copy, where a relative path names nothing

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
name=$(basename "$(cd "$tree" && pwd)")
qname=$(printf %q "$name")  # as hyperfine's shell reads it
mkdir "$tmp/copy"
cp -r "$tree" "$tmp/copy/$name"
if [ -z "$edit" ]; then
  if [ -f "$tmp/copy/$name/utils/data/dataloader.py" ]; then edit=utils/data/dataloader.py
  else edit=$(cd "$tmp/copy/$name" && find . -name '*.py' | LC_ALL=C sort | head -1 | sed 's|^\./||'); fi
fi
[ -f "$tmp/copy/$name/$edit" ] || { echo "no such file in the tree: $edit" >&2; exit 2; }
files=$(find "$tmp/copy/$name" -name '*.py' | wc -l)
bytes=$(find "$tmp/copy/$name" -name '*.py' -print0 | du -cb --files0-from=- | tail -1 | cut -f1)
echo "tree: $tree ($files .py files, $bytes bytes), edited file: $edit; $(nproc) cores; ${jobs:-all} threads; $runs runs each"

j=${jobs:+-j $jobs}
cd "$tmp/copy"
rc=0
"$tl" --quiet $j --cache-dir "$tmp/cache" "$name" >/dev/null 2>"$tmp/fill.err" || rc=$?
# 1 means findings, as in scripts/setup.sh; more is a run that failed. It must also have written
# its run entry (the folder itself is made when the cache opens, before any analysis).
if [ "$rc" -gt 1 ] || [ -z "$(find "$tmp/cache/runs" -type f 2>/dev/null | head -1)" ]; then
  echo "the first run filled no cache (exit status $rc, $tl):" >&2
  cat "$tmp/fill.err" >&2
  exit 2
fi
json=$tmp/cache.json
hyperfine -i --runs "$runs" --warmup 1 --export-json "$json" \
  --prepare 'true' --command-name cold "$tl --quiet $j --no-cache $qname" \
  --prepare 'true' --command-name unchanged "$tl --quiet $j --cache-dir $tmp/cache $qname" \
  --prepare "echo \"# edit \$(date +%s%N)\" >> $qname/$edit" --command-name one-edit "$tl --quiet $j --cache-dir $tmp/cache $qname"
echo
python3 - "$json" <<'PY'
import json, statistics, sys
res = json.load(open(sys.argv[1]))["results"]
base = statistics.median(res[0]["times"])
print(f"{'run':<10} {'median':>9}  {'/ cold':>7}")
for r in res:
    m = statistics.median(r["times"])
    print(f"{r['command']:<10} {m * 1000:>7.0f}ms  {m / base:>7.3f}")
PY
echo "cache on disk: $(du -sh "$tmp/cache" | cut -f1) ($(find "$tmp/cache/trees" -type f | wc -l) trees, $(find "$tmp/cache/runs" -type f | wc -l) run entries)"
