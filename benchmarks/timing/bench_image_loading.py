"""Load times of the image task sequences on the real MNIST / Fashion-MNIST.

Usage (from the project's root)::

    SKCL_DATA_DIR=../shared/data python benchmarks/timing/bench_image_loading.py

Prints, for each loader, the best of 3 wall-clock times and the peak of
memory allocated while loading (tracemalloc, which sees numpy's buffers),
then the same for gzipped copies of the files, and the cost per image of
the ISIC path (JPEG decoding + Lanczos resizing to 32×32) on synthetic
600×450 JPEGs, since no real ISIC data is available offline.
"""

import gzip
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skcl import datasets  # noqa: E402
from skcl.datasets._isic import read_isic_images  # noqa: E402

LOADERS = [
    "load_ci_split_mnist",
    "load_di_split_mnist",
    "load_mnist",
    "load_ci_split_fashion_mnist",
    "load_di_split_fashion_mnist",
    "load_fashion_mnist",
]


def measure(function, repeats=3):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    function()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return min(times), peak / 2**20


def table(rows, title):
    print(f"\n{title}")
    print(f"{'loader':34s} {'best of 3 (s)':>14s} {'peak memory (MiB)':>18s}")
    for name, (seconds, mib) in rows:
        print(f"{name:34s} {seconds:14.3f} {mib:18.0f}")


def main():
    home = datasets.get_data_home()
    print(f"data folder: {home}")
    try:
        rows = [(name, measure(lambda n=name: getattr(datasets, n)(home))) for name in LOADERS]
    except FileNotFoundError as error:
        sys.exit(f"{error}\n(Set SKCL_DATA_DIR, e.g. SKCL_DATA_DIR=../shared/data.)")
    table(rows, "Plain IDX files")

    with tempfile.TemporaryDirectory() as tmp:
        for folder in ("MNIST/raw", "FashionMNIST/raw"):
            (Path(tmp) / folder).mkdir(parents=True)
            for path in (home / folder).iterdir():
                if path.suffix != ".gz":
                    gz_path = Path(tmp) / folder / f"{path.name}.gz"
                    with open(path, "rb") as src, gzip.open(gz_path, "wb") as dst:
                        shutil.copyfileobj(src, dst)
        rows = [(name, measure(lambda n=name: getattr(datasets, n)(tmp)))
                for name in ("load_ci_split_mnist", "load_ci_split_fashion_mnist")]
    table(rows, "Gzipped IDX files (as torchvision downloads them)")

    from PIL import Image

    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        n = 100
        base = rng.integers(0, 256, (15, 20, 3), dtype=np.uint8)
        for i in range(n):
            # Smooth images with noise, closer to photographs than pure noise.
            image = Image.fromarray(base).resize((600, 450), Image.Resampling.BICUBIC)
            noisy = np.clip(np.asarray(image) + rng.normal(0, 8, (450, 600, 3)), 0, 255)
            Image.fromarray(noisy.astype(np.uint8)).save(
                Path(tmp) / f"ISIC_{i:07d}.jpg", quality=90
            )
        start = time.perf_counter()
        read_isic_images(tmp, [f"ISIC_{i:07d}" for i in range(n)])
        per_image = (time.perf_counter() - start) / n
    print("\nISIC path (synthetic 600x450 JPEGs, decode + Lanczos to 32x32)")
    print(f"{per_image * 1e3:.1f} ms per image: HAM10000 (10,015 images) ~ "
          f"{per_image * 10015:.0f} s, BCN20000 (18,946 images) ~ {per_image * 18946:.0f} s "
          "(more for larger originals); cache=True makes later loads read one .npz.")


if __name__ == "__main__":
    main()
