#!/usr/bin/env python3
"""The small real-digit set (UCI optical digits, as scikit-learn ships it: digits.csv.gz, 1797
rows of 64 pixel values 0..16, row-major 8x8, then the label) as the four uncompressed MNIST IDX
files that `pcnn train --data DIR` reads. Each 8x8 image is upscaled 3x by pixel replication to
24x24 and centred in 28x28 (2 pixels of 0 on each side); a value v becomes min(255, 16 v).

The split is fixed and deterministic: the first 1437 rows are the training set, the last 360 the
test set (no shuffle; the file's own order).

Usage: digits_idx.py DIGITS_CSV_GZ OUT_DIR   (scripts/device/bundle.sh fetches the file into
.deps/device/digits/). Python's standard library only.
"""
import csv
import gzip
import os
import struct
import sys

TRAIN = 1437
SIDE, SCALE, PAD = 28, 3, 2  # 8 * 3 + 2 * 2 == 28


def image_bytes(values):
    """64 values 0..16 (row-major 8x8) -> 28*28 bytes."""
    img = bytearray(SIDE * SIDE)
    for r in range(8):
        for c in range(8):
            v = min(255, values[r * 8 + c] * 16)
            for dr in range(SCALE):
                row = PAD + r * SCALE + dr
                for dc in range(SCALE):
                    img[row * SIDE + PAD + c * SCALE + dc] = v
    return bytes(img)


def write_idx(path, images, labels):
    with open(path + "-images-idx3-ubyte", "wb") as f:
        f.write(struct.pack(">IIII", 0x803, len(images), SIDE, SIDE))
        f.write(b"".join(images))
    with open(path + "-labels-idx1-ubyte", "wb") as f:
        f.write(struct.pack(">II", 0x801, len(labels)))
        f.write(bytes(labels))


def main(src, out):
    images, labels = [], []
    with gzip.open(src, "rt", newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            values = [int(float(x)) for x in row]
            if len(values) != 65 or not all(0 <= v <= 16 for v in values[:64]) \
                    or not 0 <= values[64] <= 9:
                sys.exit(f"{src}: row {len(images) + 1} is not 64 values 0..16 and a label 0..9")
            images.append(image_bytes(values[:64]))
            labels.append(values[64])
    if len(images) != 1797:
        sys.exit(f"{src}: {len(images)} rows, expected 1797")
    os.makedirs(out, exist_ok=True)
    write_idx(os.path.join(out, "train"), images[:TRAIN], labels[:TRAIN])
    write_idx(os.path.join(out, "t10k"), images[TRAIN:], labels[TRAIN:])
    print(f"{out}: {TRAIN} training and {len(images) - TRAIN} test images, 28x28")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
