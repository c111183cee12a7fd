# A client that does not declare `relatedInformation` (publishDiagnostics) gets a finding's notes
# as lines of its message, `path:line:col: note` with the path relative to the workspace folder:
# the helper's TL101 still says which step loop and which call make it run every step.
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
import gc


def log_metrics(step, loss):
    gc.collect()
    return loss.detach()
--- send
{"jsonrpc": "2.0", "id": 1, "method": "initialize",
 "params": {"processId": null, "workspaceFolders": [{"uri": "${URI:}", "name": "demo"}], "capabilities": {}}}
--- expect
{"id": 1, "result": {"capabilities": {"positionEncoding": "utf-16"}}}
--- send
{"jsonrpc": "2.0", "method": "initialized", "params": {}}
--- send
{"jsonrpc": "2.0", "method": "textDocument/didOpen",
 "params": {"textDocument": {"uri": "${URI:utils.py}", "languageId": "python", "version": 1, "text": ${TEXT:utils.py}}}}
--- expect
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:utils.py}", "version": 1, "diagnostics": [
  {"range": {"start": {"line": 4, "character": 4}, "end": {"line": 4, "character": 16}}, "code": "TL101",
   "message": "`gc.collect()` runs every step: a full garbage-collection pass stalls the host, and the GPU waiting on it, on each iteration\ntrain.py:10:9: runs every iteration of this training step loop\ntrain.py:18:13: through this call to `log_metrics`, made every step"}]}}
# and not as related information as well
--- none 300
{"method": "textDocument/publishDiagnostics", "params": {"diagnostics": [{"relatedInformation": [{"message": "~"}, {"message": "~"}]}]}}
