#!/usr/bin/env python3
"""LeNet-5 (models/builtin/lenet5.json) trained in PyTorch with pcnn's default recipe, under four
weight/bias initialisations, to tell whether initialisation explains an accuracy gap between
pcnn and PyTorch. A comparison tool for the GPU machine (python3 + torch); runs on the CPU too.

The recipe, as `pcnn train` does it by default (apps/pcnn/train_command.cpp, train/):
  Adam, lr 2e-3, betas (0.9, 0.999), eps 1e-8, no weight decay; lr x 0.75 after each epoch;
  batch 64, 10 epochs, a fresh shuffle each epoch and the last partial batch dropped; mean
  softmax cross-entropy; inputs x = (pixel/255 - mean) / std with the mean and (population)
  standard deviation of all training pixels; no augmentation; float32 (TF32 off).
Initialisations, each run with seeds 1, 2, 3 (--seeds). A seed fixes the data order, the same for
every initialisation, and PyTorch's default draws, so torch and torch-w+zero-b differ only in the
biases, and so do pcnn and pcnn-w+torch-b:
  torch           nn.Conv2d/nn.Linear defaults: weights and biases U(-1/sqrt(fan_in), +)
  pcnn            pcnn's (layers/init.cpp, models/model.cpp): Kaiming-normal, std sqrt(2/fan_in),
                  for a layer followed by ReLU, else Xavier-uniform, bound sqrt(6/(fan_in +
                  fan_out)) (here the last dense layer); biases 0
  pcnn-w+torch-b  pcnn's weights, PyTorch's default biases
  torch-w+zero-b  PyTorch's default weights, biases 0

Usage: init_compare.py IDX_DIR [--epochs N] [--device cuda|cpu] [--seeds 1,2,3] [--keep-last]
IDX_DIR holds the four uncompressed MNIST IDX files (scripts/device/digits_idx.py writes them).
--keep-last trains on the last partial batch too (DataLoader's default) instead of dropping it.
"""
import argparse
import os
import statistics
import struct
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before CUDA starts: determinism
import torch  # noqa: E402
from torch import nn  # noqa: E402

INITS = ["torch", "pcnn", "pcnn-w+torch-b", "torch-w+zero-b"]


def read_idx(path):
    with open(path, "rb") as f:
        data = f.read()
    magic, count = struct.unpack(">II", data[:8])
    if magic == 0x803:
        rows, cols = struct.unpack(">II", data[8:16])
        pixels = torch.frombuffer(bytearray(data[16:]), dtype=torch.uint8)
        return pixels.reshape(count, 1, rows, cols)
    assert magic == 0x801, f"{path}: not an IDX file"
    return torch.frombuffer(bytearray(data[8:]), dtype=torch.uint8).long()


def load(folder, device):
    def pair(prefix):
        return (read_idx(os.path.join(folder, prefix + "-images-idx3-ubyte")),
                read_idx(os.path.join(folder, prefix + "-labels-idx1-ubyte")))
    (xtr, ytr), (xte, yte) = pair("train"), pair("t10k")
    # pcnn's normalisation (data/dataset.cpp: normalization_of): mean and population standard
    # deviation of every training pixel as value/255, in double; then float.
    p = xtr.double() / 255.0
    mean = p.mean().item()
    std = max(1e-12, (p * p).mean().item() - mean * mean) ** 0.5
    def norm(x):
        return ((x.float() * (1.0 / 255.0) - mean) * (1.0 / std)).to(device)
    return norm(xtr), ytr.to(device), norm(xte), yte.to(device), (mean, std)


def lenet5():
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(),
        nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, 10))


def make_model(init, seed):
    torch.manual_seed(seed)
    model = lenet5()  # PyTorch's default initialisation
    layers = list(model)
    for i, m in enumerate(layers):
        if not isinstance(m, (nn.Conv2d, nn.Linear)):
            continue
        with torch.no_grad():
            if init in ("pcnn", "pcnn-w+torch-b"):
                relu_next = i + 1 < len(layers) and isinstance(layers[i + 1], nn.ReLU)
                if relu_next:  # std sqrt(2 / fan_in), fan_in = in_channels * k * k or in
                    nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
                else:  # bound sqrt(6 / (fan_in + fan_out)), conv fan_out = out_channels * k * k
                    nn.init.xavier_uniform_(m.weight)
            if init in ("pcnn", "torch-w+zero-b"):
                m.bias.zero_()
    return model


def evaluate(model, x, y):
    model.eval()
    with torch.no_grad():
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y).item()
        acc = (logits.argmax(1) == y).float().mean().item()
    model.train()
    return acc, loss


def train(init, seed, data, args):
    xtr, ytr, xte, yte, _ = data
    model = make_model(init, seed).to(args.device)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3, betas=(0.9, 0.999), eps=1e-8,
                           weight_decay=0.0)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.75)
    order_rng = torch.Generator().manual_seed(seed)  # data order: per seed, not per init
    n, batch = len(ytr), 64
    for _ in range(args.epochs):
        perm = torch.randperm(n, generator=order_rng).to(args.device)
        last = n if args.keep_last else n - n % batch  # pcnn: n // batch steps
        loss_sum = 0.0
        for first in range(0, last, batch):
            idx = perm[first:first + batch]
            loss = nn.functional.cross_entropy(model(xtr[idx]), ytr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            loss_sum += loss.item() * len(idx)
        sched.step()
    acc, test_loss = evaluate(model, xte, yte)
    return acc, test_loss, loss_sum / last


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("idx_dir")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--device", choices=["cuda", "cpu"],
                    default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--keep-last", action="store_true")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    # Plain float32 everywhere (no TF32 in convolutions or matrix products), deterministic kernels.
    if hasattr(torch.backends.cudnn, "conv"):  # PyTorch 2.9 on
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        torch.backends.cudnn.conv.fp32_precision = "ieee"
    else:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.use_deterministic_algorithms(True, warn_only=True)

    data = load(args.idx_dir, args.device)
    _, ytr, _, yte, (mean, std) = data
    name = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    print(f"torch {torch.__version__} on {name}; {len(ytr)} train / {len(yte)} test "
          f"images, pixel mean {mean:.4f} std {std:.4f}; {args.epochs} epochs, batch 64, "
          f"{'last partial batch kept' if args.keep_last else 'last partial batch dropped'}")
    results = {}
    for init in INITS:
        for seed in seeds:
            t = time.time()
            acc, loss, train_loss = train(init, seed, data, args)
            results.setdefault(init, []).append((acc, loss))
            print(f"{init:15s} seed {seed}  test_acc {acc:.4f}  test_loss {loss:.4f}  "
                  f"train_loss {train_loss:.4f}  {time.time() - t:.1f} s", flush=True)
    print(f"\n{'init':15s} {'mean acc':>8s} {'sd':>6s}  {'per seed':{7 * len(seeds)}s}"
          f" {'mean test loss':>14s}")
    for init, runs in results.items():
        accs = [a for a, _ in runs]
        sd = statistics.stdev(accs) if len(accs) > 1 else 0.0
        print(f"{init:15s} {statistics.mean(accs):8.4f} {sd:6.4f}  "
              f"{' '.join(f'{a:.4f}' for a in accs):{7 * len(seeds)}s}"
              f" {statistics.mean(l for _, l in runs):14.4f}")


if __name__ == "__main__":
    main()
