"""matplotlib, imported when a figure is drawn rather than with skcl.plotting."""


def import_matplotlib():
    """matplotlib, or an ImportError that says how to install it.

    Every drawing function calls it first, so that ``import skcl.plotting``
    works without matplotlib and only drawing asks for it.

    Returns
    -------
    module
        The ``matplotlib`` package.
    """
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError(
            "skcl.plotting needs matplotlib; install it with "
            "`pip install matplotlib` or `pip install skcl[plot]`."
        ) from exc
    return matplotlib
