#!/usr/bin/env bash
# Every C++ fixture (tests/fixtures/cpp) and example (examples/cpp) is real LibTorch code: each
# file must parse with `clang++-14 -fsyntax-only -std=c++17` against the real headers of Debian's
# libtorch-dev. The flags are those of tests/fixtures/cpp/compile_flags.txt (what clangd and
# Clang tooling read there too), relative -I paths taken from that folder.
#
# torch/torch.h costs about 14 s of CPU per file; a precompiled header of it is built once (and
# kept in BUILD_DIR across runs while the headers, flags and compiler stay the same) and included
# in every file, which brings a file down to about 3 s. The per-file and total times (wall and
# CPU) are printed.
#
# Files that include the CUDA parts of LibTorch (<c10/cuda/...>, data_parallel.h) need the CUDA
# toolkit's headers (cuda.h). Without them those files are reported as not checked and the test
# exits 77 (skipped) once the other files have passed.
#
# usage: syntax_check.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$1
src=$(cd "$2" && pwd)
fixtures=$src/tests/fixtures/cpp
out=$build_dir/cpp-syntax
mkdir -p "$out"

clangxx=$(command -v clang++-14 || true)
[ -n "$clangxx" ] || { echo "clang++-14 not found: install clang-14 (bash scripts/deps.sh --runtime-tests)" >&2; exit 1; }
torch_h=/usr/include/torch/csrc/api/include/torch/torch.h
[ -f "$torch_h" ] || { echo "$torch_h not found: install libtorch-dev (bash scripts/deps.sh --runtime-tests)" >&2; exit 1; }

# The flags of compile_flags.txt, one a line, with relative include paths made absolute.
flags=()
while IFS= read -r f || [ -n "$f" ]; do
  [ -n "$f" ] || continue
  case $f in
    -I/*) flags+=("$f") ;;
    -I*) flags+=("-I$fixtures/${f#-I}") ;;
    -xc++) ;;  # the PCH is built as a header and each file is given as C++ below
    *) flags+=("$f") ;;
  esac
done <"$fixtures/compile_flags.txt"
cuda_include=""
for f in "${flags[@]}"; do
  case $f in -I*) [ -f "${f#-I}/cuda.h" ] && cuda_include=${f#-I} ;; esac
done

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
t_start=$(now)

# The PCH, rebuilt when the compiler, the flags or the LibTorch headers change.
pch=$out/torch.pch
stamp="$("$clangxx" --version | head -1) | ${flags[*]} -fpch-instantiate-templates | $(stat -c %Y "$torch_h" /usr/include/torch/csrc/api/include/torch/version.h | tr '\n' ' ')"
if [ ! -f "$pch" ] || [ "$(cat "$out/torch.pch.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -f "$pch" "$out/torch.pch.stamp"
  TIMEFORMAT='%R s wall, %U s user + %S s system CPU'
  # -fpch-instantiate-templates: the PCH holds the template instantiations its headers need, which
  # otherwise every file would redo (about 8 s of CPU per file instead of 3 here).
  if ! { time "$clangxx" -x c++-header "${flags[@]}" -fpch-instantiate-templates "$torch_h" -o "$pch.tmp" >"$out/torch.pch.log" 2>&1; } 2>"$out/torch.pch.time"; then
    cat "$out/torch.pch.log" >&2
    echo "could not build the PCH of $torch_h" >&2
    exit 1
  fi
  pch_time=$(cat "$out/torch.pch.time")
  mv "$pch.tmp" "$pch"
  echo "$stamp" >"$out/torch.pch.stamp"
  echo "built the PCH of torch/torch.h: $pch_time ($(du -m "$pch" | cut -f1) MB)"
else
  echo "reused the PCH of torch/torch.h ($pch)"
fi
t_pch=$(now)

mapfile -t files < <(cd "$src" && find tests/fixtures/cpp examples/cpp -type f \
  \( -name '*.cpp' -o -name '*.cc' -o -name '*.cxx' -o -name '*.h' -o -name '*.hpp' \) -not -path 'tests/fixtures/cpp/include/*' | sort)
[ "${#files[@]}" -gt 0 ] || { echo "no C++ files found under tests/fixtures/cpp and examples/cpp" >&2; exit 1; }

# One file: parse it, and write "STATUS SECONDS FILE" (and the diagnostics) under $out.
check_one() {
  local rel=$1 log=$out/$(echo "$1" | tr '/' '_').log t0 rc=0
  if [ -z "$cuda_include" ] && grep -Eq '#include <(c10/cuda/|ATen/cuda/|torch/nn/parallel/)' "$src/$rel"; then
    echo "skipped 0 0 $rel" >"$log.status"
    return 0
  fi
  local TIMEFORMAT='%R %U %S' times
  { time "$clangxx" -fsyntax-only -x c++ "${flags[@]}" -Wno-pragma-once-outside-header -include-pch "$pch" "$src/$rel" >"$log" 2>&1 || rc=$?; } 2>"$log.time"
  times=$(awk '{ printf "%.1f %.1f", $1, $2 + $3 }' "$log.time")
  echo "$([ $rc -eq 0 ] && echo ok || echo FAILED) $times $rel" >"$log.status"
}
export -f check_one
export out src cuda_include pch clangxx
export flags_str="${flags[*]}"
rm -f "$out"/*.status
jobs=$(nproc 2>/dev/null || echo 2)
printf '%s\n' "${files[@]}" | xargs -P "$jobs" -I{} bash -c 'flags=($flags_str); check_one "$1"' _ {}
t_end=$(now)

failed=0 skipped=0 total_cpu=0
for rel in "${files[@]}"; do
  log=$out/$(echo "$rel" | tr '/' '_').log
  read -r status wall cpu _ <"$log.status"
  printf '%-8s %6s s wall %6s s CPU  %s\n' "$status" "$wall" "$cpu" "$rel"
  total_cpu=$(awk -v a="$total_cpu" -v b="$cpu" 'BEGIN { printf "%.1f", a + b }')
  case $status in
    FAILED) failed=$((failed + 1)); sed 's/^/    /' "$log" ;;
    skipped) skipped=$((skipped + 1)) ;;
  esac
done
echo "${#files[@]} files: PCH $(elapsed "$t_start" "$t_pch") s, files $(elapsed "$t_pch" "$t_end") s wall ($jobs in parallel, $total_cpu s CPU), total $(elapsed "$t_start" "$t_end") s wall"
if [ "$failed" -gt 0 ]; then
  echo "$failed file(s) do not parse against the LibTorch headers" >&2
  exit 1
fi
if [ "$skipped" -gt 0 ]; then
  echo "$skipped file(s) include LibTorch's CUDA headers and were not checked: no cuda.h in the include paths of compile_flags.txt (the CUDA toolkit's headers)" >&2
  exit 77
fi
