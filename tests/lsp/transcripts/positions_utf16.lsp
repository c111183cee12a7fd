# Positions are UTF-16 code units by default: a line with Chinese text and an emoji before the
# flagged call gets UTF-16 columns (the emoji counts 2), in diagnostics and in incremental edits.
--- file pyproject.toml
[project]
name = "cn"
--- file train.py
# 训练脚本：ResNet 在 ImageNet 子集上的微调 🚀
import gc

import torch
from torch import nn


def train(model, loader, optimizer, epochs):
    model = model.cuda()  # 模型放到 GPU 上
    for epoch in range(epochs):
        for step, (images, labels) in enumerate(loader):
            images = images.cuda(non_blocking=True)  # 图像 📷
            labels = labels.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            tag = "步骤🚀"; gc.collect()  # 每步清理内存 🧹
--- send
{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"rootUri": "${URI:}", "capabilities": {"textDocument": {"publishDiagnostics": {"relatedInformation": true}}}}}
--- expect
{"id": 1, "result": {"capabilities": {"positionEncoding": "utf-16"}}}
--- send
{"jsonrpc": "2.0", "method": "initialized", "params": {}}
--- send
{"jsonrpc": "2.0", "method": "textDocument/didOpen",
 "params": {"textDocument": {"uri": "${URI:train.py}", "languageId": "python", "version": 1, "text": ${TEXT:train.py}}}}
--- expect
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:train.py}", "version": 1, "diagnostics": [
  {"code": "TL101", "range": {"start": {"line": 18, "character": 26}, "end": {"line": 18, "character": 38}},
   "relatedInformation": [{"location": {"uri": "${URI:train.py}", "range": {"start": {"line": 10, "character": 8}}}}]}]}}
# insert a statement just before the call, at the position the diagnostic gave
--- send
{"jsonrpc": "2.0", "method": "textDocument/didChange",
 "params": {"textDocument": {"uri": "${URI:train.py}", "version": 2}, "contentChanges": [
   {"range": {"start": {"line": 18, "character": 26}, "end": {"line": 18, "character": 26}}, "text": "del images; "}]}}
--- expect
{"method": "textDocument/publishDiagnostics", "params": {"uri": "${URI:train.py}", "version": 2, "diagnostics": [
  {"code": "TL101", "range": {"start": {"line": 18, "character": 38}, "end": {"line": 18, "character": 50}}}]}}
# hover inside the call gives the rule's doc with the same range
--- send
{"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover",
 "params": {"textDocument": {"uri": "${URI:train.py}"}, "position": {"line": 18, "character": 41}}}
--- expect
{"id": 2, "result": {"contents": {"kind": "markdown", "value": "~#### Why is this bad?"},
 "range": {"start": {"line": 18, "character": 38}, "end": {"line": 18, "character": 50}}}}
--- send
{"jsonrpc": "2.0", "id": 3, "method": "shutdown"}
--- expect
{"id": 3, "result": null}
--- send
{"jsonrpc": "2.0", "method": "exit"}
--- exit 0
