"""The training of train_bad.py, done right.

The same synthetic dataset, model and optimizer, with the habits fixed:
annotations are parsed once in the Dataset's __init__, images are decoded with
torchvision.io instead of PIL, the DataLoaders use persistent worker processes
and pinned memory, the model runs on a single device (use
DistributedDataParallel with torchrun for several GPUs), checkpoints, sample
images and log lines are written periodically, and nothing calls gc.collect().
trainlint should report nothing here.

    python3 examples/train_good.py --epochs 1
"""
import argparse
import json
import os
import shutil
import tempfile

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, random_split
from torchvision.io import ImageReadMode, decode_image, read_file, write_png
from torchvision.utils import save_image

CLASSES = ["red", "green", "blue", "gray"]
MEAN = [0.5, 0.5, 0.5]
STD = [0.25, 0.25, 0.25]


def parse_args():
    parser = argparse.ArgumentParser(description="train a small CNN")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--steps", type=int, default=0, help="stop after this many steps (0: no limit)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--workers", type=int, default=2, help="DataLoader worker processes (at least 1)")
    parser.add_argument("--images-per-class", type=int, default=12)
    parser.add_argument("--image-size", type=int, default=32)
    parser.add_argument("--log-every", type=int, default=2)
    parser.add_argument("--ckpt-every", type=int, default=4)
    parser.add_argument("--sample-every", type=int, default=4)
    args = parser.parse_args()
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    return args


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
        # Parse the annotations once; __getitem__ only reads the selected image.
        with open(ann_file) as f:
            records = json.load(f)["images"]
        self.paths = [os.path.join(root, r["file_name"]) for r in records]
        self.labels = [r["label"] for r in records]
        self.mean = torch.tensor(MEAN).view(3, 1, 1)
        self.std = torch.tensor(STD).view(3, 1, 1)

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        image = decode_image(read_file(self.paths[index]), mode=ImageReadMode.RGB)
        image = (image.float() / 255 - self.mean) / self.std
        return image, self.labels[index]


class SmallCNN(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1, bias=False),
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1, bias=False),
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


def make_grad_scaler(device, enabled):
    try:
        from torch.amp import GradScaler  # torch >= 2.3

        return GradScaler(device.type, enabled=enabled)
    except ImportError:
        from torch.cuda.amp import GradScaler

        return GradScaler(enabled=enabled)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = torch.zeros((), dtype=torch.long, device=device)
    for images, labels in loader:
        images = images.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        correct += (model(images).argmax(1) == labels).sum()
    return correct.item() / len(loader.dataset)


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cudnn.benchmark = True
    use_amp = device.type == "cuda"
    workdir = tempfile.mkdtemp(prefix="trainlint-good-")
    try:
        ann_file = make_synthetic_dataset(workdir, args.images_per_class, args.image_size)
        dataset = AnnotatedImages(workdir, ann_file)
        n_val = len(dataset) // 4
        train_set, val_set = random_split(
            dataset, [len(dataset) - n_val, n_val], generator=torch.Generator().manual_seed(0)
        )
        train_loader = DataLoader(
            train_set,
            batch_size=args.batch_size,
            shuffle=True,
            num_workers=args.workers,
            pin_memory=True,
            persistent_workers=True,
        )
        val_loader = DataLoader(
            val_set,
            batch_size=2 * args.batch_size,
            num_workers=args.workers,
            pin_memory=True,
            persistent_workers=True,
        )

        model = SmallCNN(len(CLASSES)).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
        criterion = nn.CrossEntropyLoss()
        scaler = make_grad_scaler(device, enabled=use_amp)
        ckpt_path = os.path.join(workdir, "checkpoint.pt")

        step = 0
        for epoch in range(args.epochs):
            model.train()
            running_loss = torch.zeros((), device=device)
            for i, (images, labels) in enumerate(train_loader):
                images = images.to(device, non_blocking=True)
                labels = labels.to(device, non_blocking=True)
                optimizer.zero_grad(set_to_none=True)
                with torch.autocast(device_type=device.type, enabled=use_amp):
                    loss = criterion(model(images), labels)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                running_loss += loss.detach()

                if step % args.log_every == 0:
                    print(f"epoch {epoch} step {step} loss {running_loss.item() / (i + 1):.4f}")
                if step % args.sample_every == 0:
                    save_image(images, os.path.join(workdir, f"batch_{step:05d}.png"), normalize=True)
                if step % args.ckpt_every == 0:
                    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step},
                               ckpt_path)

                step += 1
                if args.steps and step >= args.steps:
                    break
            accuracy = evaluate(model, val_loader, device)
            print(f"epoch {epoch}: val accuracy {accuracy:.3f}")
            if args.steps and step >= args.steps:
                break

        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, ckpt_path)
        state = torch.load(ckpt_path, map_location="cpu")
        SmallCNN(len(CLASSES)).load_state_dict(state["model"])
        print(f"done: {step} steps, checkpoint of {os.path.getsize(ckpt_path)} bytes")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
