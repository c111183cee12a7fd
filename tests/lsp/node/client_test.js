// A client trainlint did not write: vscode-jsonrpc's stdio message connection with the typed
// requests of vscode-languageserver-protocol (the layers vscode-languageclient runs on inside VS
// Code) drives `trainlint lsp`. It opens examples/train_bad.py (copied into a temporary project),
// waits for the pushed diagnostics, checks their codes and positions against `trainlint
// --format json`, applies a quick fix's edit and checks that the finding is gone.
//
//   node client_test.js TRAINLINT_BINARY SOURCE_DIR
'use strict';
const assert = require('assert');
const cp = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const rpc = require('vscode-jsonrpc/node');
const lsp = require('vscode-languageserver-protocol');

const [binary, sourceDir] = process.argv.slice(2);
const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'trainlint-node-'));
fs.writeFileSync(path.join(ws, 'pyproject.toml'), '[project]\nname = "examples"\n');
const file = path.join(ws, 'train_bad.py');
fs.copyFileSync(path.join(sourceDir, 'examples', 'train_bad.py'), file);
const uri = 'file://' + file;
let text = fs.readFileSync(file, 'utf8');

// what the command line reports for the same file
const cli = JSON.parse(cp.execFileSync(binary, ['--format', 'json', '--exit-zero', 'train_bad.py'], { cwd: ws }).toString());
const expected = cli.findings.map((f) => `${f.code}@${f.range.start.line - 1}:${f.range.start.column - 1}`).sort();
assert.ok(expected.length > 5, 'the CLI finds the example\'s problems');

const child = cp.spawn(binary, ['lsp', '--stdio'], { cwd: ws, stdio: ['pipe', 'pipe', 'inherit'] });
const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
const published = [];
let waiter = null;
conn.onNotification(lsp.PublishDiagnosticsNotification.type, (p) => {
  published.push(p);
  if (waiter) waiter();
});
conn.onNotification(lsp.LogMessageNotification.type, () => {});
conn.onRequest(lsp.RegistrationRequest.type, () => null);
conn.listen();

function nextPublish(version, timeoutMs = 20000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no publishDiagnostics for version ${version}`)), timeoutMs);
    const check = () => {
      const i = published.findIndex((p) => p.uri === uri && p.version === version);
      if (i >= 0) {
        clearTimeout(timer);
        waiter = null;
        resolve(published.splice(i, 1)[0]);
      }
    };
    waiter = check;
    check();
  });
}

function applyEdits(src, edits) {
  const lines = src.split('\n');
  const offset = (pos) => {
    let off = 0;
    for (let l = 0; l < pos.line; ++l) off += lines[l].length + 1;
    return off + pos.character;  // ASCII file: UTF-16 units are characters
  };
  const sorted = edits.slice().sort((a, b) => offset(b.range.start) - offset(a.range.start));
  for (const e of sorted) src = src.slice(0, offset(e.range.start)) + e.newText + src.slice(offset(e.range.end));
  return src;
}

(async () => {
  const init = await conn.sendRequest(lsp.InitializeRequest.type, {
    processId: process.pid,
    rootUri: 'file://' + ws,
    workspaceFolders: [{ uri: 'file://' + ws, name: 'examples' }],
    capabilities: { textDocument: { publishDiagnostics: { relatedInformation: true } } },
  });
  assert.strictEqual(init.capabilities.positionEncoding, 'utf-16');
  assert.strictEqual(init.capabilities.textDocumentSync.change, lsp.TextDocumentSyncKind.Incremental);
  await conn.sendNotification(lsp.InitializedNotification.type, {});
  await conn.sendNotification(lsp.DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: 'python', version: 1, text },
  });
  const first = await nextPublish(1);
  const got = first.diagnostics.map((d) => `${d.code}@${d.range.start.line}:${d.range.start.character}`).sort();
  assert.deepStrictEqual(got, expected);
  for (const d of first.diagnostics) {
    assert.strictEqual(d.source, 'trainlint');
    assert.ok(d.codeDescription && d.codeDescription.href.endsWith('.md'), 'codeDescription.href links the rule doc');
  }
  assert.ok(first.diagnostics.some((d) => (d.relatedInformation || []).length > 0), 'step-loop notes are related information');

  // the first diagnostic with a preferred (safe) quick fix
  let fixed = null;
  for (const d of first.diagnostics) {
    const actions = await conn.sendRequest(lsp.CodeActionRequest.type, {
      textDocument: { uri }, range: d.range, context: { diagnostics: [d] },
    });
    const fix = actions.find((a) => a.isPreferred && a.edit);
    if (fix) {
      fixed = { d, fix };
      break;
    }
  }
  assert.ok(fixed, 'some finding of train_bad.py has a safe quick fix');
  text = applyEdits(text, fixed.fix.edit.changes[uri]);
  await conn.sendNotification(lsp.DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version: 2 }, contentChanges: [{ text }],
  });
  const second = await nextPublish(2);
  const key = (d) => `${d.code}@${d.range.start.line}`;
  assert.ok(!second.diagnostics.some((d) => key(d) === key(fixed.d)), `${key(fixed.d)} is fixed`);
  assert.strictEqual(second.diagnostics.length, first.diagnostics.length - 1);

  await conn.sendRequest(lsp.ShutdownRequest.type);
  await conn.sendNotification(lsp.ExitNotification.type);
  const code = await new Promise((resolve) => child.on('exit', resolve));
  assert.strictEqual(code, 0);
  fs.rmSync(ws, { recursive: true, force: true });
  console.log(`ok: ${got.length} diagnostics match the CLI; applied "${fixed.fix.title}"`);
  process.exit(0);
})().catch((e) => {
  console.error(e);
  child.kill();
  process.exit(1);
});
