#!/usr/bin/env bash
# GPU check of the runtime shim (issue 4). Needs an NVIDIA GPU, its driver, CUPTI and a PyTorch
# with CUDA. Runs tests/gpu/train_cuda.py under `trainlint run` and prints the measured table
# (text) and the JSON report's GPU fields: kernels captured, GPU idle attributed to the
# gc.collect() site, pageable copies detected.
#
# trainlint and the shim come from build-gpu-bundle/ when it is there and runs (made by
# tests/gpu/bundle.sh on a machine with the build's packages, then carried); otherwise they are
# built here into build-gpu/ (needs the packages of scripts/deps.sh).
#   usage: bash tests/gpu/run.sh [PYTHON]        (default: python3)
set -euo pipefail
cd "$(dirname "$0")/../.."
py=${1:-python3}
out=${OUT:-$(mktemp -d)}
bin=
if [ -x build-gpu-bundle/trainlint ] && [ -f build-gpu-bundle/libtrainlint_shim.so ]; then
  if build-gpu-bundle/trainlint --version >/dev/null 2>&1; then
    bin=build-gpu-bundle
  else
    echo "run.sh: build-gpu-bundle/trainlint does not run here ($(build-gpu-bundle/trainlint --version 2>&1 | head -1)); building" >&2
  fi
fi
if [ -z "$bin" ]; then
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINLINT_TESTS=OFF -DTRAINLINT_BENCH=OFF >/dev/null
  cmake --build build-gpu --target trainlint trainlint_shim
  bin=build-gpu
fi
echo "trainlint: $bin/trainlint ($("$bin/trainlint" --version))"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())'
# The report is written whatever the program's exit code; show it either way.
"$bin/trainlint" run --trace "$out/trace.json" --output "$out/report.txt" -- "$py" tests/gpu/train_cuda.py ||
  echo "run.sh: the program exited with $?"
cat "$out/report.txt"
"$bin/trainlint" run --format json --output "$out/report.json" -- "$py" tests/gpu/train_cuda.py >/dev/null ||
  echo "run.sh: the program exited with $?"
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
