#!/usr/bin/env bash
# The repository's .pre-commit-hooks.yaml, driven by the real `pre-commit` (Debian's package) the
# way a user's project would use it: a hook repository holding the manifest, a project whose
# .pre-commit-config.yaml points at it by path and rev, `pre-commit install`, then `git commit`:
#   - a commit adding a per-step gc.collect() is blocked, and the TL101 finding is printed;
#   - the fixed commit passes;
#   - a commit with no Python file staged passes (the hook is skipped, not run on nothing).
# Offline: pre-commit clones the local hook repository into PRE_COMMIT_HOME. Nothing outside a
# temporary folder is touched (git's global and system configuration are not read or written).
#
# usage: precommit_test.sh TRAINLINT_BINARY SOURCE_DIR
set -euo pipefail
trainlint=$(realpath "$1")
src=$(realpath "$2")

if ! command -v pre-commit >/dev/null 2>&1; then
  echo "FAIL: pre-commit is not installed (Debian package pre-commit; scripts/deps.sh installs it)" >&2
  exit 1
fi

tmp=$(mktemp -d /tmp/trainlint-precommit-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# An isolated git and pre-commit: an empty global config with only an identity, no system config.
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_CACHE_HOME="$tmp/home/.cache"
mkdir -p "$HOME"
export GIT_CONFIG_GLOBAL="$tmp/gitconfig" GIT_CONFIG_NOSYSTEM=1
printf '[user]\n\tname = trainlint test\n\temail = test@trainlint.invalid\n[init]\n\tdefaultBranch = main\n' >"$GIT_CONFIG_GLOBAL"
export PRE_COMMIT_HOME="$tmp/pre-commit-home"
unset PRE_COMMIT_COLOR GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
# the trainlint under test comes first on PATH, alone in its folder
mkdir -p "$tmp/bin"
ln -s "$trainlint" "$tmp/bin/trainlint"
export PATH="$tmp/bin:$PATH"

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# ---- the hook repository: this repository's manifest, committed ----------------------------
hooks="$tmp/hooks"
git init -q "$hooks"
cp "$src/.pre-commit-hooks.yaml" "$hooks/"
git -C "$hooks" add .pre-commit-hooks.yaml
git -C "$hooks" commit -q -m "trainlint hook"
rev=$(git -C "$hooks" rev-parse HEAD)

# ---- the user's project ----------------------------------------------------------------------
proj="$tmp/project"
git init -q "$proj"
cd "$proj"
cat >.pre-commit-config.yaml <<EOF
repos:
  - repo: $hooks
    rev: $rev
    hooks:
      - id: trainlint
EOF
printf '# image classifier\n\nTrain with `python3 train.py --epochs 1`.\n' >README.md
git add .pre-commit-config.yaml README.md
git commit -q -m "project skeleton"
pre-commit install >/dev/null
commits() { git rev-list --count HEAD; }

# 1. a training script whose step loop calls gc.collect(): blocked, with the finding printed
sed -e 's/^import argparse$/import argparse\nimport gc/' \
    -e 's/^\( *\)running_loss += loss.detach()$/&\n\1gc.collect()/' \
    "$src/examples/train_good.py" >train.py
gc_line=$(grep -n '^ *gc.collect()$' train.py | cut -d: -f1)
[ -n "$gc_line" ] || { echo "FAIL: could not insert gc.collect() into the step loop" >&2; exit 1; }
git add train.py
before=$(commits)
set +e
out=$(git commit -m "train a classifier" 2>&1)
rc=$?
set -e
echo "---- commit with a per-step gc.collect() (exit $rc) ----"
echo "$out"
[ "$rc" -ne 0 ] || fail "the commit with a per-step gc.collect() was not blocked"
[ "$(commits)" = "$before" ] || fail "a commit was made although the hook failed"
grep -q "^trainlint\.*Failed" <<<"$out" || fail "pre-commit did not report the trainlint hook as failed"
grep -q "train.py:$gc_line:[0-9]*: warning: .*\[TL101 gc-collect-per-step\]" <<<"$out" ||
  fail "the TL101 finding at train.py:$gc_line was not printed"

# 2. the same script without it: passes
cp "$src/examples/train_good.py" train.py
git add train.py
set +e
out=$(git commit -m "train a classifier" 2>&1)
rc=$?
set -e
echo "---- clean commit (exit $rc) ----"
echo "$out"
[ "$rc" -eq 0 ] || fail "the clean commit was blocked"
[ "$(commits)" = "$((before + 1))" ] || fail "the clean commit was not made"
grep -q "^trainlint\.*Passed" <<<"$out" || fail "pre-commit did not run the trainlint hook on train.py"

# 3. only a README change staged: the hook is skipped and the commit passes
printf '\nThe training script is checked by trainlint before every commit.\n' >>README.md
git add README.md
set +e
out=$(git commit -m "README: mention the hook" 2>&1)
rc=$?
set -e
echo "---- commit without Python files (exit $rc) ----"
echo "$out"
[ "$rc" -eq 0 ] || fail "a commit without Python files was blocked"
[ "$(commits)" = "$((before + 2))" ] || fail "the README commit was not made"
grep -q "^trainlint\.*(no files to check)Skipped" <<<"$out" || fail "the trainlint hook was not skipped for a README-only commit"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "OK: pre-commit hook blocks the per-step gc.collect(), passes the clean and the README-only commits"
