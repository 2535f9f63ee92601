"""The on-disk cache of a backbone's features, and what names a backbone in its key.

:class:`BackboneFeatureExtractor` caches its features in a
:class:`joblib.Memory`, keyed by hashes only: the backbone with its
weights (``backbone_hash_``), the preprocessing, the kind of device and the
images. The hashes are computed here, once per fit or transform, so that
joblib never pickles the network or the images to hash them again.

Changing what goes into a hash changes every key: features cached by an
earlier version would no longer be found.
"""

import joblib

__all__ = ["backbone_hash", "cached_call", "features_key", "function_identity"]


def function_identity(function):
    """What names a JAX function for the cache: where it is defined and its code.

    Module-level functions would pickle by name alone, so a changed body would
    be served old features: the bytecode, constants and closed-over values
    are part of the key.

    Parameters
    ----------
    function : callable
        A function, a bound method or a callable object.

    Returns
    -------
    identity : tuple
        The module and qualified name, then the code and hashes (or reprs) of
        the closed-over values, defaults and bound object.
    """
    target = getattr(function, "__func__", function)  # a bound method's function
    code = getattr(target, "__code__", None)
    if code is None:  # a callable object, e.g. an Equinox module
        code = getattr(type(function).__call__, "__code__", None)
    parts = [getattr(target, "__module__", type(function).__module__),
             getattr(target, "__qualname__", type(function).__qualname__)]
    if code is not None:
        parts += [code.co_code, repr(code.co_consts), code.co_names]
    closure = [cell.cell_contents for cell in (getattr(target, "__closure__", None) or ())]
    closure += [getattr(target, "__defaults__", None), getattr(target, "__kwdefaults__", None)]
    bound = getattr(function, "__self__", None)
    for value in (closure, bound) if bound is not None else (closure,):
        try:
            parts.append(joblib.hash(value))
        except Exception:  # not picklable: its repr is the best we have
            parts.append(repr(value))
    if code is None or not hasattr(target, "__code__"):
        try:
            parts.append(joblib.hash(function))
        except Exception:
            parts.append(repr(function))
    return tuple(parts)


def backbone_hash(identity, weights_hash):
    """``backbone_hash_``: one hash of the network's identity and of its weights.

    Parameters
    ----------
    identity : tuple
        What names the network (its torchvision name, its class and
        structure, or its function's code), as a backend gives it.
    weights_hash : str
        The hash of its weights or params, as a backend gives it.

    Returns
    -------
    str
    """
    return joblib.hash((identity, weights_hash))


def features_key(backbone_hash, preprocess, device, images):
    """The cache key of the features of ``images``: four hashes.

    Parameters
    ----------
    backbone_hash : str
        ``backbone_hash_``.
    preprocess : dict
        ``preprocess_``, of plain values.
    device : str
        ``device_``: only its kind ("cpu", "cuda", "gpu") is in the key, as a
        GPU's arithmetic differs from a CPU's in the last bits while two GPUs
        of one kind agree.
    images : ndarray
        The images; their values, dtype and shape are hashed.

    Returns
    -------
    tuple of str
    """
    return (
        backbone_hash,
        joblib.hash(sorted(preprocess.items())),
        device.split(":")[0],
        joblib.hash(images),
    )


def cached_call(memory, function, key, **ignored):
    """``function(*key, **ignored)`` through ``memory``, keyed by ``key`` alone.

    Parameters
    ----------
    memory : joblib.Memory
        A Memory with a location.
    function : callable
        The cached function. joblib files its entries under the function's
        module and name, and drops them when its source changes.
    key : tuple
        The positional arguments, which joblib hashes.
    **ignored
        Keyword arguments joblib passes on but does not hash (the extractor,
        the images): the key already stands for them.

    Returns
    -------
    result : object
        What ``function`` returned, now or in an earlier call.
    hit : bool
        Whether it came from the cache.
    """
    cached = memory.cache(function, ignore=list(ignored))
    hit = cached.check_call_in_cache(*key, **ignored)
    return cached(*key, **ignored), hit
