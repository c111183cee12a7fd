#!/usr/bin/env bash
# Builds trainlint and libtrainlint_shim for a GPU machine that has none of the build's Debian
# packages (the `device` machines: CUDA, PyTorch and CMake, no package registry): libstdc++ and
# libgcc linked in statically (tree-sitter always is), only glibc (>= 2.36) left to the machine. The result,
# build-gpu-bundle/ (ignored by git), is what tests/gpu/run.sh uses when it finds it; carry it with
# the working tree (the device tool's `carry: ["build-gpu-bundle"]`).
# It also builds the bare parse (bench/bare/bare_parse.c), so that bench/whole/run.sh can measure
# the thread scaling on the device's cores (TRAINLINT=build-gpu-bundle/trainlint
# BARE=build-gpu-bundle/bench/trainlint_bare_parse).
#   usage: bash tests/gpu/bundle.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/deps.sh
cmake -S . -B build-gpu-bundle -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINLINT_PORTABLE=ON \
  -DTRAINLINT_TESTS=OFF -DTRAINLINT_BENCH=ON >/dev/null
cmake --build build-gpu-bundle -j "$(nproc 2>/dev/null || echo 2)" --target trainlint trainlint_shim trainlint_bare_parse
for f in build-gpu-bundle/trainlint build-gpu-bundle/libtrainlint_shim.so build-gpu-bundle/bench/trainlint_bare_parse; do
  extra=$(ldd "$f" | grep -v -E 'linux-vdso|libc\.so|libm\.so|ld-linux' || true)
  if [ -n "$extra" ]; then
    echo "bundle.sh: $f still needs: $extra" >&2
    exit 1
  fi
done
glibc=$(objdump -T build-gpu-bundle/trainlint build-gpu-bundle/libtrainlint_shim.so | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
echo "build-gpu-bundle: trainlint and libtrainlint_shim.so, needing only libc ($glibc or newer)"
