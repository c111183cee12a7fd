"""Runtime overhead of `trainlint run` (and of torch.profiler) on a CPU training loop.

    /usr/bin/python3 bench/overhead/run.py [--trainlint build/trainlint] [--rounds 7] [--steps 300]

Builds nothing: it takes an already built trainlint binary (default: build/trainlint under the
repository root; libtrainlint_shim.so is found next to it as usual). In one run it alternates three
variants of the same program, train_loop.py next to this file:

    plain     /usr/bin/python3 train_loop.py --steps N --out F
    shim      TRAINLINT run --output /dev/null -- /usr/bin/python3 train_loop.py --steps N --out F
    profiler  /usr/bin/python3 train_loop.py ... --profiler

Each round runs the three once, one after another; the order is rotated every round (plain, shim,
profiler; then shim, profiler, plain; ...) so that no variant always runs first or last.
The program's stdout (a line per step) goes to /dev/null in every variant; the shim's report is
discarded with --output /dev/null. The program times its own steps (time.perf_counter_ns, see
train_loop.py); per run we take the median step time after skipping the first --warmup steps.

The program also records each step's CPU time of its main thread (time.thread_time_ns), which
time spent descheduled on a shared machine does not inflate; both metrics are summarised the same
way. Printed per variant and metric: the median over rounds of those per-round medians, and the
min-max over rounds. Ratios against plain are given two ways, side by side:
  - ratio of medians: median-of-round-medians(variant) / median-of-round-medians(plain);
  - paired: the median over rounds of (variant's round median / plain's round median in the
    same round), which cancels slow drifts of a shared machine between rounds.

glibc malloc: by default (--malloc fixed) every variant runs with MALLOC_MMAP_THRESHOLD_=32 MiB and
MALLOC_TRIM_THRESHOLD_=1 GiB. With glibc's adaptive thresholds this loop's activations (about 2 MB
each) move between mmap'd chunks and a heap that is trimmed back to the kernel, and the number of
page faults per step, and so the step time, depends on what else the process has allocated: the
torch.profiler variant then ran faster than plain (bench/README.md). Fixed thresholds keep the
memory, so the ratios measure the instrumentation; --malloc default measures the untouched program.

--model tiny (with more --steps) runs a step of under a millisecond that is mostly Python and
dispatch overhead: there the per-step microseconds the bootstrap adds (wrapped print, .item(),
DataLoader __next__, optimizer step with its record write, GC callbacks) stand out of the noise.

Also printed, for context only: each variant's wall time per run (start-up, lint, the profiler's
post-processing at exit included), which is not the per-step overhead.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VARIANTS = ("plain", "shim", "profiler")
# glibc malloc with fixed thresholds: see --malloc and bench/README.md.
FIXED_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 30)}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--trainlint", default=os.path.join(ROOT, "build", "trainlint"), help="the trainlint binary")
    p.add_argument("--python", default="/usr/bin/python3", help="the interpreter with torch (Debian's)")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--steps", type=int, default=300, help="optimizer steps per run")
    p.add_argument("--model", choices=("cnn", "tiny"), default="cnn",
                   help="train_loop.py's model; tiny makes the instrumentation's absolute cost per step visible")
    p.add_argument("--warmup", type=int, default=10, help="first steps of each run left out")
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads in the program")
    p.add_argument("--malloc", choices=("fixed", "default"), default="fixed",
                   help="fixed: every variant runs with MALLOC_MMAP_THRESHOLD_=32 MiB and MALLOC_TRIM_THRESHOLD_="
                        "1 GiB; default: glibc's adaptive thresholds, whose page faults swing the step time")
    p.add_argument("--json", help="also write every run's median and the summary here")
    args = p.parse_args()
    # each run's working folder is a temporary one: a relative path given here means this folder
    args.trainlint = os.path.abspath(args.trainlint)
    if os.sep in args.python:
        args.python = os.path.abspath(args.python)
    return args


def command(variant, args, out):
    prog = [args.python, os.path.join(HERE, "train_loop.py"), "--steps", str(args.steps), "--out", out,
            "--threads", str(args.threads), "--model", args.model]
    if variant == "shim":
        return [args.trainlint, "run", "--output", os.devnull, "--"] + prog
    if variant == "profiler":
        return prog + ["--profiler"]
    return prog


def environment(args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    if args.malloc == "fixed":
        env.update(FIXED_MALLOC)
    return env


def run_once(variant, args, tmp):
    out = os.path.join(tmp, "%s.json" % variant)
    if os.path.exists(out):
        os.remove(out)
    t0 = time.perf_counter()
    proc = subprocess.run(command(variant, args, out), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, cwd=tmp, env=environment(args))
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or not os.path.exists(out):
        sys.stderr.write(proc.stderr.decode("utf-8", "replace"))
        sys.exit("%s: exit status %d" % (variant, proc.returncode))
    with open(out) as f:
        data = json.load(f)
    if data["under_trainlint"] != (variant == "shim"):
        sys.exit("%s: the trainlint bootstrap was %sloaded" % (variant, "not " if variant == "shim" else ""))
    if data["malloc_env"] != (FIXED_MALLOC if args.malloc == "fixed" else {}):
        sys.exit("%s: the program saw MALLOC_* = %r" % (variant, data["malloc_env"]))
    steps = data["step_ns"][args.warmup:]
    cpu = data["step_cpu_ns"][args.warmup:]
    if not steps:
        sys.exit("%s: no step left after %d warm-up steps" % (variant, args.warmup))
    return {"wall": statistics.median(steps) / 1e6, "cpu": statistics.median(cpu) / 1e6}, wall


def report(title, med, args):
    """Prints one metric's summary; returns it."""
    summary = {v: statistics.median(med[v]) for v in VARIANTS}
    print("%s, median over %d rounds of each run's median (steps %d..%d of %d):"
          % (title, args.rounds, args.warmup + 1, args.steps, args.steps))
    for v in VARIANTS:
        print("  %-9s %8.3f ms   (rounds: min %.3f, max %.3f)" % (v, summary[v], min(med[v]), max(med[v])))
    ratios = {}
    for v in ("shim", "profiler"):
        of_medians = summary[v] / summary["plain"]
        per_round = [a / b for a, b in zip(med[v], med["plain"])]
        paired = statistics.median(per_round)
        ratios[v] = {"ratio_of_medians": of_medians, "paired_median": paired,
                     "paired_min": min(per_round), "paired_max": max(per_round)}
        print("  %-8s/plain  %.4f (%+.1f%%) ratio of the medians above; %.4f (%+.1f%%) median of the per-round "
              "ratios (rounds: %.3f..%.3f)" % (v, of_medians, 100 * (of_medians - 1), paired, 100 * (paired - 1),
                                              min(per_round), max(per_round)))
    return {"median_ms": summary, "round_medians_ms": med, "ratios": ratios}


