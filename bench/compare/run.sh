#!/usr/bin/env bash
# trainlint beside the tools users would otherwise run on the same tree (bench/README.md,
# "Beside other tools"), in one hyperfine run: `trainlint` (all cores, its default), `flake8`
# and `pylint --recursive=y --jobs=0` (Debian's packages) and TorchFix (`python3 -m torchfix`, from a
# checkout given with --torchfix DIR, run by a Python that has libcst: --torchfix-python, default
# `python3`). Each tool runs with its defaults on the whole tree; exit codes are ignored (they
# report findings). Prints hyperfine's table and each tool's time over trainlint's.
#
# usage: bench/compare/run.sh [--runs N] [--torchfix DIR] [--torchfix-python PY] [--skip TOOL]... [--export FILE.json] TREE
# (--skip flake8 / pylint leaves a tool out: pylint alone takes minutes a run)
# TRAINLINT=path picks the binary (default: build-release/trainlint, build/, build-test/, else
# `trainlint` on PATH). A tool that is not installed is left out, with a line saying so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)

runs=2
torchfix=""
torchfix_py=python3
export_json=""
skip=" "
while [ $# -gt 1 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --torchfix) torchfix=$2; shift 2 ;;
    --torchfix-python) torchfix_py=$2; shift 2 ;;
    --export) export_json=$2; shift 2 ;;
    --skip) skip="$skip$2 "; shift 2 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
tree=${1:?usage: bench/compare/run.sh [options] TREE}
[ -d "$tree" ] || { echo "not a folder: $tree" >&2; exit 2; }

tl=${TRAINLINT:-}
if [ -z "$tl" ]; then
  for c in "$src/build-release/trainlint" "$src/build/trainlint" "$src/build-test/trainlint"; do
    [ -x "$c" ] && { tl=$c; break; }
  done
  [ -n "$tl" ] || tl=$(command -v trainlint || true)
fi
[ -x "$tl" ] || { echo "no trainlint binary: build it or set TRAINLINT" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "hyperfine is missing (scripts/deps.sh installs it)" >&2; exit 2; }

files=$(find "$tree" -name '*.py' | wc -l)
bytes=$(find "$tree" -name '*.py' -print0 | du -cb --files0-from=- | tail -1 | cut -f1)
echo "tree: $tree ($files .py files, $bytes bytes); $(nproc) cores; $runs runs each"

# trainlint twice: a cold run (--no-cache), and a run answered from its cache (filled just before)
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
"$tl" --quiet --cache-dir "$cache" "$tree" >/dev/null 2>&1 || true
names=(trainlint trainlint-cached) cmds=("$tl --quiet --no-cache $tree" "$tl --quiet --cache-dir $cache $tree")
if [[ "$skip" == *" flake8 "* ]]; then echo "flake8: skipped (--skip)"
elif command -v flake8 >/dev/null; then names+=(flake8); cmds+=("flake8 $tree"); else echo "flake8: not installed, left out"; fi
if [[ "$skip" == *" pylint "* ]]; then echo "pylint: skipped (--skip)"
elif command -v pylint >/dev/null; then names+=(pylint); cmds+=("pylint --recursive=y --jobs=0 $tree"); else echo "pylint: not installed, left out"; fi
if [ -n "$torchfix" ]; then
  if PYTHONPATH=$torchfix "$torchfix_py" -c 'import libcst, torchfix' 2>/dev/null; then
    names+=(torchfix); cmds+=("env PYTHONPATH=$torchfix $torchfix_py -m torchfix $tree")
  else
    echo "torchfix: $torchfix_py cannot import libcst and torchfix from $torchfix, left out"
  fi
fi

json=${export_json:-$(mktemp)}
args=()
for i in "${!cmds[@]}"; do args+=(--command-name "${names[$i]}" "${cmds[$i]}"); done
hyperfine -N -i --runs "$runs" --export-json "$json" "${args[@]}"
python3 - "$json" <<'PY'
import json, statistics, sys
res = json.load(open(sys.argv[1]))["results"]
base = statistics.median(res[0]["times"])
print(f"\n{'tool':<10} {'median':>10}  {'x trainlint':>12}")
for r in res:
    m = statistics.median(r["times"])
    print(f"{r['command']:<10} {m:>9.2f}s  {m / base:>11.1f}x")
PY
[ -n "$export_json" ] || rm -f "$json"
