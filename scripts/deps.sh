#!/usr/bin/env bash
# Installs what trainlint needs to build and package (dpkg-dev: `cpack -G DEB` computes Depends
# with dpkg-shlibdeps), and with --runtime-tests what the tests need (the runtime tests on
# Debian's real PyTorch, the SARIF schema check, pre-commit for the hook test, LibTorch and
# clang-14 for the C++ examples and fixtures), from Debian
# packages, only when missing. The tree-sitter grammars and the tree-sitter runtime are fetched by
# CMake (npm ci in grammars/ and grammars/runtime/), pinned by their locks, and compiled in.
set -euo pipefail

packages=(
  g++ cmake ninja-build ccache
  nlohmann-json3-dev libcli11-dev libtomlplusplus-dev
  googletest libgtest-dev libbenchmark-dev
  hyperfine
  dpkg-dev
  git patch  # --diff-base runs git; the fix tests apply --diff output with `git apply` and `patch`
  libclang-14-dev libclang-cpp14-dev  # the typed C++ path (Clang libTooling, Debian's shared libraries)
)
command -v npm >/dev/null 2>&1 || packages+=(npm)
if [ "${1:-}" = "--runtime-tests" ]; then
  # `trainlint run` end-to-end tests use /usr/bin/python3 with Debian's CPU PyTorch
  packages+=(python3-torch python3-torchvision python3-pil python3-numpy)
  # SARIF output is validated against the official schema (tests/integration/validate_sarif.py);
  # rfc3987 lets jsonschema check the URI formats
  packages+=(python3-jsonschema python3-rfc3987)
  # tests/integration/precommit_test.sh drives the real pre-commit
  packages+=(pre-commit)
  # tests/lsp/nvim: Neovim's built-in LSP client, headless, drives `trainlint lsp`
  packages+=(neovim)
  # tests/cpp (label libtorch): examples/cpp are built against LibTorch's headers and libraries,
  # and every C++ fixture and example is parsed with clang++-14 against the same headers
  packages+=(libtorch-dev clang-14)
  # tests/runtime/html_report_test.cpp opens `trainlint run --html`'s page in headless Chromium
  packages+=(chromium)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "trainlint: installing missing packages: ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
