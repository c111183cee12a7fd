"""Fixed twin of gc_and_checkpoint.py: no per-step collection, one checkpoint at the end."""
import argparse
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    junk = [{"i": i, "v": [i] * 4} for i in range(150000)]  # a live heap, as a real program has
    ds = TensorDataset(torch.randn(32 * args.steps, 128), torch.randint(0, 10, (32 * args.steps,)))
    loader = DataLoader(ds, batch_size=32)
    # a step of tens of ms: at about 1 ms the fixed twin's own step moved by up to 70% between runs
    model = nn.Sequential(nn.Linear(128, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    ckpt = os.path.join(tempfile.mkdtemp(), "last.pt")
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    torch.save(model.state_dict(), ckpt)
    return len(junk)


if __name__ == "__main__":
    main()
