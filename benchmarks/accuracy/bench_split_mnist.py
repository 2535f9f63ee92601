"""Split MNIST on frozen features, end to end, with the time of each stage.

The paper's Table I(b) setting for CI and DI Split MNIST: a ``cnn4``
extractor pre-trained on a similar task (20 epochs, learning rate 0.01,
minibatches of 64), frozen, and the MAP methods learning one dense layer on
its 64 features, λ (and ξ, r) chosen on the validation sequence.

EMNIST Letters, the paper's pre-training task, is not available offline;
**Fashion-MNIST stands in for it**. Two more pairings tell how much of the
gap to the paper comes from the features rather than from the methods:

* the reverse pairing: an MNIST-pretrained extractor on Split Fashion-MNIST;
* in-domain features: an MNIST-pretrained extractor on Split MNIST. It has
  seen these very training digits, so it is an optimistic diagnostic of
  what the methods do with good features, not a result.

Also measured: one pre-training epoch on 60,000 images, and ``transform``
of 70,000 images with its peak memory.

Run (reads SKCL_DATA_DIR, in torchvision's layout; pre-trained weights
are cached in --cache and reused)::

    SKCL_DATA_DIR=../shared/data PYTHONPATH=. python benchmarks/accuracy/bench_split_mnist.py

Takes about an hour on 2 CPU cores with all methods (NC's 15 candidates
dominate); ``--methods joint fine-tuning ewc aqc`` takes minutes.
"""

import json
from pathlib import Path

import numpy as np

from benchmarks import _harness as harness
from skcl import reproduce as rp
from skcl.datasets import load_fashion_mnist, load_mnist
from skcl.feature_extraction import PretrainedFeatureExtractor

MAP_METHODS = ["joint", "fine-tuning", "ewc", "si", "aqc", "nc"]
PAIRINGS = [
    # (group of columns, pre-training task, what it shows)
    ("mnist", "fashion-mnist", "Split MNIST, Fashion-MNIST features (stand-in for EMNIST Letters)"),
    ("fashion-mnist", "mnist", "reverse pairing: Split Fashion-MNIST, MNIST features"),
    ("mnist", "mnist", "diagnostic: Split MNIST on in-domain MNIST features (seen digits)"),
]


def peak_rss_mb():
    """Peak resident memory of this process since the last reset, in MB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak_rss():
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")  # Linux: reset VmHWM to the current RSS
    except OSError:
        pass


def time_one_epoch():
    """One pre-training epoch of cnn4 on 60,000 Fashion-MNIST images."""
    data = load_fashion_mnist()
    X = np.concatenate([data.train[0], data.validation[0]])
    y = np.concatenate([data.train[1], data.validation[1]])
    extractor = PretrainedFeatureExtractor("cnn4", n_epochs=1, random_state=0)
    with harness.Stopwatch() as watch:  # one epoch, once
        extractor.fit(X, y)
    return watch.seconds, extractor


def time_transform(extractor):
    """transform of MNIST's 70,000 images: time and peak memory."""
    data = load_mnist()
    images = np.concatenate([data.train[0], data.validation[0], data.test[0]])
    extractor.transform(images[:10])  # compile outside the measurement
    reset_peak_rss()
    before = peak_rss_mb()
    with harness.Stopwatch() as watch:  # once: the peak memory is of this call
        features = extractor.transform(images)
    elapsed = watch.seconds
    return {
        "images": len(images),
        "seconds": elapsed,
        "input_mb": images.nbytes / 2**20,
        "features_mb": features.nbytes / 2**20,
        "float32_copy_of_input_mb": images.size * 4 / 2**20,
        "peak_rss_growth_mb": peak_rss_mb() - before,
    }


def _to_json(value):
    return value.tolist() if hasattr(value, "tolist") else str(value)


def main():
    parser = harness.parser(__doc__, csv=False)
    parser.add_argument("--methods", nargs="+", default=MAP_METHODS)
    parser.add_argument("--cache", default="results/bench_split_mnist", metavar="DIR")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-stages", action="store_true",
                        help="skip the one-epoch and transform measurements")
    args = parser.parse_args()
    print(harness.machine_line())
    methods = rp.select_methods(args.methods)
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    report = {"stages": {}, "pairings": []}

    if not args.skip_stages:
        seconds, extractor = time_one_epoch()
        report["stages"]["pretrain_one_epoch_60000_s"] = seconds
        print(f"cnn4, one pre-training epoch on 60,000 Fashion-MNIST images: {seconds:.1f} s")
        stats = report["stages"]["transform"] = time_transform(extractor)
        print(
            f"transform of {stats['images']} MNIST images: {stats['seconds']:.1f} s; input "
            f"{stats['input_mb']:.0f} MB uint8 (a float32 copy would be "
            f"{stats['float32_copy_of_input_mb']:.0f} MB), features {stats['features_mb']:.0f} MB, "
            f"peak memory growth {stats['peak_rss_growth_mb']:.0f} MB"
        )

    for group, pretraining, title in PAIRINGS:
        print(f"\n== {title}")
        clock = harness.Stopwatch()
        extractor = rp.pretrained_extractor(
            pretraining, cache_dir=cache, random_state=args.seed, log=print
        )
        pretrain_s = extractor[1].get("pretrain_time_s")
        rows = []
        for sequence, model in rp.columns_for(group):
            column, _ = rp.run_column(sequence, model, methods, random_state=args.seed,
                                      log=print, extractor=extractor)
            rows += column
        print(rp.format_table(rows))
        stage_times = {
            "pretraining_s": pretrain_s,
            "transform_s": {r["column"]: r["transform_time_s"] for r in rows},
            "search_s": {f"{r['column']} {r['method']}": r["search_time_s"] for r in rows},
            "total_s": clock.seconds,
        }
        print("Stage times (s): pre-training "
              + ("cached" if pretrain_s is None else f"{pretrain_s:.0f}")
              + "; features "
              + ", ".join(f"{c} {t:.1f}" for c, t in stage_times["transform_s"].items())
              + "; searches "
              + ", ".join(f"{k} {t:.1f}" for k, t in stage_times["search_s"].items())
              + f"; total {stage_times['total_s']:.0f}")
        report["pairings"].append(
            {"title": title, "group": group, "pretraining": pretraining,
             "extractor": extractor[1], "rows": rows, "times": stage_times}
        )
    path = cache / "report.json"
    path.write_text(json.dumps(report, indent=2, default=_to_json) + "\n")
    print(f"\nWrote {path}")


if __name__ == "__main__":
    main()
