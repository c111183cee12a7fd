"""Fixed twin of model_every_step.py: the feature extractor is built once, before the loop."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class FeatureNet(nn.Module):
    def __init__(self, width=512, depth=6):
        super().__init__()
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.ReLU()]
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        return self.body(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    data = TensorDataset(torch.randn(64 * args.steps, 512), torch.randn(64 * args.steps, 1))
    loader = DataLoader(data, batch_size=64)
    head = nn.Linear(512, 1)
    opt = torch.optim.SGD(head.parameters(), lr=0.01)
    features = FeatureNet()
    for x, y in loader:
        with torch.no_grad():
            f = features(x)
        loss = nn.functional.mse_loss(head(f), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
