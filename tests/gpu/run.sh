#!/usr/bin/env bash
# GPU check of the runtime shim (issue 4). Needs an NVIDIA GPU, its driver, CUPTI and a PyTorch
# with CUDA. Builds trainlint + libtrainlint_shim, runs tests/gpu/train_cuda.py under
# `trainlint run`, and prints the measured table (text) and the JSON report's GPU fields:
# kernels captured, GPU idle attributed to the gc.collect() site, pageable copies detected.
#   usage: bash tests/gpu/run.sh [PYTHON]        (default: python3)
set -euo pipefail
cd "$(dirname "$0")/../.."
py=${1:-python3}
out=${OUT:-$(mktemp -d)}
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINLINT_TESTS=OFF -DTRAINLINT_BENCH=OFF >/dev/null
cmake --build build-gpu --target trainlint trainlint_shim
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())'
build-gpu/trainlint run --trace "$out/trace.json" --output "$out/report.txt" -- "$py" tests/gpu/train_cuda.py
cat "$out/report.txt"
build-gpu/trainlint run --format json --output "$out/report.json" -- "$py" tests/gpu/train_cuda.py >/dev/null
"$py" - "$out/report.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
run = doc.get("run", {})
gpu = run.get("gpu") or {}
print("gpu status:", gpu.get("status"), gpu.get("reason") or "")
print("kernels captured:", gpu.get("kernels"), " memcpys:", gpu.get("memcpys"), " memsets:", gpu.get("memsets"))
print("pageable host-to-device copies detected:", gpu.get("pageable_htod"))
print("GPU busy ms:", gpu.get("busy_ms"), " idle ms:", gpu.get("idle_ms"))
for f in doc["findings"]:
    rt = f.get("runtime") or {}
    if f["code"] in ("TL101", "TL202", "TL201", "TL903"):
        print(f["code"], f["path"] + ":" + str(f["range"]["start"]["line"]), {k: rt.get(k) for k in
              ("calls", "total_ms", "ms_per_step", "share", "gpu_idle_ms", "gpu_idle_reason", "verdict")})
PY
echo "trace: $out/trace.json"
