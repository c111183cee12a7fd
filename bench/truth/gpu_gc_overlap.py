"""Bad (GPU): gc.collect() every step of a loop that never waits for the GPU (TL101).

The host queues the step's kernels and then collects while the GPU runs them: only the part of
the collection during which the GPU has nothing left to run costs step time. With --hidden large
enough the GPU's own work is longer than the collection and fixing it saves nothing."""
import argparse
import gc

import torch
import torch.nn as nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--live", type=int, default=300000)
    args = ap.parse_args()
    torch.manual_seed(0)
    dev = torch.device("cuda")
    junk = [{"i": i, "v": [i] * 4} for i in range(args.live)]  # a live heap, as a real program has
    x = torch.randn(4096, 512, device=dev)
    y = torch.randint(0, 10, (4096,), device=dev)
    model = nn.Sequential(nn.Linear(512, args.hidden), nn.ReLU(), nn.Linear(args.hidden, args.hidden), nn.ReLU(),
                          nn.Linear(args.hidden, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for step in range(args.steps):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        gc.collect()
    torch.cuda.synchronize()
    return len(junk)


if __name__ == "__main__":
    main()
