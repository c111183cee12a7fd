#!/usr/bin/env bash
# Per-file time of the two C++ paths on examples/cpp/train_bad.cpp (one LibTorch program, alone in a
# folder),
# whole process, side by side in one hyperfine run (docs/cpp.md, README's performance table):
#   fast            --no-clang --no-cache: tree-sitter only
#   typed, cold     --clang with an empty cache folder: the precompiled header of <torch/torch.h>
#                   is built first (once per compile command, kept in <cache>/clang/)
#   typed, warm     --clang, the precompiled header kept, the run cache emptied before each run
#   typed, cached   --clang, nothing changed since the last run: the whole-run cache answers
#   usage: bash bench/cpp_paths.sh [BUILD_DIR]      (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(cd "${1:-build}" && pwd)/trainlint
cold=$(mktemp -d) warm=$(mktemp -d) project=$(mktemp -d)
trap 'rm -rf "$cold" "$warm" "$project"' EXIT
# a project of its own: in this repository the file's project would be all of trainlint's sources
cp examples/cpp/train_bad.cpp "$project/"
cd "$project"
file=train_bad.cpp
"$bin" --isolated --clang --cache-dir "$warm" "$file" >/dev/null || true  # the header, once
# one --prepare per command, in their order (a single one would apply to all three)
hyperfine --style basic -i --warmup 1 --runs 5 \
  --prepare true --prepare "find $warm -mindepth 1 -maxdepth 1 ! -name clang -exec rm -rf {} +" --prepare true \
  -n fast "$bin --isolated --no-clang --no-cache $file" \
  -n "typed, warm" "$bin --isolated --clang --cache-dir $warm $file" \
  -n "typed, cached" "$bin --isolated --clang --cache-dir $warm $file"
hyperfine --style basic -i --runs 3 \
  -n "typed, cold" --prepare "rm -rf $cold/*" "$bin --isolated --clang --cache-dir $cold $file"
