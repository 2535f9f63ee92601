"""The skcl types a skops file of a skcl estimator may hold.

``skops.io.loads(data, trusted=skcl.trusted_types())`` loads any skcl
estimator, mid-sequence, with nothing else to trust: skops trusts numpy,
scipy and scikit-learn types itself, and a fitted skcl estimator holds
only those and two kinds of skcl types, listed here from the classes
themselves (not typed by hand), so that the list follows the code when a
module is moved or a state type is added:

- the public estimators (``skcl.__all__``, ``skcl.feature_extraction``,
  ``skcl.pipeline``);
- the plain records their fitted state is made of: every NamedTuple and
  dataclass defined in the modules of the exact family, of the
  gradient-trained family and of ``skcl.feature_extraction`` (the moments,
  a Gaussian fit, a network's shape, a consolidation's state, a
  curvature, a CNN's architecture). Built from their fields, they run no
  code of their own when a file is loaded. A record that is only a working
  value of a computation, never kept on an estimator (a ridge's spectrum,
  LAPACK's routines found through ctypes), says so (``working_value = True``)
  and is left out.

``tests/test_persistence.py`` saves every public estimator, fitted in
each structure it can hold, and checks that the file's untrusted types
are all in this list.
"""

import dataclasses
import importlib
import pkgutil
from functools import cache

__all__ = ["trusted_types"]

#: The namespaces whose public estimators a file may hold.
_PUBLIC_NAMESPACES = ("skcl", "skcl.feature_extraction", "skcl.pipeline")

#: The packages whose records (NamedTuples, dataclasses) a fitted estimator holds.
_STATE_PACKAGES = ("skcl._exact", "skcl._gradient", "skcl.feature_extraction")


def _full_name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def _is_record(obj, module):
    """A class defined in ``module`` that is a NamedTuple or a dataclass kept on estimators."""
    if not isinstance(obj, type) or obj.__module__ != module:
        return False
    if getattr(obj, "working_value", False):
        return False
    named_tuple = issubclass(obj, tuple) and "_fields" in vars(obj)
    return named_tuple or dataclasses.is_dataclass(obj)


def _modules(package):
    """``package`` and every module below it that imports here.

    A module whose optional dependency is missing (torch, say) is left out:
    no estimator fitted here can hold its types.
    """
    root = importlib.import_module(package)
    yield root
    for info in pkgutil.walk_packages(root.__path__, prefix=package + "."):
        try:
            yield importlib.import_module(info.name)
        except ImportError:
            continue


@cache
def _trusted_names():
    names = set()
    for namespace in _PUBLIC_NAMESPACES:
        module = importlib.import_module(namespace)
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, type):
                names.add(_full_name(obj))
    for package in _STATE_PACKAGES:
        for module in _modules(package):
            names.update(_full_name(obj) for obj in vars(module).values()
                         if _is_record(obj, module.__name__))
    return tuple(sorted(names))


def trusted_types():
    """The skcl types to trust when loading a skops file of a skcl estimator.

    ``skops.io.loads(data, trusted=skcl.trusted_types())`` (or
    ``skops.io.load(path, trusted=...)``) loads every public skcl estimator
    and :class:`~skcl.pipeline.Pipeline`, fitted or mid-sequence; a file
    that holds any other type not trusted by skops itself is refused by
    skops as usual (``UntrustedTypesFoundException``). The loaded estimator
    predicts as the saved one did and goes on learning with
    ``partial_fit`` as it would have.

    The list is read from the classes (so it imports the estimators'
    modules, JAX among them, on the first call): the public estimators,
    and the NamedTuples and dataclasses their fitted state is made of
    (moments, Gaussian fits, networks, consolidation states, curvatures).

    Returns
    -------
    list of str
        Full names (``module.Class``), sorted.

    Examples
    --------
    >>> import skops.io
    >>> import skcl
    >>> from skcl.datasets import load_ci_split_iris
    >>> data = load_ci_split_iris()
    >>> clf = skcl.LeastSquaresClassifier()
    >>> X, y = data.train[0]
    >>> clf = clf.partial_fit(X, y, classes=data.classes)
    >>> data_bytes = skops.io.dumps(clf)
    >>> loaded = skops.io.loads(data_bytes, trusted=skcl.trusted_types())
    >>> (loaded.predict(X) == clf.predict(X)).all()
    np.True_
    """
    return list(_trusted_names())
