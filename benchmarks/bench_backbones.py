"""Feature extraction through BackboneFeatureExtractor: which device ran, and the cache.

Usage (from the project's root; torch and torchvision installed)::

    SKCL_DATA_DIR=../shared/data python benchmarks/bench_backbones.py [--device auto|cpu|cuda] [--n-images 2000]

For each backbone, transforms the same images twice with a feature cache
(joblib Memory in a fresh temporary directory) and prints the device that
ran, the first transform (extracted and written to the cache), the second
(read from the cache) and their ratio, which must be at least 20. The
images are the first MNIST training images when ``SKCL_DATA_DIR`` holds
them, else random 28×28 uint8 images (the times do not depend on the
values). The torchvision models have random weights (``weights=None``):
the cost of a forward pass does not depend on them, and nothing is
downloaded.
"""

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skcl.feature_extraction import BackboneFeatureExtractor  # noqa: E402
from skcl.feature_extraction._architectures import ConvNet  # noqa: E402


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
    """(label, extractor, number of images) for each row."""
    cnn4 = ConvNet("cnn4", (28, 28, 1), 10)
    theta = np.asarray(cnn4.init(jax.random.PRNGKey(0)))
    rows = [
        ("JAX function: the paper's cnn4", BackboneFeatureExtractor(cnn4.features, params=theta, device=device, batch_size=256), n),
    ]
    try:
        import torch  # noqa: F401
    except ImportError:
        print("torch is not installed: only the JAX row (pip install \"skcl[torch]\")")
        return rows
    rows += [
        ("torchvision resnet18, 28×28 as is", BackboneFeatureExtractor("resnet18", preprocess=None, device=device, batch_size=256), n),
        ("torchvision resnet18, ImageNet preprocessing (224×224)", BackboneFeatureExtractor("resnet18", device=device), max(n // 10, 1)),
    ]
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--n-images", type=int, default=2000)
    args = parser.parse_args(argv)
    X, source = images(args.n_images)
    versions = [f"jax {jax.__version__} (default backend {jax.default_backend()})"]
    try:
        import torch

        versions.append(
            f"torch {torch.__version__} (CUDA available: {torch.cuda.is_available()}, "
            f"{torch.get_num_threads()} threads)"
        )
    except ImportError:
        pass
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; " + "; ".join(versions))
    print(f"images: {source}, 28×28 uint8; --device {args.device}\n")
    header = f"{'backbone':<56} {'device':>7} {'images':>6} {'features':>8} {'first (s)':>9} {'cached (s)':>10} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    ratios = []
    for label, extractor, n in backbones(args.n_images, args.device):
        with tempfile.TemporaryDirectory() as cache:
            extractor.set_params(memory=cache).fit(X[:n])
            start = time.perf_counter()
            first = extractor.transform(X[:n])
            first_s = time.perf_counter() - start
            start = time.perf_counter()
            second = extractor.transform(X[:n])
            second_s = time.perf_counter() - start
        assert np.array_equal(first, second)
        ratios.append(first_s / second_s)
        print(
            f"{label:<56} {extractor.device_:>7} {n:>6} {first.shape[1]:>8} {first_s:>9.3f} "
            f"{second_s:>10.4f} {ratios[-1]:>6.0f}×",
            flush=True,
        )
    print(f"\nsmallest ratio {min(ratios):.0f}× (must be at least 20×)")
    return 0 if min(ratios) >= 20 else 1


if __name__ == "__main__":
    sys.exit(main())
