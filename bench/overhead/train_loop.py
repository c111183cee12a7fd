"""A small, deterministic CPU training loop that times its own steps (bench/overhead).

    /usr/bin/python3 bench/overhead/train_loop.py --steps 300 --out steps.json [--profiler]

A small CNN (two conv layers and a linear head, about 25 k parameters) trains on a fixed
synthetic set of 3x32x32 "images" (seeded, generated once in memory) through a DataLoader with
num_workers=0, batch 32, shuffled with a seeded generator: every step fetches and collates a batch,
runs forward, backward and an SGD step with momentum (about 11 ms on one core of the 2-core
development machine). `--model tiny` shrinks the same network to 1-channel convolutions on 3x8x8
inputs, batch 4: a step of under 1 ms that is mostly Python and dispatch overhead, where the
instrumentation's absolute cost per step stands out. Like much real code it also has habits that
trainlint flags, so that `trainlint run` has sites to time on every step:

- `print(f"... {loss.item():.4f}")` on every step: TL106 (log per step) at `print`, and TL105
  (host sync per step) at `.item()`, because the script picks `cuda` when one is available;
- the DataLoader without workers: TL201, whose probe times every `__next__` (data wait), and
  without pinned memory: TL202 (not measurable without a GPU).
trainlint also reports TL501/TL502 (no cudnn.benchmark, no mixed precision), which have no probe.

The bootstrap also times every optimizer step and listens to automatic GC pauses (TL902).
Run the program's stdout to /dev/null when benchmarking (run.py does).

Each step's wall time is measured by the program itself with time.perf_counter_ns(): from the end
of the previous step (for step 1: just before the first `iter(loader)`) to the end of this one, so
it covers the batch fetch, forward, backward, optimizer step and the per-step print. Beside it,
the main thread's CPU time over the same interval (time.thread_time_ns(); with one intra-op thread
torch computes in the calling thread), which time the thread spends descheduled does not inflate
(on a virtual machine, time the host takes away is invisible to it: there both agree closely).
The lists of step times (nanoseconds, `step_ns` and `step_cpu_ns`) are written as JSON to --out,
with the run's parameters, whether the trainlint bootstrap was loaded in this interpreter
(`under_trainlint`) and the glibc MALLOC_* variables it saw (`malloc_env`): checks for run.py.

--profiler wraps the whole loop in `torch.profiler.profile(activities=[ProfilerActivity.CPU])`
with no schedule: every step is recorded (the tutorial's plain usage; default options, so no
shapes, no stacks, no memory), and `prof.step()` is called at the end of every step, inside the
timed interval, to mark step boundaries as a scheduled profile would. The profiler's
post-processing when it exits happens after the last step is timed and is not part of any step.

torch runs on one intra-op thread by default (--threads) so that the two shared cores of a small
machine do not turn thread scheduling into noise.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    p = argparse.ArgumentParser(description="time the steps of a small CPU training loop")
    p.add_argument("--steps", type=int, default=300, help="optimizer steps to run")
    p.add_argument("--out", required=True, help="write the step times (JSON) here")
    p.add_argument("--profiler", action="store_true", help="run the loop under torch.profiler (CPU)")
    p.add_argument("--model", choices=("cnn", "tiny"), default="cnn",
                   help="tiny: a 4x3x8x8 batch through a 1-channel conv, so that a step is mostly Python and "
                        "dispatch overhead and the instrumentation's absolute cost per step shows")
    p.add_argument("--batch-size", type=int, default=None, help="default: 32 (cnn), 4 (tiny)")
    p.add_argument("--samples", type=int, default=2048, help="size of the synthetic data set")
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads (0: torch's default)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


class SmallCNN(nn.Module):
    def __init__(self, classes=10, tiny=False):
        super().__init__()
        c1, c2, size = (1, 1, 8) if tiny else (16, 32, 32)
        self.conv1 = nn.Conv2d(3, c1, 3, padding=1)
        self.conv2 = nn.Conv2d(c1, c2, 3, padding=1)
        self.head = nn.Linear(c2 * (size // 4) ** 2, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.head(torch.flatten(x, 1))


def make_data(samples, size, seed):
    gen = torch.Generator().manual_seed(seed)
    images = torch.randn(samples, 3, size, size, generator=gen)
    labels = torch.randint(0, 10, (samples,), generator=gen)
    return TensorDataset(images, labels)


def train(args, model, optimizer, loader, device, prof=None):
    """Runs args.steps optimizer steps; returns the step times in nanoseconds: wall, and the main
    thread's CPU time."""
    times, cpu_times = [], []
    step = 0
    t_prev, c_prev = time.perf_counter_ns(), time.thread_time_ns()
    while step < args.steps:
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
            print(f"step {step}: loss {loss.item():.4f}")
            if prof is not None:
                prof.step()
            t, c = time.perf_counter_ns(), time.thread_time_ns()
            times.append(t - t_prev)
            cpu_times.append(c - c_prev)
            t_prev, c_prev = t, c
            if step >= args.steps:
                break
    return times, cpu_times


def main():
    args = parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tiny = args.model == "tiny"
    if args.batch_size is None:
        args.batch_size = 4 if tiny else 32
    model = SmallCNN(tiny=tiny).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = make_data(args.samples, 8 if tiny else 32, args.seed)
    loader = DataLoader(data, batch_size=args.batch_size, shuffle=True, num_workers=0,
                        generator=torch.Generator().manual_seed(args.seed), drop_last=True)

    if args.profiler:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as prof:
            times, cpu_times = train(args, model, optimizer, loader, device, prof)
    else:
        times, cpu_times = train(args, model, optimizer, loader, device)

    with open(args.out, "w") as f:
        json.dump({"profiler": args.profiler, "model": args.model, "steps": len(times),
                   "threads": torch.get_num_threads(), "batch_size": args.batch_size, "device": str(device),
                   "torch": torch.__version__,
                   "under_trainlint": "trainlint_boot" in sys.modules,
                   "malloc_env": {k: v for k, v in os.environ.items() if k.startswith("MALLOC_")},
                   "step_ns": times, "step_cpu_ns": cpu_times}, f)


if __name__ == "__main__":
    main()
