# Rapid edits are debounced (debounceMs): only the last version of a burst is analysed and
# published, never an intermediate one.
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
{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"rootUri": "${URI:}", "capabilities": {},
 "initializationOptions": {"debounceMs": 300}}}
--- expect
{"id": 1, "result": {"capabilities": {}}}
--- send
{"jsonrpc": "2.0", "method": "textDocument/didOpen",
 "params": {"textDocument": {"uri": "${URI:train.py}", "languageId": "python", "version": 1, "text": ${TEXT:train.py}}}}
--- expect
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:train.py}", "version": 1, "diagnostics": [{"code": "TL202"}]}}
# type ", pin_memory=True" in three keystrokes, then delete the comma's space again
--- send
{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "${URI:train.py}", "version": 2},
 "contentChanges": [{"range": {"start": {"line": 6, "character": 100}, "end": {"line": 6, "character": 100}}, "text": ", "}]}}
--- send
{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "${URI:train.py}", "version": 3},
 "contentChanges": [{"range": {"start": {"line": 6, "character": 102}, "end": {"line": 6, "character": 102}}, "text": "pin_memory"}]}}
--- send
{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "${URI:train.py}", "version": 4},
 "contentChanges": [{"range": {"start": {"line": 6, "character": 112}, "end": {"line": 6, "character": 112}}, "text": "=True"}]}}
--- expect
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:train.py}", "version": 4, "diagnostics": []}}
--- none 10
{"method": "textDocument/publishDiagnostics", "params": {"version": 2}}
--- none 10
{"method": "textDocument/publishDiagnostics", "params": {"version": 3}}
--- send
{"jsonrpc": "2.0", "id": 2, "method": "shutdown"}
--- expect
{"id": 2, "result": null}
--- send
{"jsonrpc": "2.0", "method": "exit"}
--- exit 0
