"""A small image classifier trained the slow way.

Every habit from the field reports in one script: a per-step gc.collect(), a
checkpoint and a sample image written every iteration, a DataLoader without
workers or pinned memory, nn.DataParallel, and a Dataset that re-reads its
annotation file and decodes with PIL for every sample. Lines ending in a
``# TLxxx`` comment are the findings trainlint is expected to report there.

It trains on a synthetic dataset (a few dozen PNG files written to a temporary
directory) and runs on a CPU in a few seconds:

    python3 examples/train_bad.py --epochs 1

The same training done right is in train_good.py.
"""
import argparse
import gc
import json
import os
import shutil
import tempfile

import torch
import torch.nn as nn
import torchvision
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms
from torchvision.io import write_png

CLASSES = ["red", "green", "blue", "gray"]
MEAN = [0.5, 0.5, 0.5]
STD = [0.25, 0.25, 0.25]


def parse_args():
    parser = argparse.ArgumentParser(description="train a small CNN (slowly)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--steps", type=int, default=0, help="stop after this many steps (0: no limit)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--images-per-class", type=int, default=12)
    parser.add_argument("--image-size", type=int, default=32)
    return parser.parse_args()


def make_synthetic_dataset(root, images_per_class, size, seed=0):
    """Write noisy, tinted PNG images and an annotations.json describing them."""
    gen = torch.Generator().manual_seed(seed)
    tints = {"red": (1.0, 0.3, 0.3), "green": (0.3, 1.0, 0.3), "blue": (0.3, 0.3, 1.0), "gray": (0.6, 0.6, 0.6)}
    records = []
    for label, name in enumerate(CLASSES):
        tint = torch.tensor(tints[name]).view(3, 1, 1)
        for i in range(images_per_class):
            noise = torch.rand(3, size, size, generator=gen)
            pixels = (255 * (0.6 * tint + 0.4 * noise)).clamp(0, 255).to(torch.uint8)
            file_name = f"{name}_{i:03d}.png"
            write_png(pixels, os.path.join(root, file_name))
            records.append({"file_name": file_name, "label": label})
    ann_file = os.path.join(root, "annotations.json")
    with open(ann_file, "w") as f:
        json.dump({"classes": CLASSES, "images": records}, f)
    return ann_file


class AnnotatedImages(Dataset):
    def __init__(self, root, ann_file):
        self.root = root
        self.ann_file = ann_file
        self.transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize(MEAN, STD)])
        with open(ann_file) as f:
            self.length = len(json.load(f)["images"])

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        with open(self.ann_file) as f:  # TL205
            annotations = json.load(f)
        record = annotations["images"][index]
        image = Image.open(os.path.join(self.root, record["file_name"])).convert("RGB")  # TL204
        return self.transform(image), record["label"]


class SmallCNN(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.BatchNorm2d(32),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
        )
        # a head of a realistic size: its checkpoint is a few MB, as a real model's would be larger
        self.classifier = nn.Sequential(
            nn.Linear(32, 512), nn.ReLU(inplace=True), nn.Linear(512, 512), nn.ReLU(inplace=True), nn.Linear(512, num_classes)
        )

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def evaluate(model, val_loader, criterion, device):
    model.eval()
    total = 0.0
    for images, labels in val_loader:
        images = images.to(device)
        labels.to(device)  # TL401
        logits = model(images)  # TL304
        total += criterion(logits, labels.to(device)).item()  # TL105
    model.train()
    return total / max(1, len(val_loader))


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    workdir = tempfile.mkdtemp(prefix="trainlint-bad-")
    try:
        ann_file = make_synthetic_dataset(workdir, args.images_per_class, args.image_size)
        dataset = AnnotatedImages(workdir, ann_file)
        loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True)  # TL201 TL202
        val_loader = DataLoader(dataset, batch_size=args.batch_size, num_workers=2)  # TL202 TL203

        model = SmallCNN(len(CLASSES))
        model = nn.DataParallel(model)  # TL301
        model = model.to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
        criterion = nn.CrossEntropyLoss()
        ckpt_path = os.path.join(workdir, "checkpoint.pt")
        sample_path = os.path.join(workdir, "batch.png")

        step = 0
        for epoch in range(args.epochs):
            model.train()
            for i, (images, labels) in enumerate(loader):
                images, labels = images.to(device), labels.to(device)
                optimizer.zero_grad(set_to_none=False)  # TL503
                noise = torch.randn(images.shape).to(device)  # TL305
                loss = criterion(model(images + 0.01 * noise), labels)
                loss.backward()  # TL501 TL502
                optimizer.step()
                torch.cuda.empty_cache()  # TL102

                print(f"epoch {epoch} step {i} loss {loss.item():.4f}")  # TL105 TL106
                torchvision.utils.save_image(images, sample_path, normalize=True)  # TL104
                torch.save(model.state_dict(), ckpt_path)  # TL103 TL404
                gc.collect()  # TL101

                step += 1
                if args.steps and step >= args.steps:
                    break
            if args.steps and step >= args.steps:
                break
            print(f"epoch {epoch}: validation loss {evaluate(model, val_loader, criterion, device):.4f}")
        resumed = torch.load(os.environ.get("RESUME_FROM", ckpt_path))  # TL402
        print(f"done: {step} steps, checkpoint of {os.path.getsize(ckpt_path)} bytes")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
