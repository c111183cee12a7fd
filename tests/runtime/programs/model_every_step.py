"""A regression model whose feature extractor is rebuilt inside the training loop (TL107).

The extractor is a class of this script, so at run time it is `__main__.FeatureNet`.
"""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class FeatureNet(nn.Module):
    def __init__(self, width=256, depth=4):
        super().__init__()
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.ReLU()]
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        return self.body(x)


class Head(nn.Module):
    def __init__(self, width=256):
        super().__init__()
        self.out = nn.Linear(width, 1)

    def forward(self, feats):
        return self.out(feats)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(1024, 256), torch.randn(1024, 1))
    loader = DataLoader(data, batch_size=64, shuffle=True)
    head = Head()
    opt = torch.optim.SGD(head.parameters(), lr=0.01)
    for epoch in range(args.epochs):
        for x, y in loader:
            features = FeatureNet()  # rebuilt every step: its layers are initialised again each time
            with torch.no_grad():
                f = features(x)
            loss = nn.functional.mse_loss(head(f), y)
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    main()
