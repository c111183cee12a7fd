"""Writes a training project of a realistic shape for bench/precommit/run.sh.

Eight tasks, each a package of five modules (dataset, model, config, training script,
evaluation script) that import each other and a shared `common` package (checkpointing,
metrics, distributed set-up, logging): 54 files of templated, runnable-looking PyTorch code,
written with the habits a reviewed code base has (DataLoader workers, pinned memory, periodic
checkpoints and logs, mixed precision). `--change N` then edits N of them the way a commit
would (a hyper-parameter, a new metric line) and prints their paths, one per line.

    python3 make_project.py ROOT            # write the project
    python3 make_project.py ROOT --change 20  # edit 20 files, print their paths
"""
import argparse
import os
import textwrap

TASKS = [
    # name, kind, input shape, classes, width, optimizer
    ("cifar", "image", (3, 32, 32), 10, 64, "SGD"),
    ("flowers", "image", (3, 64, 64), 102, 96, "AdamW"),
    ("xray", "image", (1, 128, 128), 2, 48, "AdamW"),
    ("sentiment", "tokens", (256,), 2, 128, "AdamW"),
    ("topics", "tokens", (512,), 20, 192, "AdamW"),
    ("churn", "tabular", (48,), 2, 256, "Adam"),
    ("prices", "tabular", (96,), 1, 384, "Adam"),
    ("keywords", "audio", (1, 16000), 12, 64, "SGD"),
]

COMMON = {
    "common/__init__.py": '"""Shared training utilities."""\n',
    "common/checkpoint.py": '''
        """Saving and restoring training state."""
        import os

        import torch


        def save_checkpoint(path, model, optimizer, scaler, epoch, step):
            tmp = path + ".tmp"
            torch.save(
                {
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "scaler": scaler.state_dict(),
                    "epoch": epoch,
                    "step": step,
                },
                tmp,
            )
            os.replace(tmp, path)


        def load_checkpoint(path, model, optimizer=None, scaler=None):
            state = torch.load(path, map_location="cpu")
            model.load_state_dict(state["model"])
            if optimizer is not None:
                optimizer.load_state_dict(state["optimizer"])
            if scaler is not None:
                scaler.load_state_dict(state["scaler"])
            return state["epoch"], state["step"]
        ''',
    "common/metrics.py": '''
        """Running metrics kept on the device, read back only when reported."""
        import torch


        class RunningMean:
            def __init__(self, device):
                self.total = torch.zeros((), device=device)
                self.count = 0

            def update(self, value, n=1):
                self.total += value.detach() * n
                self.count += n

            def compute(self):
                return (self.total / max(self.count, 1)).item()


        def accuracy(logits, targets):
            if logits.shape[-1] == 1:
                return ((logits.squeeze(-1) > 0).long() == targets.long()).float().mean()
            return (logits.argmax(-1) == targets).float().mean()
        ''',
    "common/distributed.py": '''
        """torchrun set-up: one process per GPU."""
        import os

        import torch
        import torch.distributed as dist


        def setup():
            if "RANK" not in os.environ:
                return 0, 1, torch.device("cuda" if torch.cuda.is_available() else "cpu")
            dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
            rank = dist.get_rank()
            local_rank = int(os.environ.get("LOCAL_RANK", "0"))
            if torch.cuda.is_available():
                torch.cuda.set_device(local_rank)
                return rank, dist.get_world_size(), torch.device("cuda", local_rank)
            return rank, dist.get_world_size(), torch.device("cpu")


        def is_main(rank):
            return rank == 0


        def cleanup():
            if dist.is_initialized():
                dist.destroy_process_group()
        ''',
    "common/logging_utils.py": '''
        """Line logging for the main process."""
        import logging
        import sys


        def get_logger(name, rank):
            logger = logging.getLogger(name)
            if not logger.handlers:
                handler = logging.StreamHandler(sys.stdout)
                handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
                logger.addHandler(handler)
            logger.setLevel(logging.INFO if rank == 0 else logging.WARNING)
            return logger
        ''',
}

