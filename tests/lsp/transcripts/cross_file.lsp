# Cross-file truth: a helper module's finding depends on the training script that calls it.
# Editing utils.py (adding gc.collect() to the helper the step loop calls) makes a TL101 finding
# appear in utils.py, with related locations in train.py (the step loop and the call); editing
# train.py (guarding the call with `if step % 100 == 0:`) makes it disappear from utils.py.
--- file pyproject.toml
[project]
name = "demo"
--- file train.py
import torch
from torch import nn

from utils import log_metrics


def train(model, loader, optimizer, epochs):
    model = model.cuda()
    for epoch in range(epochs):
        for step, (images, labels) in enumerate(loader):
            images = images.cuda(non_blocking=True)
            labels = labels.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            log_metrics(step, loss)
--- file utils.py
def log_metrics(step, loss):
    value = loss.detach()
    return value
--- send
{"jsonrpc": "2.0", "id": 1, "method": "initialize",
 "params": {"processId": null, "workspaceFolders": [{"uri": "${URI:}", "name": "demo"}], "capabilities": {"textDocument": {"publishDiagnostics": {"relatedInformation": true}}}}}
--- expect
{"id": 1, "result": {"capabilities": {"positionEncoding": "utf-16", "textDocumentSync": {"openClose": true, "change": 2},
 "hoverProvider": true}, "serverInfo": {"name": "trainlint"}}}
--- send
{"jsonrpc": "2.0", "method": "initialized", "params": {}}
--- send
{"jsonrpc": "2.0", "method": "textDocument/didOpen",
 "params": {"textDocument": {"uri": "${URI:train.py}", "languageId": "python", "version": 1, "text": ${TEXT:train.py}}}}
--- send
{"jsonrpc": "2.0", "method": "textDocument/didOpen",
 "params": {"textDocument": {"uri": "${URI:utils.py}", "languageId": "python", "version": 1, "text": ${TEXT:utils.py}}}}
--- expect
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:train.py}", "diagnostics": []}}
--- expect
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:utils.py}", "version": 1, "diagnostics": []}}
# add `import gc` and `gc.collect()` to the helper, in two incremental changes
--- send
{"jsonrpc": "2.0", "method": "textDocument/didChange",
 "params": {"textDocument": {"uri": "${URI:utils.py}", "version": 2}, "contentChanges": [
   {"range": {"start": {"line": 1, "character": 25}, "end": {"line": 1, "character": 25}}, "text": "\n    gc.collect()"},
   {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "import gc\n\n\n"}]}}
--- expect
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:utils.py}", "version": 2, "diagnostics": [
  {"range": {"start": {"line": 5, "character": 4}, "end": {"line": 5, "character": 16}},
   "severity": 2, "code": "TL101", "source": "trainlint",
   "codeDescription": {"href": "${SOURCE_URI:rules/docs/TL101-gc-collect-per-step.md}"},
   "message": "~`gc.collect()` runs every step",
   "relatedInformation": [
     {"location": {"uri": "${URI:train.py}", "range": {"start": {"line": 9, "character": 8}}},
      "message": "runs every iteration of this training step loop"},
     {"location": {"uri": "${URI:train.py}", "range": {"start": {"line": 17, "character": 12}}},
      "message": "~through this call to `log_metrics`"}]}]}}
# the training script is unchanged: nothing is republished for it
--- none 300
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:train.py}"}}
# guard the call in the step loop: the helper now runs every 100 steps
--- send
{"jsonrpc": "2.0", "method": "textDocument/didChange",
 "params": {"textDocument": {"uri": "${URI:train.py}", "version": 2}, "contentChanges": [
   {"range": {"start": {"line": 17, "character": 0}, "end": {"line": 17, "character": 0}},
    "text": "            if step % 100 == 0:\n    "}]}}
--- expect
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:utils.py}", "version": 2, "diagnostics": []}}
# closing train.py: utils.py is judged with train.py as it is on disk (unguarded) again
--- send
{"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": "${URI:train.py}"}}}
--- expect
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:train.py}", "diagnostics": []}}
--- expect
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:utils.py}", "version": 2,
 "diagnostics": [{"code": "TL101", "range": {"start": {"line": 5, "character": 4}}}]}}
--- send
{"jsonrpc": "2.0", "id": 2, "method": "shutdown"}
--- expect
{"id": 2, "result": null}
--- send
{"jsonrpc": "2.0", "method": "exit"}
--- exit 0
