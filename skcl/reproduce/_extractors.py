"""Pre-training the frozen feature extractor of an image sequence, and caching it."""

import logging
import time
from pathlib import Path

from ._sequences import PRETRAINING

__all__ = ["pretrained_extractor", "transform_tasks"]

logger = logging.getLogger("skcl.reproduce")


def _say(log, message, **extra):
    """One progress line: to ``log`` when given, else to the logger at INFO."""
    if log is not None:
        log(message)
    else:
        logger.info(message, extra=extra)


def pretrained_extractor(pretraining, *, root=None, download=False, weights=None, cache_dir=None,
                         random_state=0, log=None):
    """The frozen feature extractor of an image sequence, pre-trained once.

    In order: the ``weights`` file if given; else the cached weights in
    ``cache_dir`` from an earlier run with the same settings; else the
    extractor is pre-trained on the pre-training task's training split
    (appendix C's settings) and, with ``cache_dir``, saved there. With
    ``cache_dir``, the pre-training also keeps a checkpoint there after
    each epoch (``<weights>.checkpoint.npz``), from which a stopped run
    resumes; it is removed once the weights are saved.

    Parameters
    ----------
    pretraining : str
        A key of :data:`PRETRAINING`, e.g. "fashion-mnist".
    root : str or path-like, default=None
        Data folder of the image loaders (see
        :func:`skcl.datasets.get_data_home`).
    download : bool, default=False
        Let torchvision download a missing pre-training dataset.
    weights : str or path-like, default=None
        A file written by
        :meth:`~skcl.feature_extraction.PretrainedFeatureExtractor.save_weights`.
    cache_dir : str or path-like, default=None
        Folder where pre-trained weights are kept between runs.
    random_state : int, default=0
        Seed of the pre-training.
    log : callable, default=None
        Called with progress lines; None sends them to the logger
        ``skcl.reproduce``.

    Returns
    -------
    extractor : PretrainedFeatureExtractor
        Fitted.
    info : dict
        ``pretraining`` (label), ``source`` ("file", "cache" or
        "pre-trained"), ``path``, and for a fresh pre-training its time
        ``pretrain_time_s`` and ``validation_accuracy`` on the task's
        validation split.

    Examples
    --------
    Pre-train on Fashion-MNIST (files in ``$SKCL_DATA_DIR``) once; later
    calls with the same ``cache_dir`` load the weights:

    >>> from skcl.datasets import load_ci_split_mnist
    >>> from skcl.reproduce import pretrained_extractor
    >>> extractor, info = pretrained_extractor(
    ...     "fashion-mnist", cache_dir="weights")  # doctest: +SKIP
    >>> info["source"]  # doctest: +SKIP
    'pre-trained'
    >>> X, y = load_ci_split_mnist().train[0]  # doctest: +SKIP
    >>> extractor.transform(X).shape  # doctest: +SKIP
    (10132, 64)
    """
    from ..feature_extraction import PretrainedFeatureExtractor

    if pretraining not in PRETRAINING:
        raise ValueError(
            f"Unknown pre-training task {pretraining!r}; choose from {sorted(PRETRAINING)}."
        )
    option = PRETRAINING[pretraining]
    extractor = PretrainedFeatureExtractor(
        option.architecture, n_epochs=option.n_epochs, batch_size=option.batch_size,
        learning_rate=option.learning_rate, random_state=random_state,
        verbose=int(log is not None or logger.isEnabledFor(logging.INFO)),
    )
    info = {"pretraining": option.label, "architecture": option.architecture}
    cached = None
    if cache_dir is not None:
        cached = Path(cache_dir) / (
            f"{option.key}_{option.architecture}_{option.n_epochs}epochs_seed{random_state}.npz"
        )
    if weights is not None:
        extractor.load_weights(weights)
        info.update(source="file", path=str(weights))
    elif cached is not None and cached.is_file():
        extractor.load_weights(cached)
        info.update(source="cache", path=str(cached))
    else:
        data = option.loader(root, download=download)
        _say(log, f"Pre-training {option.architecture} on {option.label} "
                  f"({len(data.train[1])} images, {option.n_epochs} epochs)")
        # BCN-12's loader gives the paper's m / n_i class weights.
        extractor.set_params(class_weight=data.get("class_weight"))
        checkpoint = None
        if cached is not None:  # a stopped pre-training resumes from its last epoch
            cached.parent.mkdir(parents=True, exist_ok=True)
            checkpoint = cached.with_name(cached.stem + ".checkpoint.npz")
            extractor.set_params(checkpoint=checkpoint)
        start = time.perf_counter()
        extractor.fit(*data.train)
        info.update(
            source="pre-trained", pretrain_time_s=time.perf_counter() - start,
            validation_accuracy=100 * extractor.score(*data.validation),
        )
        if cached is not None:
            extractor.save_weights(cached)
            checkpoint.unlink(missing_ok=True)
            info["path"] = str(cached)
    extractor.set_params(verbose=0, checkpoint=None)
    where = info.get("path", "memory")
    extra = (f", {info['pretrain_time_s']:.0f} s, validation accuracy "
             f"{info['validation_accuracy']:.2f} %" if "pretrain_time_s" in info else "")
    _say(log, f"Extractor: {option.architecture} pre-trained on {option.label} "
              f"({info['source']}: {where}{extra})")
    return extractor, info


def transform_tasks(extractor, tasks):
    """Each task's inputs through the frozen extractor: ``[(features, y), ...]``."""
    return [(extractor.transform(X), y) for X, y in tasks]