DATASETS = {
    "image": '''
        """{title} images: decoded with torchvision.io, annotations parsed once."""
        import json
        import os

        import torch
        from torch.utils.data import Dataset
        from torchvision.io import ImageReadMode, decode_image, read_file

        from tasks.{name}.config import MEAN, STD


        class {cls}Dataset(Dataset):
            def __init__(self, root, split="train"):
                with open(os.path.join(root, f"{{split}}.json")) as f:
                    records = json.load(f)
                self.paths = [os.path.join(root, r["file"]) for r in records]
                self.labels = [r["label"] for r in records]
                self.mean = torch.tensor(MEAN).view(-1, 1, 1)
                self.std = torch.tensor(STD).view(-1, 1, 1)
                self.mode = ImageReadMode.GRAY if {channels} == 1 else ImageReadMode.RGB

            def __len__(self):
                return len(self.paths)

            def __getitem__(self, index):
                image = decode_image(read_file(self.paths[index]), mode=self.mode)
                image = (image.float() / 255 - self.mean) / self.std
                return image, self.labels[index]
        ''',
    "tokens": '''
        """{title} text, tokenised ahead of time into one tensor file per split."""
        import os

        import torch
        from torch.utils.data import Dataset

        from tasks.{name}.config import MAX_LEN, PAD_ID


        class {cls}Dataset(Dataset):
            def __init__(self, root, split="train"):
                blob = torch.load(os.path.join(root, f"{{split}}.pt"), map_location="cpu")
                self.tokens = blob["tokens"]
                self.labels = blob["labels"]

            def __len__(self):
                return len(self.labels)

            def __getitem__(self, index):
                ids = self.tokens[index][:MAX_LEN]
                if ids.numel() < MAX_LEN:
                    ids = torch.cat([ids, ids.new_full((MAX_LEN - ids.numel(),), PAD_ID)])
                return ids, self.labels[index]
        ''',
    "tabular": '''
        """{title} records: features standardised once, kept as one tensor."""
        import csv
        import os

        import torch
        from torch.utils.data import Dataset


        class {cls}Dataset(Dataset):
            def __init__(self, root, split="train"):
                with open(os.path.join(root, f"{{split}}.csv")) as f:
                    rows = list(csv.reader(f))[1:]
                data = torch.tensor([[float(v) for v in row] for row in rows])
                features, self.targets = data[:, :-1], data[:, -1]
                self.features = (features - features.mean(0)) / features.std(0).clamp_min(1e-6)

            def __len__(self):
                return self.targets.numel()

            def __getitem__(self, index):
                return self.features[index], self.targets[index]
        ''',
    "audio": '''
        """{title} clips: 1 s of 16 kHz audio, loaded from one memory-mapped array per split."""
        import os

        import numpy as np
        import torch
        from torch.utils.data import Dataset


        class {cls}Dataset(Dataset):
            def __init__(self, root, split="train"):
                self.clips = np.load(os.path.join(root, f"{{split}}_clips.npy"), mmap_mode="r")
                self.labels = np.load(os.path.join(root, f"{{split}}_labels.npy"))

            def __len__(self):
                return len(self.labels)

            def __getitem__(self, index):
                clip = torch.from_numpy(np.array(self.clips[index], dtype=np.float32))
                return clip.unsqueeze(0), int(self.labels[index])
        ''',
}

MODELS = {
    "image": '''
        """A small residual CNN for {title}."""
        import torch
        import torch.nn as nn


        class Block(nn.Module):
            def __init__(self, channels):
                super().__init__()
                self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
                self.bn1 = nn.BatchNorm2d(channels)
                self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
                self.bn2 = nn.BatchNorm2d(channels)

            def forward(self, x):
                y = torch.relu(self.bn1(self.conv1(x)))
                return torch.relu(x + self.bn2(self.conv2(y)))


        class {cls}Net(nn.Module):
            def __init__(self, num_classes={classes}, width={width}):
                super().__init__()
                self.stem = nn.Sequential(nn.Conv2d({channels}, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
                self.blocks = nn.Sequential(Block(width), nn.MaxPool2d(2), Block(width), nn.MaxPool2d(2), Block(width))
                self.head = nn.Linear(width, num_classes)

            def forward(self, x):
                x = self.blocks(self.stem(x))
                return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))
        ''',
    "tokens": '''
        """A transformer encoder classifier for {title}."""
        import torch
        import torch.nn as nn

        from tasks.{name}.config import MAX_LEN, PAD_ID, VOCAB


        class {cls}Net(nn.Module):
            def __init__(self, num_classes={classes}, width={width}, layers=2, heads=4):
                super().__init__()
                self.embed = nn.Embedding(VOCAB, width, padding_idx=PAD_ID)
                self.pos = nn.Parameter(torch.zeros(1, MAX_LEN, width))
                layer = nn.TransformerEncoderLayer(width, heads, 4 * width, batch_first=True)
                self.encoder = nn.TransformerEncoder(layer, layers)
                self.head = nn.Linear(width, num_classes)

            def forward(self, ids):
                mask = ids == PAD_ID
                x = self.encoder(self.embed(ids) + self.pos[:, : ids.shape[1]], src_key_padding_mask=mask)
                x = x.masked_fill(mask.unsqueeze(-1), 0).sum(1) / (~mask).sum(1, keepdim=True).clamp_min(1)
                return self.head(x)
        ''',
    "tabular": '''
        """An MLP with dropout for {title}."""
        import torch.nn as nn


        class {cls}Net(nn.Module):
            def __init__(self, in_features={features}, num_classes={classes}, width={width}):
                super().__init__()
                self.layers = nn.Sequential(
                    nn.Linear(in_features, width), nn.ReLU(), nn.Dropout(0.1),
                    nn.Linear(width, width), nn.ReLU(), nn.Dropout(0.1),
                    nn.Linear(width, num_classes),
                )

            def forward(self, x):
                return self.layers(x)
        ''',
    "audio": '''
        """A 1-D convolutional keyword spotter for {title}."""
        import torch
        import torch.nn as nn


        class {cls}Net(nn.Module):
            def __init__(self, num_classes={classes}, width={width}):
                super().__init__()
                self.features = nn.Sequential(
                    nn.Conv1d(1, width, 80, stride=16), nn.BatchNorm1d(width), nn.ReLU(), nn.MaxPool1d(4),
                    nn.Conv1d(width, width, 3), nn.BatchNorm1d(width), nn.ReLU(), nn.MaxPool1d(4),
                    nn.Conv1d(width, 2 * width, 3), nn.BatchNorm1d(2 * width), nn.ReLU(),
                )
                self.head = nn.Linear(2 * width, num_classes)

            def forward(self, x):
                return self.head(torch.flatten(nn.functional.adaptive_avg_pool1d(self.features(x), 1), 1))
        ''',
}

