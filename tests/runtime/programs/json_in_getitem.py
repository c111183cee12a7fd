"""Samples whose metadata file is read again for every item (TL205).

`__getitem__` opens the same JSON index every time; the cost is the parse in `json.load`, on
the same `with` statement as the flagged `open(...)`.
"""
import json
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


def write_index(folder, n=1500):
    path = os.path.join(folder, "index.json")
    records = [{"id": i, "label": i % 10, "bbox": [i, i + 1, i + 2, i + 3], "tags": ["a", "b"]} for i in range(n)]
    with open(path, "w") as f:
        json.dump({"records": records}, f)
    return path


class IndexedSamples(Dataset):
    def __init__(self, index_path, length=256):
        self.index_path = index_path
        self.length = length

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        with open(self.index_path) as f:
            index = json.load(f)
        label = index["records"][i]["label"]
        return torch.full((32,), float(label)), torch.tensor([float(label)])


def main():
    folder = tempfile.mkdtemp()
    ds = IndexedSamples(write_index(folder))
    loader = DataLoader(ds, batch_size=8, num_workers=0)
    model = nn.Linear(32, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