def main():
    args = parse_args()
    if not os.access(args.trainlint, os.X_OK):
        sys.exit("no trainlint binary at %s (build it first: ninja -C build trainlint)" % args.trainlint)
    med = {m: {v: [] for v in VARIANTS} for m in ("wall", "cpu")}
    wall = {v: [] for v in VARIANTS}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="trainlint-overhead-") as tmp:
        for r in range(args.rounds):
            order = VARIANTS[r % 3:] + VARIANTS[:r % 3]
            line = []
            for v in order:
                m, w = run_once(v, args, tmp)
                for k in m:
                    med[k][v].append(m[k])
                wall[v].append(w)
                line.append("%s %.3f ms (cpu %.3f)" % (v, m["wall"], m["cpu"]))
            print("round %d/%d: %s" % (r + 1, args.rounds, ", ".join(line)), flush=True)
    total = time.perf_counter() - start

    print()
    result = {"args": vars(args), "run_wall_s": wall}
    result["wall"] = report("step wall time (perf_counter_ns)", med["wall"], args)
    print()
    result["cpu"] = report("step CPU time of the main thread (thread_time_ns)", med["cpu"], args)
    print()
    print("whole run, for context (start-up, lint, profiler post-processing): %s"
          % ", ".join("%s %.1f s" % (v, statistics.median(wall[v])) for v in VARIANTS))
    print("%d runs in %.0f s; model %s; torch threads %d; malloc %s%s; shim report discarded (--output /dev/null); "
          "goal: shim/plain <= 1.02" % (3 * args.rounds, total, args.model, args.threads, args.malloc,
                                        " (%s)" % " ".join("%s=%s" % kv for kv in sorted(FIXED_MALLOC.items()))
                                        if args.malloc == "fixed" else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)

if __name__ == "__main__":
    main()
