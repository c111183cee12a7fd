#!/usr/bin/env bash
# Packages the VS Code extension into editors/vscode/trainlint-0.1.0.vsix with the pinned
# @vscode/vsce (package-lock.json; npm ci, no install scripts). Prints the .vsix path.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2
./node_modules/.bin/vsce package --allow-missing-repository --skip-license --out trainlint-0.1.0.vsix >&2
echo "$PWD/trainlint-0.1.0.vsix"
