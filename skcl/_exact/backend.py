"""Where the exact family's arithmetic runs: numpy on the host, or JAX on its device.

The sums and the closed-form solve are the same mathematics on either;
``backend="auto"`` sends them to JAX only when the user's process has
already imported JAX and its default device is an accelerator, where the
D×D products and eigendecompositions are tens of times faster, and keeps
numpy (multi-threaded BLAS, float64) otherwise. "auto" never imports JAX
itself: importing it costs seconds, and on a GPU machine JAX reserves most
of the device's memory at its first use, which a numpy model must not do.
A model that should run on the device in a process that has not used JAX
yet asks for it with ``backend="jax"``.
"""

import sys

__all__ = ["BACKENDS", "resolve_backend"]

#: The values of the estimators' ``backend`` parameter.
BACKENDS = ("auto", "numpy", "jax")


def resolve_backend(backend):
    """``"numpy"`` or ``"jax"``: the backend that ``backend`` names.

    Parameters
    ----------
    backend : {"auto", "numpy", "jax"}
        "auto" is "jax" when JAX is already imported (``sys.modules``) and
        its default device is a GPU or TPU, else "numpy"; it never imports
        JAX.

    Returns
    -------
    str
    """
    if backend == "numpy":
        return "numpy"
    if backend == "jax":
        return "jax"
    if backend != "auto":
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    jax = sys.modules.get("jax")
    if jax is None:
        return "numpy"
    return "numpy" if jax.default_backend() == "cpu" else "jax"