CONFIG = '''
    """Hyper-parameters of the {title} task."""
    EPOCHS = 30
    BATCH_SIZE = {batch}
    LR = {lr}
    WEIGHT_DECAY = 0.05
    WORKERS = 8
    LOG_EVERY = 50
    CKPT_EVERY = 1000
    MEAN = {mean}
    STD = {std}
    MAX_LEN = {max_len}
    VOCAB = 30000
    PAD_ID = 0
    '''

TRAIN = '''
    """Train the {title} model: `torchrun --nproc-per-node 4 -m tasks.{name}.train --data DIR`."""
    import argparse
    import os

    import torch
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader
    from torch.utils.data.distributed import DistributedSampler

    from common.checkpoint import load_checkpoint, save_checkpoint
    from common.distributed import cleanup, is_main, setup
    from common.logging_utils import get_logger
    from common.metrics import RunningMean, accuracy
    from tasks.{name}.config import BATCH_SIZE, CKPT_EVERY, EPOCHS, LOG_EVERY, LR, WEIGHT_DECAY, WORKERS
    from tasks.{name}.dataset import {cls}Dataset
    from tasks.{name}.evaluate import evaluate
    from tasks.{name}.model import {cls}Net


    def parse_args():
        parser = argparse.ArgumentParser(description=__doc__)
        parser.add_argument("--data", required=True)
        parser.add_argument("--out", default="runs/{name}")
        parser.add_argument("--epochs", type=int, default=EPOCHS)
        parser.add_argument("--resume", action="store_true")
        return parser.parse_args()


    def main():
        args = parse_args()
        rank, world, device = setup()
        log = get_logger("{name}", rank)
        torch.backends.cudnn.benchmark = True
        use_amp = device.type == "cuda"

        train_set = {cls}Dataset(args.data, "train")
        sampler = DistributedSampler(train_set) if world > 1 else None
        loader = DataLoader(
            train_set,
            batch_size=BATCH_SIZE,
            shuffle=sampler is None,
            sampler=sampler,
            num_workers=WORKERS,
            pin_memory=True,
            persistent_workers=True,
            drop_last=True,
        )
        model = {cls}Net().to(device)
        if world > 1:
            model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
        optimizer = torch.optim.{optimizer}(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
        scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, LR, total_steps=args.epochs * len(loader))
        criterion = {criterion}
        scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
        os.makedirs(args.out, exist_ok=True)
        ckpt = os.path.join(args.out, "last.pt")
        start_epoch, step = 0, 0
        if args.resume and os.path.exists(ckpt):
            start_epoch, step = load_checkpoint(ckpt, model, optimizer, scaler)

        for epoch in range(start_epoch, args.epochs):
            if sampler is not None:
                sampler.set_epoch(epoch)
            model.train()
            loss_mean, acc_mean = RunningMean(device), RunningMean(device)
            for inputs, targets in loader:
                inputs = inputs.to(device, non_blocking=True)
                targets = targets.to(device, non_blocking=True)
                optimizer.zero_grad(set_to_none=True)
                with torch.autocast(device_type=device.type, enabled=use_amp):
                    logits = model(inputs)
                    loss = criterion({loss_args})
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                scheduler.step()
                loss_mean.update(loss, inputs.shape[0])
                acc_mean.update(accuracy(logits, targets), inputs.shape[0])
                step += 1
                if step % LOG_EVERY == 0 and is_main(rank):
                    log.info("epoch %d step %d loss %.4f acc %.3f", epoch, step, loss_mean.compute(), acc_mean.compute())
                if step % CKPT_EVERY == 0 and is_main(rank):
                    save_checkpoint(ckpt, model, optimizer, scaler, epoch, step)
            if is_main(rank):
                val = evaluate(model, args.data, device)
                log.info("epoch %d: validation accuracy %.3f", epoch, val)
                save_checkpoint(ckpt, model, optimizer, scaler, epoch + 1, step)
        cleanup()


    if __name__ == "__main__":
        main()
    '''

