"""The ``precision`` parameter of both extractors: its values, its check, JAX's names."""

__all__ = ["JAX_PRECISIONS", "PRECISIONS", "check_precision"]

#: The ``precision`` parameter's values: the arithmetic of the forward pass.
PRECISIONS = ("float32", "tf32", "bfloat16")

#: The ``precision`` parameter as JAX's ``default_matmul_precision``.
JAX_PRECISIONS = {"float32": "highest", "tf32": "tensorfloat32", "bfloat16": "bfloat16"}


def check_precision(precision):
    """Raise a ValueError unless ``precision`` is one of :data:`PRECISIONS`.

    Parameters
    ----------
    precision : object
        The extractor's ``precision`` parameter.
    """
    if not (isinstance(precision, str) and precision in PRECISIONS):
        raise ValueError(
            f"precision must be one of {list(PRECISIONS)} (float32 by default; tf32 "
            f"and bfloat16 trade exactness for speed on a GPU), got {precision!r}."
        )
