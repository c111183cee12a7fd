# Code actions on a finding: the rule's fix (the same edit as --fix, preferred because it is
# safe), a suppression comment on the statement's line, and "explain", whose command answers with
# the rule's doc (shown with window/showMessage when the client cannot show documents).
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
{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"rootUri": "${URI:}", "capabilities": {}}}
--- expect
{"id": 1, "result": {"capabilities": {"codeActionProvider": {"codeActionKinds": ["quickfix"]},
 "executeCommandProvider": {"commands": ["trainlint.explain"]}}}}
--- send
{"jsonrpc": "2.0", "method": "initialized", "params": {}}
--- send
{"jsonrpc": "2.0", "method": "textDocument/didOpen",
 "params": {"textDocument": {"uri": "${URI:train.py}", "languageId": "python", "version": 7, "text": ${TEXT:train.py}}}}
--- expect
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:train.py}", "version": 7, "diagnostics": [
  {"code": "TL202", "severity": 2, "range": {"start": {"line": 6, "character": 13}, "end": {"line": 6, "character": 101}}}]}}
--- send
{"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction",
 "params": {"textDocument": {"uri": "${URI:train.py}"},
            "range": {"start": {"line": 6, "character": 20}, "end": {"line": 6, "character": 20}},
            "context": {"diagnostics": []}}}
--- expect
{"id": 2, "result": [
  {"title": "~pin_memory=True", "kind": "quickfix", "isPreferred": true,
   "diagnostics": [{"code": "TL202"}],
   "edit": {"changes": {"${URI:train.py}": [
     {"range": {"start": {"line": 6, "character": 100}, "end": {"line": 6, "character": 100}}, "newText": ", pin_memory=True"}]}}},
  {"title": "Suppress TL202 on this line", "kind": "quickfix",
   "edit": {"changes": {"${URI:train.py}": [{"newText": "~# trainlint: ignore[TL202]"}]}}},
  {"title": "~Explain TL202", "command": {"command": "trainlint.explain", "arguments": ["TL202"]}}]}
# a range away from every finding has no actions
--- send
{"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeAction",
 "params": {"textDocument": {"uri": "${URI:train.py}"},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}}, "context": {"diagnostics": []}}}
--- expect
{"id": 3, "result": []}
--- send
{"jsonrpc": "2.0", "id": 4, "method": "workspace/executeCommand", "params": {"command": "trainlint.explain", "arguments": ["TL202"]}}
--- expect
{"method": "window/showMessage", "params": {"message": "~## What it does"}}
--- expect
{"id": 4, "result": {"code": "TL202"}}
# applying the fix (as the client would) clears the diagnostic
--- send
{"jsonrpc": "2.0", "method": "textDocument/didChange",
 "params": {"textDocument": {"uri": "${URI:train.py}", "version": 8}, "contentChanges": [
   {"range": {"start": {"line": 6, "character": 100}, "end": {"line": 6, "character": 100}}, "text": ", pin_memory=True"}]}}
--- expect
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:train.py}", "version": 8, "diagnostics": []}}
--- send
{"jsonrpc": "2.0", "id": 5, "method": "shutdown"}
--- expect
{"id": 5, "result": null}
--- send
{"jsonrpc": "2.0", "method": "exit"}
--- exit 0
