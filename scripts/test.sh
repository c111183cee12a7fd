#!/usr/bin/env bash
# README command 2 (and .ci/run): install what is missing, build everything, run every test; then
# the same tests built with AddressSanitizer and UndefinedBehaviorSanitizer (the `asan` preset,
# docs/hardening.md). TRAINLINT_NO_SANITIZED_TESTS=1 skips the second pass (a quicker local run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh --runtime-tests
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINLINT_TESTS=ON -DTRAINLINT_BENCH=ON >/dev/null
cmake --build build-test -j "$jobs"
ctest --test-dir build-test -j "$jobs" --output-on-failure
if [ -z "${TRAINLINT_NO_SANITIZED_TESTS:-}" ]; then
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
  ctest --preset asan -j "$jobs"
fi
