#!/usr/bin/env bash
# GPU checks of `trainlint run`'s estimate and overhead, after tests/gpu/run.sh, on a machine with
# an NVIDIA GPU and a PyTorch with CUDA: the truth check's CUDA mixes (bench/truth/run.py --gpu:
# each bad script's "if fixed" estimate against its fixed twin measured) and the shim's overhead
# on the CUDA variant of bench/overhead's loop. Each run's records are kept and packed into
# $OUT/gpu-records.tar.gz, so the merge can be re-run elsewhere (`trainlint run --from-records`).
#   usage: bash tests/gpu/truth.sh [PYTHON] [ROUNDS]        (defaults: python3, 3)
set -uo pipefail
cd "$(dirname "$0")/../.."
py=${1:-python3}
rounds=${2:-3}
out=${OUT:-$(mktemp -d)}
bin=$PWD/build-gpu-bundle
[ -x "$bin/trainlint" ] && "$bin/trainlint" --version >/dev/null 2>&1 || bin=$PWD/build-gpu
keep=$(mktemp -d)
echo "== truth check, CUDA mixes ($rounds rounds)"
PYTHONUNBUFFERED=1 "$py" bench/truth/run.py --gpu --binary "$bin/trainlint" --rounds "$rounds" --keep-records "$keep/truth"
echo "truth exit: $?"
tar -C "$keep" -czf "$out/gpu-records.tar.gz" . 2>/dev/null
echo "== overhead on the GPU (bench/overhead, cnn loop on cuda)"
PYTHONUNBUFFERED=1 "$py" bench/overhead/run.py --trainlint "$bin/trainlint" --python "$py" --rounds "$rounds" --steps 300 \
  --json "$out/overhead.json"
echo "overhead exit: $?"
