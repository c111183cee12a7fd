"""A loop that builds its DataLoader, with workers, for every step (TL107).

Building the loader is cheap; iterating it starts its two worker processes and waits for their
first batch, every step.
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def main(steps=12):
    torch.manual_seed(0)
    ds = TensorDataset(torch.randn(512, 64), torch.randn(512, 1))
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(steps):
        loader = DataLoader(ds, batch_size=64, shuffle=True, num_workers=2)
        x, y = next(iter(loader))
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
