"""Feature extraction through BackboneFeatureExtractor: the device, the precision, the cache.

Usage (from the project's root; torch and torchvision installed)::

    SKCL_DATA_DIR=../shared/data python benchmarks/timing/bench_backbones.py \
        [--device auto|cpu|cuda] [--n-images 2000] [--precision float32 tf32 bfloat16]

For each backbone and precision, transforms the same images twice with a
feature cache (``.npy`` entries in a fresh temporary directory) and prints the
device that ran, the first transform (extracted and written to the cache),
the second (read from the cache), their ratio, and how far the features of
tf32 and bfloat16 are from float32's (largest difference over the largest
feature). The images are the first MNIST training images when
``SKCL_DATA_DIR`` holds them, else random 28×28 uint8 images (the times do
not depend on the values). The torchvision models have random weights
(``weights=None``): the cost of a forward pass does not depend on them,
and nothing is downloaded.

What it checks, on any device: a read from the cache gives the features
bit for bit, and is not slower than extracting them again (ratio ≥ 1;
otherwise the cache costs time on this device). The ratio itself is
reported, not required: it measures the device as much as the cache. On
two CPU cores extracting 2,000 images through a ResNet-18 takes seconds
and a read tens of milliseconds (ratios of 100× and more), while a GPU
extracts 20,000 small images in 0.1 s, about what a read spends hashing
them, so there the cache pays only for large inputs or slow networks. The
precisions default to float32 alone on a CPU, which has no TF32 (and runs
bfloat16 slowly on most CPUs), and to all three on a GPU.
"""
import os
import sys
import tempfile

import jax
import numpy as np

from benchmarks import _harness as harness
from skcl.feature_extraction import BackboneFeatureExtractor
from skcl.feature_extraction._architectures import ConvNet


def images(n):
    try:
        from skcl.datasets import load_mnist

        X = load_mnist(os.environ["SKCL_DATA_DIR"]).train[0][:n]
        if len(X) == n:
            return X, "MNIST"
    except (KeyError, OSError, ValueError):
        pass
    return np.random.default_rng(0).integers(0, 256, (n, 28, 28), dtype=np.uint8), "random"


def backbones(n, device):
    """(label, make(precision) -> extractor, number of images) for each row."""
    cnn4 = ConvNet("cnn4", (28, 28, 1), 10)
    theta = np.asarray(cnn4.init(jax.random.PRNGKey(0)))
    rows = [
        ("JAX function: the paper's cnn4",
         lambda precision: BackboneFeatureExtractor(
             cnn4.features, params=theta, device=device, batch_size=256, precision=precision),
         n),
    ]
    try:
        import torch  # noqa: F401
    except ImportError:
        print("torch is not installed: only the JAX row (pip install \"skcl[torch]\")")
        return rows
    rows += [
        ("torchvision resnet18, 28×28 as is",
         lambda precision: BackboneFeatureExtractor(
             "resnet18", preprocess=None, device=device, batch_size=256, precision=precision),
         n),
        ("torchvision resnet18, ImageNet preprocessing (224×224)",
         lambda precision: BackboneFeatureExtractor(
             "resnet18", device=device, precision=precision),
         max(n // 10, 1)),
    ]
    return rows


def on_gpu(device):
    if device != "auto":
        return device.startswith(("cuda", "gpu"))
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return jax.default_backend() == "gpu"


def main(argv=None):
    parser = harness.parser(__doc__)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--n-images", type=int, default=2000)
    parser.add_argument("--precision", nargs="+", choices=["float32", "tf32", "bfloat16"],
                        default=None, help="default: float32 on a CPU, all three on a GPU")
    args = parser.parse_args(argv)
    precisions = args.precision or (
        ["float32", "tf32", "bfloat16"] if on_gpu(args.device) else ["float32"]
    )
    X, source = images(args.n_images)
    extra = f"JAX's default backend {jax.default_backend()}"
    try:
        import torch

        extra += (f"; torch CUDA available: {torch.cuda.is_available()}, "
                  f"{torch.get_num_threads()} threads")
    except ImportError:
        pass
    print(harness.machine_line(extra=extra))
    print(f"images: {source}, 28×28 uint8; --device {args.device}; precisions {precisions}\n")
    table = harness.Table({"backbone": "<56", "precision": ">9", "device": ">7", "images": ">6",
                           "features": ">8", "first (s)": ">9.3f", "cached (s)": ">10.4f",
                           "ratio": ">7.0f", "vs float32": ">10"}, args.csv)
    failures = []
    for label, make, n in backbones(args.n_images, args.device):
        reference = None
        for precision in precisions:
            extractor = make(precision)
            with tempfile.TemporaryDirectory() as cache:
                extractor.set_params(memory=cache).fit(X[:n])
                # One run each: the first extracts and writes the cache, the
                # second reads it (a warm-up would fill the cache).
                with harness.Stopwatch() as watch:
                    first = extractor.transform(X[:n])
                first_s = watch.seconds
                with harness.Stopwatch() as watch:
                    second = extractor.transform(X[:n])
                second_s = watch.seconds
            ratio = first_s / second_s
            if precision == "float32":
                reference, deviation = first, ""
            elif reference is not None:
                gap = np.abs(first - reference).max() / np.abs(reference).max()
                deviation = f"{gap:.1e}"
            else:
                deviation = "n/a"
            if not np.array_equal(first, second):
                failures.append(f"{label}, {precision}: the cached features differ")
            if ratio < 1:
                failures.append(f"{label}, {precision}: a cached read is slower than extracting")
            table.row(label, precision, extractor.device_, n, first.shape[1], first_s,
                      second_s, ratio, deviation)
    table.close()
    print()
    for failure in failures:
        print("FAILED:", failure)
    if not failures:
        print("every cached read gave the features bit for bit, and none was slower than "
              "extracting")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
