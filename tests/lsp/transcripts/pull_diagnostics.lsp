# A client that supports pull diagnostics (textDocument.diagnostic) gets diagnosticProvider and
# pulls; nothing is pushed. An unchanged result answers "unchanged" for its resultId.
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
 "capabilities": {"textDocument": {"diagnostic": {"dynamicRegistration": false}}, "workspace": {"diagnostics": {"refreshSupport": true}}}}}
--- expect
{"id": 1, "result": {"capabilities": {"diagnosticProvider": {"identifier": "trainlint", "interFileDependencies": true, "workspaceDiagnostics": true}}}}
--- send
{"jsonrpc": "2.0", "method": "initialized", "params": {}}
--- send
{"jsonrpc": "2.0", "method": "textDocument/didOpen",
 "params": {"textDocument": {"uri": "${URI:train.py}", "languageId": "python", "version": 1, "text": ${TEXT:train.py}}}}
--- send
{"jsonrpc": "2.0", "id": 2, "method": "textDocument/diagnostic", "params": {"textDocument": {"uri": "${URI:train.py}"}}}
--- expect
{"id": 2, "result": {"kind": "full", "resultId": "1", "items": [{"code": "TL202", "source": "trainlint",
 "range": {"start": {"line": 6, "character": 13}}}]}}
--- send
{"jsonrpc": "2.0", "id": 3, "method": "textDocument/diagnostic", "params": {"textDocument": {"uri": "${URI:train.py}"}, "previousResultId": "1"}}
--- expect
{"id": 3, "result": {"kind": "unchanged", "resultId": "1"}}
--- send
{"jsonrpc": "2.0", "id": 4, "method": "workspace/diagnostic", "params": {"previousResultIds": []}}
--- expect
{"id": 4, "result": {"items": [{"uri": "${URI:train.py}", "version": 1, "kind": "full", "items": [{"code": "TL202"}]}]}}
--- none 200
{"method": "textDocument/publishDiagnostics"}
--- send
{"jsonrpc": "2.0", "id": 5, "method": "shutdown"}
--- expect
{"id": 5, "result": null}
--- send
{"jsonrpc": "2.0", "method": "exit"}
--- exit 0
