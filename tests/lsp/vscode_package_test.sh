#!/usr/bin/env bash
# ctest Lsp.VscodeExtensionPackage: editors/vscode/package.sh builds the .vsix, and the package
# holds the manifest, the client that starts `trainlint lsp` and the pinned vscode-languageclient.
set -euo pipefail
src=$1
vsix=$(bash "$src/editors/vscode/package.sh" | tail -n 1)
test -s "$vsix"
node --check "$src/editors/vscode/extension.js"
listing=$(/usr/bin/python3 -m zipfile -l "$vsix")
for f in extension.vsixmanifest extension/package.json extension/extension.js \
         extension/node_modules/vscode-languageclient/node.js extension/node_modules/vscode-jsonrpc/package.json; do
  grep -q " *$f " <<<"$listing" || grep -q "^$f " <<<"$listing" || { echo "missing in the .vsix: $f"; exit 1; }
done
manifest=$(/usr/bin/python3 -c 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read("extension/package.json").decode())' "$vsix")
grep -q '"main": "./extension.js"' <<<"$manifest"
grep -q '"onLanguage:python"' <<<"$manifest"
grep -q "args: \['lsp'\]" "$src/editors/vscode/extension.js"
if grep -q "@vscode/vsce" <<<"$listing"; then echo "the packager itself is in the .vsix"; exit 1; fi
echo "ok: $vsix"
