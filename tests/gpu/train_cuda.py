"""A small CUDA training loop with two habits trainlint measures on a GPU: a per-step
gc.collect() and a DataLoader without pinned memory (pageable host-to-device copies).

Run through tests/gpu/run.sh, which builds trainlint and the shim and runs this under
`trainlint run`; the table it prints shows the kernels captured, the GPU idle time attributed to
the gc.collect() site, and the pageable copies."""
import argparse
import gc

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda")
    data = TensorDataset(torch.randn(args.steps * args.batch_size, 3, 32, 32),
                         torch.randint(0, 10, (args.steps * args.batch_size,)))
    loader = DataLoader(data, batch_size=args.batch_size, shuffle=True)  # no workers, no pinned memory
    model = nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    criterion = nn.CrossEntropyLoss()
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)  # from pageable memory: no overlap
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        gc.collect()
    torch.cuda.synchronize()
    print(f"trained {step + 1} steps, last loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
