#!/usr/bin/env bash
# Neovim headless client test of `trainlint lsp` (ctest Lsp.NeovimClient). Exit 77 (skipped)
# when nvim is not installed (scripts/deps.sh --runtime-tests installs Debian's neovim).
set -euo pipefail
bin=$1 src=$2
command -v nvim >/dev/null || { echo "nvim not installed: skipped"; exit 77; }
ws=$(mktemp -d /tmp/trainlint-nvim-XXXXXX)
trap 'rm -rf "$ws"' EXIT
printf '[project]\nname = "examples"\n' >"$ws/pyproject.toml"
cp "$src/examples/train_bad.py" "$ws/"
cd "$ws"
TRAINLINT=$bin WORKSPACE=$ws timeout 120 nvim --headless -u NONE -i NONE -n -c "luafile $src/tests/lsp/nvim/client_test.lua" </dev/null

# the snippet users copy (editors/nvim/trainlint.lua) starts the server for a Python buffer:
# `trainlint` found on PATH, diagnostics arrive
PATH="$(dirname "$bin"):$PATH" timeout 120 nvim --headless -u NONE -i NONE -n \
  -c "filetype on" -c "luafile $src/editors/nvim/trainlint.lua" -c "edit $ws/train_bad.py" \
  -c "lua if vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 20) then print('ok: the snippet attached trainlint, ' .. #vim.diagnostic.get(0) .. ' diagnostics') vim.cmd('qall!') else io.stderr:write('FAIL: no diagnostics through editors/nvim/trainlint.lua\n') vim.cmd('cquit 1') end" </dev/null
