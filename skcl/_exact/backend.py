"""Where the exact family's arithmetic runs: numpy on the host, or JAX on its device.

The sums and the closed-form solve are the same mathematics on either;
``backend="auto"`` sends them to JAX only when JAX's default device is an
accelerator, where the D×D products and eigendecompositions are tens of
times faster, and keeps numpy (multi-threaded BLAS, float64) on a CPU,
where JAX's CPU kernels are no faster and its float64 must be switched on.
"""

__all__ = ["BACKENDS", "resolve_backend"]

#: The values of the estimators' ``backend`` parameter.
BACKENDS = ("auto", "numpy", "jax")


def resolve_backend(backend):
    """``"numpy"`` or ``"jax"``: the backend that ``backend`` names.

    Parameters
    ----------
    backend : {"auto", "numpy", "jax"}
        "auto" is "jax" when JAX's default device is a GPU or TPU, else
        "numpy". JAX is imported only to answer "auto" or when named.

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
    import jax

    return "numpy" if jax.default_backend() == "cpu" else "jax"
