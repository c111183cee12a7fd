"""A small GAN: each iteration steps the discriminator's optimizer, then the generator's.

It prints `begin K` to stdout as iteration K starts.
"""
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    torch.manual_seed(0)
    real = TensorDataset(torch.randn(512, 16))
    loader = DataLoader(real, batch_size=32, shuffle=True)
    gen = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))
    disc = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4)
    opt_d = torch.optim.Adam(disc.parameters(), lr=2e-4)
    bce = nn.BCEWithLogitsLoss()
    for k, (x,) in enumerate(loader, 1):
        sys.stdout.write("begin %d\n" % k)
        sys.stdout.flush()
        z = torch.randn(x.shape[0], 8)
        fake = gen(z)
        d_loss = bce(disc(x), torch.ones(x.shape[0], 1)) + bce(disc(fake.detach()), torch.zeros(x.shape[0], 1))
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = bce(disc(fake), torch.ones(x.shape[0], 1))
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()


if __name__ == "__main__":
    main()
