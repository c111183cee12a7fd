#!/usr/bin/env bash
# What a user gets from `cmake --install` and from the .deb of `cpack -G DEB`:
#   install  the tree installed under a prefix and then moved elsewhere (nothing of the build or
#            source tree reachable from it): lint, `explain`, and `trainlint run` with the
#            installed shim and bootstrap;
#   deb      the package's control fields and file list, unpacked with `dpkg -x` into a scratch
#            root: lint and `explain` from there, and the shim and bootstrap found.
# Every run happens in a scratch folder holding copies of the inputs.
#
# usage: install_test.sh install|deb BUILD_DIR SOURCE_DIR VERSION
set -euo pipefail
mode=$1
build=$(realpath "$2")
src=$(realpath "$3")
version=$4

tmp=$(mktemp -d /tmp/trainlint-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
unset TRAINLINT_SHIM_PATH PYTHONPATH

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# The inputs, copied: the examples, and a program that says which bootstrap and shim it got.
work="$tmp/work"
mkdir -p "$work"
cp -r "$src/examples" "$work/"
cat >"$work/where.py" <<'EOF'
import os
import sys

boot = sys.modules.get("trainlint_boot")
print("boot", os.path.realpath(boot.__file__) if boot else "none")
print("shim", os.environ.get("TRAINLINT_SHIM") or "none")
EOF

# Runs `$1 ARGS...` in $work; sets rc, out and err.
run_in_work() {
  local bin=$1
  shift
  set +e
  (cd "$work" && "$bin" "$@") >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  set -e
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
}

# Lint, explain and the locations of the shim and bootstrap, for the installed binary under $1.
check_installed() {
  local root=$1 libdir=$2 what=$3
  local bin="$root/bin/trainlint"
  [ -x "$bin" ] || { fail "$what: no bin/trainlint"; return; }

  # lint: the same findings as the build tree's binary, exit 1
  run_in_work "$build/trainlint" examples/
  local want_rc=$rc want_out=$out
  run_in_work "$bin" examples/
  [ "$rc" -eq 1 ] || fail "$what: \`trainlint examples/\` exited $rc, not 1: $err"
  [ "$rc" -eq "$want_rc" ] && [ "$out" = "$want_out" ] || fail "$what: lint output differs from the build tree's"
  local gc_line
  gc_line=$(grep -n 'gc.collect()  # TL101' "$work/examples/train_bad.py" | cut -d: -f1)
  grep -q "^examples/train_bad.py:$gc_line:[0-9]*: warning: .*\[TL101 gc-collect-per-step\]" <<<"$out" ||
    fail "$what: the TL101 finding at examples/train_bad.py:$gc_line is missing"
  grep -q "^examples/train_good.py" <<<"$out" && fail "$what: a finding in train_good.py"

  # explain
  run_in_work "$bin" explain TL101
  [ "$rc" -eq 0 ] || fail "$what: \`trainlint explain TL101\` exited $rc: $err"
  grep -q "^# TL101 gc-collect-per-step" <<<"$out" || fail "$what: \`explain TL101\` did not print the rule's doc"
  run_in_work "$bin" --help
  [ "$rc" -eq 0 ] && grep -q -- "--select" <<<"$out" || fail "$what: --help"

  # `trainlint run`: the installed bootstrap package and shim, not an embedded copy in /tmp
  run_in_work "$bin" run --output "$tmp/where-report.txt" -- /usr/bin/python3 where.py
  [ "$rc" -eq 0 ] || fail "$what: \`trainlint run -- python3 where.py\` exited $rc: $err"
  local boot shim
  boot=$(sed -n 's/^boot //p' <<<"$out")
  shim=$(sed -n 's/^shim //p' <<<"$out")
  [ "$boot" = "$(realpath "$root")/share/trainlint/trainlint_boot/__init__.py" ] ||
    fail "$what: the program got the bootstrap from $boot, not from the install"
  [ "$shim" = "$(realpath "$root")/$libdir/trainlint/libtrainlint_shim.so" ] ||
    fail "$what: the program got the shim $shim, not the installed one"
  grep -q "host-only" "$tmp/where-report.txt" && fail "$what: the report says host-only: $(cat "$tmp/where-report.txt")"

  # the typed C++ path: the installed module, loaded by the installed binary (a file without
  # LibTorch, so that Clang parses it in a moment and builds no precompiled header)
  if [ -f "$build/trainlint-clang.so" ]; then
    printf 'int main() { return 0; }\n' >"$work/hello.cpp"
    TRAINLINT_TIMING=1 run_in_work "$bin" --clang --no-cache hello.cpp
    [ "$rc" -eq 0 ] || fail "$what: \`trainlint --clang hello.cpp\` exited $rc: $err"
    grep -q "analysed by the fast path" <<<"$err" && fail "$what: the typed path's module was not loaded: $err"
    grep -q "C++ typed path (--clang): 1 files parsed by Clang" <<<"$err" ||
      fail "$what: \`trainlint --clang hello.cpp\` did not take the typed path: $err"
    rm -f "$work/hello.cpp"
  fi
  return 0
}

# The file list of an install below $1 (relative paths, sorted).
files_below() { (cd "$1" && find . -type f -o -type l | sed 's|^\./||' | sort); }

check_file_list() {
  local list=$1 libdir=$2 what=$3
  # every module of the bootstrap package (it is split by concern: a missing one breaks `import`)
  local boot_modules
  boot_modules=$(cd "$src/shim/python/trainlint_boot" && ls -- *.py | sed 's|^|share/trainlint/trainlint_boot/|')
  [ "$(wc -l <<<"$boot_modules")" -ge 3 ] || fail "$what: the source tree's bootstrap has only: $boot_modules"
  local typed_module=
  [ -f "$build/trainlint-clang.so" ] && typed_module="$libdir/trainlint/trainlint-clang.so"
  for f in bin/trainlint "$libdir/trainlint/libtrainlint_shim.so" $typed_module $boot_modules \
    share/doc/trainlint/README.md share/doc/trainlint/docs/json-output.md \
    share/doc/trainlint/rules/TL101-gc-collect-per-step.md; do
    grep -qx "$f" <<<"$list" || fail "$what: $f is not installed"
  done
  local ndocs
  ndocs=$(find "$src/rules/docs" -name '*.md' | wc -l)
  [ "$(grep -c '^share/doc/trainlint/rules/.*\.md$' <<<"$list")" -eq "$ndocs" ] || fail "$what: not every rule doc is installed"
  [ "$(grep -c '^bin/' <<<"$list")" -eq 1 ] || fail "$what: more than trainlint in bin/: $(grep '^bin/' <<<"$list" | tr '\n' ' ')"
  local junk
  junk=$(grep -v '^share/doc/' <<<"$list" | grep -Ei 'test|bench|fake|cupti|\.a$|\.h$|__pycache__|\.pyc$' || true)
  [ -z "$junk" ] || fail "$what: installs test, benchmark or build files: $(tr '\n' ' ' <<<"$junk")"
  return 0
}

case "$mode" in
install)
  cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
  # moved after installing: it must find its files relative to itself, not at the prefix
  mv "$tmp/prefix" "$tmp/moved"
  libdir=$(cd "$tmp/moved" && dirname "$(find . -name libtrainlint_shim.so | sed 's|^\./||')")
  libdir=${libdir%/trainlint}
  check_file_list "$(files_below "$tmp/moved")" "$libdir" "cmake --install"
  check_installed "$tmp/moved" "$libdir" "cmake --install"

  # and the real thing: a training script measured under the installed shim
  if /usr/bin/python3 -c "import torch" 2>/dev/null; then
    run_in_work "$tmp/moved/bin/trainlint" run --max-steps 2 --format json --output "$tmp/run.json" -- \
      /usr/bin/python3 examples/train_bad.py
    [ "$rc" -eq 0 ] || fail "trainlint run on examples/train_bad.py exited $rc: $err"
    /usr/bin/python3 - "$tmp/run.json" <<'EOF' || fail "the report of trainlint run is not what the installed shim and bootstrap give"
