"""The pre-training's checkpoint: a ``.npz`` written after every epoch, read without pickle.

A :class:`~skcl.feature_extraction.PretrainedFeatureExtractor` with a
``checkpoint`` path writes, after each epoch, what continues its run: the
training key, the epochs' losses and the optimiser's carry (parameters,
Adam's moments and step count), with a JSON header that names the run
it belongs to (:func:`run_fingerprint`: a hash of the pre-training task
and of every setting that shapes the run). A rerun of the same fit
resumes after the last complete epoch; a checkpoint of another run is
refused. The file is replaced whole (written beside it, then renamed), so
that a run stopped while writing leaves the previous epoch's.
"""

import hashlib
import json
import os
from functools import partial
from numbers import Integral
from pathlib import Path

import numpy as np

from .._utils.npy_files import read_npz

__all__ = ["FORMAT", "checkpointing", "read_checkpoint", "run_fingerprint",
           "write_checkpoint"]

#: The header's "format": what says a file is a pre-training checkpoint.
FORMAT = "skcl.PretrainedFeatureExtractor.checkpoint"


#: The extractor's settings that shape a pre-training run (with the seed,
#: when it is an int; a drawn seed is the checkpoint's key).
SHAPING = ("architecture", "n_epochs", "batch_size", "learning_rate", "prior_precision",
           "class_weight")


def checkpointing(extractor, train_key, *arrays):
    """What ``extractor.fit`` needs of its ``checkpoint``: key, state found, epochs' writer.

    Parameters
    ----------
    extractor : PretrainedFeatureExtractor
        Its public settings and ``checkpoint`` path are read.
    train_key : array
        The key the run would use.
    *arrays : ndarray
        The pre-training task as trained (images, label indices, weights).

    Returns
    -------
    train_key : array
        The checkpoint's key when one of this run is found (the same as
        ``train_key`` for an int ``random_state``), else ``train_key``.
    found : tuple or None
        ``(epoch, leaves, epoch_losses)`` of the state found, as
        :func:`read_checkpoint`.
    on_state : callable or None
        Writes the state after each epoch; None without a checkpoint.
    """
    if extractor.checkpoint is None:
        return train_key, None, None
    settings = {name: repr(getattr(extractor, name)) for name in SHAPING}
    seed = extractor.random_state
    settings["random_state"] = repr(seed) if isinstance(seed, Integral) else "drawn"
    fingerprint = run_fingerprint(settings, *arrays)
    found = read_checkpoint(extractor.checkpoint, fingerprint)
    if found is not None:
        train_key, found = found[0], found[1:]
    return train_key, found, partial(write_checkpoint, extractor.checkpoint, fingerprint,
                                     np.asarray(train_key))


def run_fingerprint(settings, *arrays):
    """A hash of the pre-training run: its ``settings`` (JSON) and its arrays' bytes.

    Parameters
    ----------
    settings : dict
        Every setting that shapes the run (architecture, epochs, batch
        size, learning rate, prior, seed when it is an int...).
    *arrays : ndarray
        The task as trained: images, label indices, weights.

    Returns
    -------
    str
        A SHA-256 hex digest.
    """
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    for a in arrays:
        a = np.ascontiguousarray(a)
        digest.update(f"{a.dtype.str}{a.shape}".encode())
        digest.update(memoryview(a).cast("B"))
    return digest.hexdigest()


def write_checkpoint(path, fingerprint, key, state):
    """Write the run's state after ``state.epoch`` epochs to ``path``, replacing it whole.

    Parameters
    ----------
    path : str or path-like
        The checkpoint file (written as given: no ``.npz`` appended).
    fingerprint : str
        :func:`run_fingerprint` of the run.
    key : array
        The training key (the epochs' minibatch draws come from it).
    state : skcl._gradient.training.EpochState
    """
    path = Path(path)
    header = {"format": FORMAT, "fingerprint": fingerprint, "epoch": int(state.epoch),
              "n_leaves": len(state.leaves)}
    arrays = {f"leaf_{i}": np.asarray(a) for i, a in enumerate(state.leaves)}
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as file:
        np.savez(file, header=np.array(json.dumps(header)), key=np.asarray(key),
                 epoch_losses=np.asarray(state.epoch_losses), **arrays)
    os.replace(partial, path)


def read_checkpoint(path, fingerprint):
    """The key and state a checkpoint of this run holds, or None when there is no file.

    Parameters
    ----------
    path : str or path-like
    fingerprint : str
        :func:`run_fingerprint` of the run about to start.

    Returns
    -------
    (key, epoch, leaves, epoch_losses) or None
        The fields of a :class:`skcl._gradient.training.EpochState`, after
        the training key.

    Raises
    ------
    ValueError
        When the file is not a pre-training checkpoint (or is damaged), or
        belongs to another run (other data or settings): the message says
        to remove it or to pass another path.
    """
    if not Path(path).is_file():
        return None
    try:
        header = json.loads(str(read_npz(path, ["header"])["header"]))
        if not (isinstance(header, dict) and header.get("format") == FORMAT):
            raise ValueError(f"its header is not a {FORMAT}'s")
        names = ["key", "epoch_losses"] + [f"leaf_{i}" for i in range(int(header["n_leaves"]))]
        arrays = read_npz(path, names)
        epoch = int(header["epoch"])
    except (KeyError, TypeError, ValueError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not a readable pre-training checkpoint ({error}); "
                         "remove it to start the pre-training afresh.") from error
    if header.get("fingerprint") != fingerprint:
        raise ValueError(
            f"{path} is the checkpoint of another pre-training (other images, labels, "
            "weights or settings): remove it, or pass another checkpoint path."
        )
    leaves = [arrays[f"leaf_{i}"] for i in range(int(header["n_leaves"]))]
    return arrays["key"], epoch, leaves, arrays["epoch_losses"]