EVALUATE = '''
    """Validation of the {title} model."""
    import torch
    from torch.utils.data import DataLoader

    from common.metrics import RunningMean, accuracy
    from tasks.{name}.config import BATCH_SIZE, WORKERS
    from tasks.{name}.dataset import {cls}Dataset


    @torch.no_grad()
    def evaluate(model, root, device):
        loader = DataLoader(
            {cls}Dataset(root, "val"),
            batch_size=2 * BATCH_SIZE,
            num_workers=WORKERS,
            pin_memory=True,
            persistent_workers=True,
        )
        model.eval()
        acc = RunningMean(device)
        for inputs, targets in loader:
            inputs = inputs.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
            with torch.autocast(device_type=device.type, enabled=device.type == "cuda"):
                logits = model(inputs)
            acc.update(accuracy(logits, targets), inputs.shape[0])
        return acc.compute()
    '''


def files():
    out = {}
    for path, text in COMMON.items():
        out[path] = textwrap.dedent(text).lstrip("\n")
    out["tasks/__init__.py"] = '"""One package per training task."""\n'
    for name, kind, shape, classes, width, optimizer in TASKS:
        channels = shape[0] if kind in ("image", "audio") else 1
        regression = classes == 1
        v = dict(
            name=name,
            title=name.replace("_", " ").capitalize(),
            cls="".join(p.capitalize() for p in name.split("_")),
            kind=kind,
            classes=classes,
            width=width,
            channels=channels,
            features=shape[0],
            optimizer=optimizer,
            batch={"image": 128, "tokens": 32, "tabular": 512, "audio": 64}[kind],
            lr={"SGD": 0.1, "AdamW": 3e-4, "Adam": 1e-3}[optimizer],
            mean=[0.5] * channels,
            std=[0.25] * channels,
            max_len=shape[0] if kind == "tokens" else 0,
            criterion="nn.MSELoss()" if regression else "nn.CrossEntropyLoss(label_smoothing=0.1)",
            loss_args="logits.squeeze(-1), targets.float()" if regression else "logits, targets",
        )
        base = f"tasks/{name}"
        out[f"{base}/__init__.py"] = f'"""The {v["title"]} task."""\n'
        out[f"{base}/config.py"] = textwrap.dedent(CONFIG).lstrip("\n").format(**v)
        out[f"{base}/dataset.py"] = textwrap.dedent(DATASETS[kind]).lstrip("\n").format(**v)
        out[f"{base}/model.py"] = textwrap.dedent(MODELS[kind]).lstrip("\n").format(**v)
        out[f"{base}/train.py"] = textwrap.dedent(TRAIN).lstrip("\n").format(**v)
        out[f"{base}/evaluate.py"] = textwrap.dedent(EVALUATE).lstrip("\n").format(**v)
    return out


def change(root, n):
    """Edits n files the way a commit touching several tasks would; returns their paths."""
    order = []
    for name, *_ in TASKS:
        for part in ("train.py", "config.py", "model.py", "dataset.py", "evaluate.py"):
            order.append(f"tasks/{name}/{part}")
    changed = order[:n]
    for rel in changed:
        path = os.path.join(root, rel)
        with open(path) as f:
            text = f.read()
        if rel.endswith("config.py"):
            text = text.replace("WORKERS = 8", "WORKERS = 12").replace("LOG_EVERY = 50", "LOG_EVERY = 100")
        else:
            text += "\n\n# Reviewed for the 2.x data pipeline: no behaviour change.\n"
        with open(path, "w") as f:
            f.write(text)
    return changed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("--change", type=int, default=0, help="edit this many files and print their paths")
    args = parser.parse_args()
    if args.change:
        for rel in change(args.root, args.change):
            print(rel)
        return
    for rel, text in files().items():
        path = os.path.join(args.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