import json, sys
doc = json.load(open(sys.argv[1]))
run = doc["run"]
problems = []
if not run["records"]: problems.append("no records: the bootstrap did not load")
if run["steps"] != 2 or not run["stopped_early"]: problems.append(f"steps {run['steps']}, stopped_early {run['stopped_early']}")
if run["gpu"]["status"] == "host-only": problems.append("GPU host-only: " + str(run["gpu"]["reason"]))
tl101 = [f for f in doc["findings"] if f["code"] == "TL101"]
if not tl101 or not tl101[0]["runtime"] or tl101[0]["runtime"]["calls"] < 1:
    problems.append("TL101 not measured: " + json.dumps(tl101))
for p in problems: print("  " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
  else
    echo "note: /usr/bin/python3 has no torch; trainlint run on examples/train_bad.py not tried" >&2
  fi
  ;;
deb)
  (cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg") >"$tmp/cpack.log" 2>&1 ||
    { cat "$tmp/cpack.log" >&2; echo "FAIL: cpack -G DEB" >&2; exit 1; }
  debs=("$tmp"/pkg/*.deb)
  [ "${#debs[@]}" -eq 1 ] && [ -f "${debs[0]}" ] || { echo "FAIL: cpack made no single .deb: ${debs[*]}" >&2; exit 1; }
  deb=${debs[0]}
  arch=$(dpkg --print-architecture)
  [ "$(basename "$deb")" = "trainlint_${version}_${arch}.deb" ] || fail "package file name $(basename "$deb")"

  field() { dpkg-deb -f "$deb" "$1"; }
  [ "$(field Package)" = trainlint ] || fail "Package: $(field Package)"
  [ "$(field Version)" = "$version" ] || fail "Version: $(field Version), not $version"
  [ "$(field Architecture)" = "$arch" ] || fail "Architecture: $(field Architecture)"
  [ "$(field Section)" = devel ] || fail "Section: $(field Section)"
  grep -Eq '^.+ <.+@.+>$' <<<"$(field Maintainer)" || fail "Maintainer: $(field Maintainer)"
  [ -n "$(field Description)" ] || fail "no Description"
  depends=$(field Depends)
  elves=("$build/trainlint" "$build/libtrainlint_shim.so")
  [ -f "$build/trainlint-clang.so" ] && elves+=("$build/trainlint-clang.so")
  # one dependency per shared library the binary, the shim and the typed path's module link directly (their NEEDED
  # entries, as dpkg-shlibdeps reads them; what those libraries need is their packages' concern),
  # each found where the installed binary finds it: the system's library path, not the build's
  # RUNPATH (the build links LLVM through /usr/lib/llvm-14/lib, which llvm-14-dev owns)
  while read -r lib; do
    path=$(ldconfig -p | awk -v l="$lib" '$1 == l && $NF ~ /^\// && !p {print $NF; p = 1}')
    [ -n "$path" ] || path=$(ldd "${elves[@]}" | awk -v l="$lib" '$1 == l && $3 ~ /^\// && !p {print $3; p = 1}')
    # merged /usr: dpkg knows /usr/lib/... where ldconfig may say /lib/...
    pkg=$(dpkg -S "$path" 2>/dev/null || dpkg -S "/usr$path" 2>/dev/null || dpkg -S "$(realpath "$path")" 2>/dev/null || true)
    pkg=${pkg%%:*}
    [ -n "$pkg" ] || { fail "no package owns $path ($lib)"; continue; }
    tr ',' '\n' <<<"$depends" | sed 's/^ *//; s/ .*//' | grep -Fxq "$pkg" || fail "Depends ($depends) lacks $pkg, which provides $lib"
  done < <(objdump -p "${elves[@]}" | awk '$1 == "NEEDED" {print $2}' | sort -u)
  grep -qi cuda <<<"$depends" && fail "Depends names CUDA: $depends"

  list=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./usr/||' | sort)
  check_file_list "$list" lib "cpack -G DEB"

  dpkg -x "$deb" "$tmp/root"
  check_installed "$tmp/root/usr" lib "the .deb"
  ;;
*)
  echo "usage: install_test.sh install|deb BUILD_DIR SOURCE_DIR VERSION" >&2
  exit 2
  ;;
esac

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "OK: $mode"
