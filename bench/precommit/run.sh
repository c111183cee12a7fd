#!/usr/bin/env bash
# The time trainlint adds to a pre-commit run (bench/README.md, "pre-commit"): in a temporary git
# repository holding a generated training project (bench/precommit/make_project.py) and a copy of
# examples/, a 20-file change is staged, and hyperfine compares
#     pre-commit run --files <the 20 files>
# with the trainlint hook (this repository's .pre-commit-hooks.yaml, language: system) against the
# same run with a hook whose entry is `true` (same types, same files, same repository). The hook
# runs `trainlint --force-exclude <the 20 files>` in the repository's root, so the 20 files are
# analysed with the rest of the project (the git checkout) as context, as on a user's machine;
# the same command alone, and with --no-context, are timed beside them.
#
# usage: bench/precommit/run.sh [--rounds N] [--runs N] [--warmup N] [--files N] [--export FILE.json]
# TRAINLINT=path picks the binary (default: build-release/trainlint, build/trainlint,
# build-test/trainlint, else `trainlint` on PATH). Needs git, pre-commit and hyperfine (scripts/deps.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)

rounds=6
runs=10
warmup=3
nfiles=20
export_json=""
while [ $# -gt 0 ]; do
  case "$1" in
  --rounds) rounds=$2; shift 2 ;;
  --runs) runs=$2; shift 2 ;;
  --warmup) warmup=$2; shift 2 ;;
  --files) nfiles=$2; shift 2 ;;
  --export) export_json=$(realpath -m "$2"); shift 2 ;;
  *) echo "usage: $0 [--rounds N] [--runs N] [--warmup N] [--files N] [--export FILE.json]" >&2; exit 2 ;;
  esac
done

trainlint=${TRAINLINT:-}
if [ -z "$trainlint" ]; then
  for c in "$src/build-release/trainlint" "$src/build/trainlint" "$src/build-test/trainlint"; do
    [ -x "$c" ] && { trainlint=$c; break; }
  done
fi
[ -n "$trainlint" ] || trainlint=$(command -v trainlint || true)
[ -n "$trainlint" ] && [ -x "$trainlint" ] || { echo "no trainlint binary: build it or set TRAINLINT" >&2; exit 2; }
trainlint=$(realpath "$trainlint")
for tool in git pre-commit hyperfine python3; do
  command -v "$tool" >/dev/null || { echo "$tool is required (scripts/deps.sh)" >&2; exit 2; }
done

