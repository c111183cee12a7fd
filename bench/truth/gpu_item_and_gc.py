"""Bad (GPU): the loss read with .item() every step (TL105), then gc.collect() (TL101).

.item() waits for the GPU to finish the step: the time it blocks is the GPU's own work, which a
fix does not remove. The collection that follows runs while the GPU has nothing queued: all of it
is step time."""
import argparse
import gc

import torch
import torch.nn as nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=150)
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
    total = 0.0
    for step in range(args.steps):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
        gc.collect()
    print(f"mean loss {total / args.steps:.4f}")
    return len(junk)


if __name__ == "__main__":
    main()
