"""A package's public names, imported on first use (PEP 562).

``skcl`` keeps JAX out of ``import skcl`` (so ``skcl --help`` answers at
once), ``skcl.feature_extraction`` keeps JAX and torch out of
``RandomFeatures``, and ``skcl.reproduce`` keeps its runner out of the
registries that the command line parses against: each lists its names here.
"""

import importlib
import sys

__all__ = ["lazy_exports"]


def lazy_exports(package, table):
    """The ``__getattr__`` and ``__dir__`` of a package whose names load on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``; it must be importing (in
        ``sys.modules``) and define ``__all__``.
    table : dict
        Public name → the module that defines it, relative to ``package``
        (e.g. ``"._registry"``).

    Returns
    -------
    (callable, callable)
        Assign them to the package's ``__getattr__`` and ``__dir__``. A
        name, once imported, is set on the package, so it is looked up
        only once.
    """
    module = sys.modules[package]

    def __getattr__(name):
        if name in table:
            value = getattr(importlib.import_module(table[name], package), name)
            setattr(module, name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(vars(module)) | set(module.__all__))

    return __getattr__, __dir__
