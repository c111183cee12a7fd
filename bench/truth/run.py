#!/usr/bin/python3
"""The truth check of `trainlint run`'s estimate (bench/truth/README.md).

For each anti-pattern mix, a bad script and its fixed twin run alternately, each under
`trainlint run --format json` (bad, fixed, bad, fixed, ...). The bad run's "estimated step time if
the confirmed findings were fixed" is compared with the fixed twin's measured median step; both
are medians over the rounds. Prints a Markdown table and exits 1 when an estimate is off by more
than --tolerance.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

MIXES = [
    ("model built every step (class of the entry script)", "model_every_step", ["--steps", "40"]),
    ("DataLoader with workers built every step", "loader_every_step", ["--steps", "20"]),
    ("gc.collect() and a checkpoint every step", "gc_and_checkpoint", ["--steps", "40"]),
    ("JSON index parsed in __getitem__ (with statement)", "json_index", ["--steps", "40"]),
]

# --gpu: loops on a CUDA device, where a host stall costs step time only while the GPU has nothing
# queued (the estimate subtracts the GPU-idle part of a finding's time, not all of it)
GPU_MIXES = [
    ("GPU: gc.collect() every step, no host sync, GPU step shorter than the collection", "gpu_gc_overlap",
     ["--steps", "200", "--hidden", "4096", "--live", "30000"]),
    ("GPU: gc.collect() every step, no host sync, GPU step longer than the collection", "gpu_gc_overlap",
     ["--steps", "100", "--hidden", "12288", "--live", "30000"]),
    ("GPU: loss.item() then gc.collect() every step", "gpu_item_and_gc", ["--steps", "100", "--hidden", "4096", "--live", "30000"]),
]


def find_binary():
    for b in ("build/trainlint", "build-test/trainlint", "build-release/trainlint"):
        p = os.path.join(ROOT, b)
        if os.access(p, os.X_OK):
            return p
    return "trainlint"


def run(binary, script, args, keep=None):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        cmd = [binary, "run", "--format", "json", "--output", out]
        if keep:
            cmd += ["--keep-records", keep]
        cmd += ["--", sys.executable, os.path.join(HERE, script + ".py")]
        subprocess.run(cmd + args, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            doc = json.load(f)
        if keep:
            with open(os.path.join(keep, "report.json"), "w") as f:
                json.dump(doc, f, indent=1)
        return doc


def gpu_text(r):
    g, wall = r.get("gpu") or {}, r.get("steady_wall_ms")
    if g.get("idle_ms") is None or not wall:
        return ""
    return ", GPU idle %.0f%% (%d kernels)" % (100 * g["idle_ms"] / wall, g.get("kernels") or 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=find_binary())
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tolerance", type=float, default=0.30)
    ap.add_argument("--only", default="", help="run the mixes whose name contains this")
    ap.add_argument("--gpu", action="store_true", help="run the CUDA mixes instead (needs a GPU)")
    ap.add_argument("--keep-records", default="", help="keep each run's records and report in this folder")
    a = ap.parse_args()
    rows, worst = [], 0.0
    for m, (title, name, args) in enumerate(GPU_MIXES if a.gpu else MIXES):
        if a.only and a.only not in name:
            continue
        bad_median, estimate, fixed_median, confirmed = [], [], [], set()
        for k in range(a.rounds):
            order = [("bad", name), ("fixed", name + "_fixed")]
            if k % 2:
                order.reverse()  # alternate which one runs first
            for kind, script in order:
                keep = os.path.join(a.keep_records, "m%d-%s-r%d" % (m, kind, k)) if a.keep_records else None
                doc = run(a.binary, script, args, keep)
                r = doc["run"]
                if kind == "bad":
                    bad_median.append(r["median_step_ms"])
                    estimate.append(r["estimated_step_ms"])
                    for f in doc["findings"]:
                        if f.get("runtime", {}).get("verdict") == "confirmed" and not f["runtime"].get("runtime_only"):
                            confirmed.add(f["code"])
                else:
                    fixed_median.append(r["median_step_ms"])
                print("  %s r%d: median %.2f ms%s%s" % (script, k, r["median_step_ms"],
                      ", estimate %.2f ms" % r["estimated_step_ms"] if kind == "bad" else "",
                      gpu_text(r)),
                      file=sys.stderr, flush=True)
        b, e, f = statistics.median(bad_median), statistics.median(estimate), statistics.median(fixed_median)
        err = e / f - 1.0
        worst = max(worst, abs(err))
        rows.append("| %s | %s | %.2f | %.2f | %.2f | %+.0f%% |" % (title, ", ".join(sorted(confirmed)), b, e, f, 100 * err))
        sys.stdout.flush()
    print("| mix | confirmed | bad: median step ms | bad: estimate ms | fixed twin: median step ms | estimate error |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(r)
    print("\nworst error: %.0f%% (tolerance %.0f%%), %d rounds" % (100 * worst, 100 * a.tolerance, a.rounds))
    return 0 if worst <= a.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
