#!/usr/bin/env bash
# The cost of project context (bench/README.md, "Project context cost"). A file given alone is
# analysed with the rest of its project (the nearest folder above it with pyproject.toml,
# .trainlint.toml, setup.py or .git) as context; --no-context analyses only the files given.
# hyperfine times, side by side in one invocation per round:
#     trainlint -q F                  each FILE, with its project as context
#     trainlint -q --no-context F     each FILE alone
#     trainlint -q F1..F20            a 20-file change, with context (what the pre-commit hook runs)
#     trainlint -q --no-context F1..F20
#     trainlint -q .                  the whole project
# in rounds whose command order is reversed every other round (hyperfine runs each command's
# runs back to back and cannot interleave them), so that load changes on a shared machine hit
# every command. The summary takes medians over all runs of all rounds, prints the ratios, and
# the median of the per-round ratios beside them; then TRAINLINT_TIMING=1 phase times (medians of
# a few runs) show what share of a run is reading and parsing the context.
#
# usage: bench/context/run.sh [--rounds N] [--runs N] [--warmup N] [--files N] [--jobs N]
#                             [--export FILE.json] PROJECT_ROOT [FILE...]
# FILEs are relative to PROJECT_ROOT (or absolute, inside it); without any, the first Python file
# of the project is used. The 20-file change is the FILEs, then project files spread evenly over
# the sorted list. TRAINLINT=path picks the binary (default: build-release/trainlint, build/,
# build-test/, else `trainlint` on PATH). Needs hyperfine and python3 (scripts/deps.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)

rounds=2
runs=15
warmup=3
nfiles=20
jobs=""
export_json=""
usage="usage: $0 [--rounds N] [--runs N] [--warmup N] [--files N] [--jobs N] [--export FILE.json] PROJECT_ROOT [FILE...]"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
  --rounds) rounds=$2; shift 2 ;;
  --runs) runs=$2; shift 2 ;;
  --warmup) warmup=$2; shift 2 ;;
  --files) nfiles=$2; shift 2 ;;
  --jobs) jobs=$2; shift 2 ;;
  --export) export_json=$(realpath -m "$2"); shift 2 ;;
  -h | --help) echo "$usage"; exit 0 ;;
  -*) echo "$usage" >&2; exit 2 ;;
  *) args+=("$1"); shift ;;
  esac
