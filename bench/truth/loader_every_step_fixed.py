"""Fixed twin of loader_every_step.py: one DataLoader, built before the loop, iterated across it."""
import argparse
import itertools

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    ds = TensorDataset(torch.randn(2048, 128), torch.randn(2048, 1))
    model = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(ds, batch_size=64, shuffle=True, num_workers=2, persistent_workers=True)
    batches = itertools.chain.from_iterable(itertools.repeat(loader))
    for step in range(args.steps):
        x, y = next(batches)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
