#!/usr/bin/env bash
# README command 1: install what is missing, build trainlint, and run it on examples/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINLINT_TESTS=OFF -DTRAINLINT_BENCH=OFF >/dev/null
cmake --build build --target trainlint
echo
echo "\$ build/trainlint examples/"
set +e
build/trainlint examples/
rc=$?
set -e
# Exit status 1 means "findings" (examples/train_bad.py is meant to have them); anything else is an error.
[ "$rc" -le 1 ] || exit "$rc"
