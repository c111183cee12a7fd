# The workspace's configuration is respected and reloaded on workspace/didChangeWatchedFiles;
# initializationOptions take the same rule selection keys.
--- file pyproject.toml
[project]
name = "ca"
--- file train.py
import torch
from torch.utils.data import DataLoader


def train(model, dataset, optimizer, epochs):
    model = model.cuda()
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8, persistent_workers=True)
    for epoch in range(epochs):
        for step, (images, labels) in enumerate(loader):
            images = images.cuda(non_blocking=True)
            labels = labels.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
--- send
{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"rootUri": "${URI:}",
 "capabilities": {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}},
 "initializationOptions": {"extendSelect": ["TL001"]}}}
--- expect
{"id": 1, "result": {"capabilities": {}}}
--- send
{"jsonrpc": "2.0", "method": "initialized", "params": {}}
# the server asks to be told about configuration files, Python files and the runtime report
--- expect
{"method": "client/registerCapability", "params": {"registrations": [{"method": "workspace/didChangeWatchedFiles",
 "registerOptions": {"watchers": [{"globPattern": "**/pyproject.toml"}, {"globPattern": "**/.trainlint.toml"},
 {"globPattern": "**/*.py"}, {"globPattern": "**/.trainlint/run.json"}]}}]}}
--- send
{"jsonrpc": "2.0", "method": "textDocument/didOpen",
 "params": {"textDocument": {"uri": "${URI:train.py}", "languageId": "python", "version": 1, "text": ${TEXT:train.py}}}}
--- expect
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:train.py}", "diagnostics": [{"code": "TL202"}]}}
# the project starts ignoring TL202
--- file pyproject.toml
[project]
name = "ca"

[tool.trainlint]
ignore = ["dataloader-no-pin-memory"]
--- send
{"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles", "params": {"changes": [{"uri": "${URI:pyproject.toml}", "type": 2}]}}
--- expect
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:train.py}", "diagnostics": []}}
# a suppression comment that no longer suppresses anything: TL001, selected by initializationOptions
--- send
{"jsonrpc": "2.0", "method": "textDocument/didChange",
 "params": {"textDocument": {"uri": "${URI:train.py}", "version": 2}, "contentChanges": [
   {"range": {"start": {"line": 5, "character": 24}, "end": {"line": 5, "character": 24}}, "text": "  # trainlint: ignore[TL303]"}]}}
--- expect
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:train.py}", "version": 2, "diagnostics": [
  {"code": "TL001", "range": {"start": {"line": 5}}}]}}
--- send
{"jsonrpc": "2.0", "id": 2, "method": "shutdown"}
--- expect
{"id": 2, "result": null}
--- send
{"jsonrpc": "2.0", "method": "exit"}
--- exit 0
