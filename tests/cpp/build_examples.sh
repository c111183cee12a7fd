#!/usr/bin/env bash
# examples/cpp are real LibTorch programs: configure them once with their own CMakeLists.txt
# against the installed LibTorch (Debian's libtorch-dev), build both, and run each for 2 training
# steps per epoch on synthetic digits (MNIST is not shipped; the device is the CPU when CUDA is
# unavailable). Each must exit 0, train and evaluate twice (2 epochs) and print finite losses;
# train_bad also writes its per-step checkpoint.
#
# usage: build_examples.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$1/examples-cpp
src=$(cd "$2" && pwd)

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
t0=$(now)
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S "$src/examples/cpp" -B "$build_dir" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE= >"$build_dir.configure.log" 2>&1 ||
    { cat "$build_dir.configure.log"; echo "configuring examples/cpp against LibTorch failed (is libtorch-dev installed?)" >&2; exit 1; }
fi
t1=$(now)
TIMEFORMAT='%R s wall, %U s user + %S s system CPU'
time cmake --build "$build_dir" -j "$(nproc 2>/dev/null || echo 2)"
t2=$(now)
echo "configure $(elapsed "$t0" "$t1") s, build $(elapsed "$t1" "$t2") s"

status=0
for program in train_bad train_good; do
  out=$build_dir/$program.out
  rm -f "$build_dir/mnist-checkpoint.pt"
  if ! (cd "$build_dir" && "./$program" 2) >"$out" 2>&1; then
    cat "$out"
    echo "FAILED: $program exited with an error" >&2
    status=1
    continue
  fi
  cat "$out"
  tests=$(grep -c '^Test set: Average loss: [0-9.]* | Accuracy: [0-9.]*$' "$out" || true)
  if [ "$tests" != 2 ]; then
    echo "FAILED: $program evaluated $tests times, expected 2 (2 epochs)" >&2
    status=1
  fi
  if ! grep -q '^Training on \(CPU\|GPU\)\.$' "$out"; then
    echo "FAILED: $program did not say which device it trains on" >&2
    status=1
  fi
  if grep -qiw 'nan\|inf' "$out"; then
    echo "FAILED: $program printed a non-finite loss" >&2
    status=1
  fi
  if [ "$program" = train_bad ] && [ ! -s "$build_dir/mnist-checkpoint.pt" ]; then
    echo "FAILED: train_bad wrote no checkpoint" >&2
    status=1
  fi
done
echo "total $(elapsed "$t0" "$(now)") s"
exit $status
