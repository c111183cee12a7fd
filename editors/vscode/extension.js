// The trainlint VS Code extension: starts `trainlint lsp` for Python files. Everything else
// (diagnostics, quick fixes, hovers, the measured cost) comes from the server.
'use strict';
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const cfg = vscode.workspace.getConfiguration('trainlint');
  const command = cfg.get('path') || 'trainlint';
  const serverOptions = { command, args: ['lsp'] };
  const clientOptions = {
    documentSelector: [{ scheme: 'file', language: 'python' }],
    initializationOptions: {
      select: cfg.get('select'),
      ignore: cfg.get('ignore'),
      runReport: cfg.get('runReport') || undefined,
    },
    synchronize: { configurationSection: 'trainlint' },
  };
  client = new LanguageClient('trainlint', 'trainlint', serverOptions, clientOptions);
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
