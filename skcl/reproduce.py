"""The paper's experiments, under the name the docs and ``skcl reproduce`` use.

The code lives in :mod:`skcl.experiments`, one module per job (registry,
sequences, extractors, runner, report); this module re-exports its public
names so that ``from skcl.reproduce import METHODS, reproduce`` keeps
working.
"""

from .experiments import *  # noqa: F401,F403
from .experiments import __all__  # noqa: F401
