"""Load times of the image task sequences on the real MNIST / Fashion-MNIST.

Usage (from the project's root)::

    SKCL_DATA_DIR=../shared/data PYTHONPATH=. \
        python benchmarks/timing/bench_image_loading.py [--repeats 3]

Prints, for each loader, the median of ``--repeats`` wall-clock times
after one warm-up (the harness's timer; before it, the best of 3) and the
peak of
memory allocated while loading (tracemalloc, which sees numpy's buffers),
then the same for gzipped copies of the files, and the cost per image of
the ISIC path (JPEG decoding + Lanczos resizing to 32×32) on synthetic
600×450 JPEGs, since no real ISIC data is available offline.
"""

import gzip
import shutil
import sys
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np

from benchmarks import _harness as harness
from skcl import datasets
from skcl.datasets._isic import read_isic_images

LOADERS = [
    "load_ci_split_mnist",
    "load_di_split_mnist",
    "load_mnist",
    "load_ci_split_fashion_mnist",
    "load_di_split_fashion_mnist",
    "load_fashion_mnist",
]


def measure(function, repeats=3):
    """(median seconds after a warm-up, peak MiB allocated while loading)."""
    seconds = harness.timeit(function, repeats).median
    tracemalloc.start()
    function()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak / 2**20


def table(rows, title, csv=None):
    out = harness.Table({"loader": "<34", "median (s)": ">14.3f", "peak memory (MiB)": ">18.0f"},
                        csv, title=f"\n{title}")
    for name, (seconds, mib) in rows:
        out.row(name, seconds, mib)


def main():
    args = harness.parser(__doc__, repeats=3, csv=False).parse_args()
    print(harness.machine_line())
    home = datasets.get_data_home()
    print(f"data folder: {home}")
    try:
        rows = [(name, measure(lambda n=name: getattr(datasets, n)(home), args.repeats))
                for name in LOADERS]
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
        rows = [(name, measure(lambda n=name: getattr(datasets, n)(tmp), args.repeats))
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
        with harness.Stopwatch() as watch:  # one pass: a second would read warm files
            read_isic_images(tmp, [f"ISIC_{i:07d}" for i in range(n)])
        per_image = watch.seconds / n
    print("\nISIC path (synthetic 600x450 JPEGs, decode + Lanczos to 32x32)")
    print(f"{per_image * 1e3:.1f} ms per image: HAM10000 (10,015 images) ~ "
          f"{per_image * 10015:.0f} s, BCN20000 (18,946 images) ~ {per_image * 18946:.0f} s "
          "(more for larger originals); cache=True makes later loads read one .npz.")


if __name__ == "__main__":
    main()