tmp=$(mktemp -d /tmp/trainlint-bench-precommit-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# isolated git and pre-commit: nothing of the user's configuration is read or written
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_CACHE_HOME="$tmp/home/.cache"
mkdir -p "$HOME"
export GIT_CONFIG_GLOBAL="$tmp/gitconfig" GIT_CONFIG_NOSYSTEM=1
printf '[user]\n\tname = bench\n\temail = bench@trainlint.invalid\n[init]\n\tdefaultBranch = main\n' >"$GIT_CONFIG_GLOBAL"
export PRE_COMMIT_HOME="$tmp/pre-commit-home"
mkdir -p "$tmp/bin"
ln -s "$trainlint" "$tmp/bin/trainlint"
export PATH="$tmp/bin:$PATH"

# the hook repository: this repository's manifest
git init -q "$tmp/hooks"
cp "$src/.pre-commit-hooks.yaml" "$tmp/hooks/"
git -C "$tmp/hooks" add .pre-commit-hooks.yaml
git -C "$tmp/hooks" commit -q -m hooks
rev=$(git -C "$tmp/hooks" rev-parse HEAD)

# the project: generated tasks + examples/, committed; then a change staged
proj="$tmp/project"
mkdir -p "$proj"
python3 "$here/make_project.py" "$proj"
cp -r "$src/examples" "$proj/"
cat >"$proj/trainlint.yaml" <<EOF
repos:
  - repo: $tmp/hooks
    rev: $rev
    hooks:
      - id: trainlint
EOF
cat >"$proj/true.yaml" <<'EOF'
repos:
  - repo: local
    hooks:
      - id: noop
        name: "true"
        entry: "true"
        language: system
        types_or: [python, jupyter]
        require_serial: true
EOF
cd "$proj"
git init -q .
git add -A
git commit -q -m "training project"
mapfile -t files < <(python3 "$here/make_project.py" "$proj" --change "$nfiles")
git add -- "${files[@]}"
[ "$(git diff --cached --name-only | wc -l)" -eq "$nfiles" ] || { echo "the change is not $nfiles files" >&2; exit 1; }
python_files=$(git ls-files '*.py' | wc -l)

pre-commit install-hooks -c trainlint.yaml >/dev/null
pre-commit install-hooks -c true.yaml >/dev/null
echo "trainlint: $trainlint ($("$trainlint" --version 2>/dev/null || echo unknown version))"
echo "project: $python_files Python files, $(git ls-files -z '*.py' | xargs -0 cat | wc -l) lines; change: $nfiles staged files"
echo "---- one run with the trainlint hook ----"
set +e
pre-commit run -c trainlint.yaml --files "${files[@]}"
hook_rc=$?
set -e
echo "(pre-commit exit $hook_rc)"
echo

# Rounds of hyperfine, the order of the two hooks swapped every round, so that a change in the
# machine's load during the run hits both sides; the summary pairs them round by round.
cmd_tl="pre-commit run -c trainlint.yaml --files ${files[*]}"
cmd_true="pre-commit run -c true.yaml --files ${files[*]}"
jsons=()
for ((r = 1; r <= rounds; r++)); do
  json="$tmp/round-$r.json"
  jsons+=("$json")
  if ((r % 2)); then
    order=(-n "pre-commit + trainlint" "$cmd_tl" -n "pre-commit + true" "$cmd_true")
  else
    order=(-n "pre-commit + true" "$cmd_true" -n "pre-commit + trainlint" "$cmd_tl")
  fi
  echo "---- round $r of $rounds ----"
  hyperfine -N -i --warmup "$warmup" --runs "$runs" --export-json "$json" "${order[@]}" \
    -n "trainlint alone" "trainlint --force-exclude ${files[*]}" \
    -n "trainlint alone, --no-context" "trainlint --force-exclude --no-context ${files[*]}"
done
[ -z "$export_json" ] || python3 -c 'import json, sys; json.dump([json.load(open(f)) for f in sys.argv[2:]], open(sys.argv[1], "w"), indent=1)' \
  "$export_json" "${jsons[@]}"

python3 - "${jsons[@]}" <<'EOF'
import json, statistics as st, sys
rounds = [{x["command"]: x for x in json.load(open(f))["results"]} for f in sys.argv[1:]]
names = ("pre-commit + trainlint", "pre-commit + true", "trainlint alone", "trainlint alone, --no-context")
ms = lambda s: 1000 * s
print()
print(f"all runs of {len(rounds)} rounds:")
print(f"{'':30} {'median':>10} {'mean':>10} {'min':>10} {'CPU (user+sys), mean':>22}")
agg = {}
for n in names:
    times = [t for r in rounds for t in r[n]["times"]]
    cpu = st.mean(r[n]["user"] + r[n]["system"] for r in rounds)
    agg[n] = (st.median(times), st.mean(times), min(times), cpu)
    print(f"{n:30} {ms(agg[n][0]):7.1f} ms {ms(agg[n][1]):7.1f} ms {ms(agg[n][2]):7.1f} ms {ms(cpu):19.1f} ms")
tl, tr = agg[names[0]], agg[names[1]]
diffs = [ms(r[names[0]]["median"] - r[names[1]]["median"]) for r in rounds]
ratios = [r[names[0]]["median"] / r[names[1]]["median"] for r in rounds]
print(f"trainlint adds {ms(tl[0] - tr[0]):.1f} ms to the median run ({tl[0] / tr[0]:.3f}x), "
      f"{ms(tl[2] - tr[2]):.1f} ms to the fastest ({tl[2] / tr[2]:.3f}x), {ms(tl[3] - tr[3]):.1f} ms of CPU time")
print(f"paired by round (median of each round): {st.median(diffs):+.1f} ms, {st.median(ratios):.3f}x "
      f"(rounds {min(diffs):+.1f}..{max(diffs):+.1f} ms, {min(ratios):.3f}..{max(ratios):.3f}x)")
c, nc = agg[names[2]], agg[names[3]]
print(f"trainlint alone with the project as context / --no-context: {c[0] / nc[0]:.2f}x at the median "
      f"({ms(c[0] - nc[0]):+.1f} ms), {c[2] / nc[2]:.2f}x at the fastest, CPU {c[3] / nc[3]:.2f}x ({ms(c[3] - nc[3]):+.1f} ms)")
EOF
