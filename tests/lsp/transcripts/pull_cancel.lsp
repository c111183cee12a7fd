# A pull request waits for the analysis of the document's latest version; $/cancelRequest
# answers it at once with RequestCancelled, and shutdown is answered while an analysis is due.
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
 "capabilities": {"textDocument": {"diagnostic": {}}}, "initializationOptions": {"debounceMs": 2000}}}
--- expect
{"id": 1, "result": {"capabilities": {"diagnosticProvider": {"identifier": "trainlint"}}}}
--- send
{"jsonrpc": "2.0", "method": "textDocument/didOpen",
 "params": {"textDocument": {"uri": "${URI:train.py}", "languageId": "python", "version": 1, "text": ${TEXT:train.py}}}}
# an edit right after the open: a burst, analysed debounceMs (2 s) later
--- send
{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "${URI:train.py}", "version": 2},
 "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "# data\n"}]}}
--- send
{"jsonrpc": "2.0", "id": 2, "method": "textDocument/diagnostic", "params": {"textDocument": {"uri": "${URI:train.py}"}}}
--- none 300
{"id": 2}
--- send
{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 2}}
--- expect
{"id": 2, "error": {"code": -32800}}
--- send
{"jsonrpc": "2.0", "id": 3, "method": "textDocument/diagnostic", "params": {"textDocument": {"uri": "${URI:train.py}"}}}
--- send
{"jsonrpc": "2.0", "id": 4, "method": "shutdown"}
--- expect
{"id": 3, "error": {"code": -32800}}
--- expect
{"id": 4, "result": null}
--- send
{"jsonrpc": "2.0", "method": "exit"}
--- exit 0