done
[ ${#args[@]} -ge 1 ] || { echo "$usage" >&2; exit 2; }
root=$(realpath "${args[0]}")
[ -d "$root" ] || { echo "$root is not a folder" >&2; exit 2; }

trainlint=${TRAINLINT:-}
if [ -z "$trainlint" ]; then
  for c in "$src/build-release/trainlint" "$src/build/trainlint" "$src/build-test/trainlint"; do
    [ -x "$c" ] && { trainlint=$c; break; }
  done
fi
[ -n "$trainlint" ] || trainlint=$(command -v trainlint || true)
[ -n "$trainlint" ] && [ -x "$trainlint" ] || { echo "no trainlint binary: build it or set TRAINLINT" >&2; exit 2; }
trainlint=$(realpath "$trainlint")
for tool in hyperfine python3; do
  command -v "$tool" >/dev/null || { echo "$tool is required (scripts/deps.sh)" >&2; exit 2; }
done
tl=("$trainlint" -q --no-cache)  # the analysis itself: bench/cache measures the cache
[ -z "$jobs" ] || tl+=(-j "$jobs")

cd "$root"
# The project's files, for the 20-file change and the size: git's list of tracked and untracked,
# not ignored files in a checkout (else every .py and .ipynb outside hidden folders); the count
# trainlint lints given the root is printed beside it (its excludes may leave some out).
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t project < <(git -C "$root" ls-files -co --exclude-standard -- '*.py' '*.ipynb' | LC_ALL=C sort)
else
  mapfile -t project < <(find . -type f \( -name '*.py' -o -name '*.ipynb' \) -not -path '*/.*' -printf '%P\n' | LC_ALL=C sort)
fi
[ ${#project[@]} -gt 0 ] || { echo "no Python files under $root" >&2; exit 2; }

singles=()
for f in "${args[@]:1}"; do
  rel=$(realpath -m --relative-to="$root" "$f")
  [ -f "$rel" ] || rel=$(realpath -m --relative-to="$root" "$OLDPWD/$f")
  [ -f "$rel" ] || { echo "$f: no such file under $root" >&2; exit 2; }
  singles+=("$rel")
done
[ ${#singles[@]} -gt 0 ] || singles=("${project[0]}")

# the 20-file change: the FILEs, then every k-th file of the sorted project list
mapfile -t change < <(python3 - "$nfiles" "${#singles[@]}" "${singles[@]}" "${project[@]}" <<'EOF'
import sys
n, k = int(sys.argv[1]), int(sys.argv[2])
singles, project = sys.argv[3:3 + k], sys.argv[3 + k:]
chosen = list(dict.fromkeys(singles))[:n]
rest = [p for p in project if p not in chosen]
need = min(n - len(chosen), len(rest))
if need > 0:
    step = len(rest) / need
    chosen += [rest[int(i * step)] for i in range(need)]
print("\n".join(chosen))
EOF
)

whole_files=$("${tl[@]}" --exit-zero --format json . | python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["files"])')
bytes=$(printf '%s\0' "${project[@]}" | xargs -0 cat | wc -c)
echo "trainlint: $trainlint ($("$trainlint" --version 2>/dev/null || echo unknown version))${jobs:+, -j $jobs}"
echo "project: $root"
echo "  ${#project[@]} Python files and notebooks (trainlint lints $whole_files of them given the root), $(python3 -c "print(f'{$bytes / 1e6:.2f}')") MB"
echo "  single files: ${singles[*]}"
echo "  change: ${#change[@]} files"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

names=()
cmds=()
for f in "${singles[@]}"; do
  names+=("context $f" "no-context $f")
  cmds+=("$(printf '%q ' "${tl[@]}" "$f")" "$(printf '%q ' "${tl[@]}" --no-context "$f")")
done
names+=("context ${#change[@]} files" "no-context ${#change[@]} files" "whole project")
cmds+=("$(printf '%q ' "${tl[@]}" "${change[@]}")" "$(printf '%q ' "${tl[@]}" --no-context "${change[@]}")"
  "$(printf '%q ' "${tl[@]}" .)")

tmp=$(mktemp -d /tmp/trainlint-bench-context-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
jsons=()
for ((r = 1; r <= rounds; r++)); do
  json="$tmp/round-$r.json"
  jsons+=("$json")
  order=()
  if ((r % 2)); then
    for ((i = 0; i < ${#names[@]}; i++)); do order+=(-n "${names[i]}" "${cmds[i]}"); done
  else
    for ((i = ${#names[@]} - 1; i >= 0; i--)); do order+=(-n "${names[i]}" "${cmds[i]}"); done
  fi
  echo "---- round $r of $rounds ----"
  # -N: no shell; -i: trainlint exits 1 when it has findings
  hyperfine -N -i --style basic --warmup "$warmup" --runs "$runs" --export-json "$json" "${order[@]}" \
    >"$tmp/round-$r.txt" 2>&1 || { cat "$tmp/round-$r.txt" >&2; exit 1; }
  grep -E '^(Benchmark|  Time|  Range)' "$tmp/round-$r.txt" || true
done
[ -z "$export_json" ] || python3 -c 'import json, sys; json.dump([json.load(open(f)) for f in sys.argv[2:]], open(sys.argv[1], "w"), indent=1)' \
  "$export_json" "${jsons[@]}"

# phase times: TRAINLINT_TIMING=1, 7 runs each, medians per phase
timing() {
  local label=$1
  shift
  for i in 1 2 3 4 5 6 7; do
    echo "@run $i"
    TRAINLINT_TIMING=1 "$@" 2>&1 >/dev/null | grep '^trainlint:' || true
  done >"$tmp/timing-$label.txt"
}
timing single "${tl[@]}" "${singles[0]}"
timing single-nc "${tl[@]}" --no-context "${singles[0]}"
timing change "${tl[@]}" "${change[@]}"
timing whole "${tl[@]}" .

python3 - "$tmp" "${#singles[@]}" "${#change[@]}" "${names[@]}" -- "${jsons[@]}" <<'EOF'
import json, re, statistics as st, sys
tmp, k, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rest = sys.argv[4:]
sep = rest.index("--")
names, files = rest[:sep], rest[sep + 1:]
rounds = [{x["command"]: x for x in json.load(open(f))["results"]} for f in files]
ms = lambda s: 1000 * s
med = {m: st.median(t for r in rounds for t in r[m]["times"]) for m in names}
lo = {m: min(t for r in rounds for t in r[m]["times"]) for m in names}
cpu = {m: st.mean(r[m]["user"] + r[m]["system"] for r in rounds) for m in names}
print(f"\nall runs of {len(rounds)} rounds ({sum(len(r[names[0]]['times']) for r in rounds)} runs a command):")
print(f"{'':44} {'median':>10} {'min':>10} {'CPU (user+sys)':>16}")
for m in names:
    print(f"{m:44} {ms(med[m]):7.1f} ms {ms(lo[m]):7.1f} ms {ms(cpu[m]):13.1f} ms")

def ratio(a, b):
    per_round = [r[a]["median"] / r[b]["median"] for r in rounds]
    return (f"{med[a] / med[b]:6.2f}x (rounds {min(per_round):.2f}..{max(per_round):.2f}), "
            f"{ms(med[a] - med[b]):+.1f} ms; CPU {cpu[a] / cpu[b]:.2f}x")

print("\nratios of medians (per-round ratios of medians in brackets):")
whole = "whole project"
pairs = []
for i in range(k):
    f = names[2 * i][len("context "):]
    pairs.append((f, names[2 * i], names[2 * i + 1]))
pairs.append((f"{n} files", f"context {n} files", f"no-context {n} files"))
for label, c, nc in pairs:
    print(f"  {label}")
    print(f"    context / no-context      {ratio(c, nc)}")
    print(f"    context / whole project   {ratio(c, whole)}")

def phases(label):
    runs, cur = [], None
    for line in open(f"{tmp}/timing-{label}.txt"):
        if line.startswith("@run"):
            cur = {}
            runs.append(cur)
            continue
        m = re.match(r"trainlint: (.*?)\s+([\d.]+) ms$", line.rstrip())
        if m:
            cur[m.group(1)] = float(m.group(2))
        m = re.match(r"trainlint:\s+\(summed over threads: parse ([\d.]+) ms, collect ([\d.]+) ms\)", line)
        if m:
            cur["parse (thread sum)"] = float(m.group(1))
    keys = [key for key in runs[0]]
    return {key: st.median(r.get(key, 0.0) for r in runs) for key in keys}

print("\nTRAINLINT_TIMING=1 phase times, medians of 7 runs (ms); share = phase / total:")
cols = [("single", f"{names[0]}"), ("single-nc", f"{names[1]}"), ("change", f"context {n} files"), ("whole", whole)]
tabs = {label: phases(label) for label, _ in cols}
keys = list(dict.fromkeys(key for label, _ in cols for key in tabs[label]))
print(f"{'phase':28}" + "".join(f"{title[:24]:>26}" for _, title in cols))
for key in keys:
    row = f"{key:28}"
    for label, _ in cols:
        v = tabs[label].get(key)
        tot = tabs[label].get("total") or 1
        row += f"{'':>26}" if v is None else f"{v:15.1f} ({100 * v / tot:3.0f} %)"
    print(row)
front = lambda t: t.get("discovery", 0) + t.get("read", 0) + t.get("parse + collect", 0)
for label, title in cols:
    t = tabs[label]
    print(f"  {title}: discovery + read + parse + collect = {front(t):.1f} of {t.get('total', 0):.1f} ms "
          f"({100 * front(t) / (t.get('total') or 1):.0f} %)")
c, nc = tabs["single"], tabs["single-nc"]
added = c.get("total", 0) - nc.get("total", 0)
if added > 0:
    print(f"  context adds {added:.1f} ms to {names[0][len('context '):]}; of that, discovery + read + parse + collect "
          f"{front(c) - front(nc):.1f} ms ({100 * (front(c) - front(nc)) / added:.0f} %)")
EOF
