"""The layout keeps the architecture: where JAX begins, who may import whom,
modules of one job, and no room reaching into another's private state.

See ``docs/contributing.rst`` for the drawing these tests hold the code to.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "skcl"

#: The longest a module may grow before it should be cut along its jobs.
MAX_LINES = 500

#: Reads of another object's private names that remain, each with its reason.
#: Keys are (module path relative to skcl/, the expression as ast.unparse gives it).
_SCORER = ("scikit-learn has no public way to read a scorer's metric, sign and arguments; "
           "_scorer_parts is the one adapter (scikit-learn >= 1.4 stores them so)")
_MARK = "skcl's own mark on its metric function, set and read in this one module"
ALLOWED_PRIVATE_ACCESS = {
    ("_gradient/deferred_folds.py", "estimator._complete_fold"):
        "complete_pending_fold is the public face of the mixin's hook, in the mixin's module",
    ("_sequential.py", "estimator._check_params"):
        "check_hyperparameters is the public face of the surface's hook, in the surface's module",
    ("feature_extraction/_backbone.py", "extractor._extract"):
        "joblib keys the feature cache on this function's source, so a renamed call would miss "
        "every user's cache once; the method is this module's own class's",
    ("metrics.py", "getattr(scoring, '_score_func', None)"): _SCORER,
    ("metrics.py", "scoring._sign"): _SCORER,
    ("metrics.py", "scoring._response_method"): _SCORER,
    ("metrics.py", "hasattr(scoring, '_sign')"): _SCORER,
    ("metrics.py", "getattr(scoring, '_kwargs', {})"): _SCORER,
    ("metrics.py", "expected_calibration_error._skcl_needs_proba"): _MARK,
    ("metrics.py", "getattr(metric, '_skcl_needs_proba', False)"): _MARK,
}


def modules():
    return sorted(PACKAGE.rglob("*.py"))


def module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path):
    """The absolute names of the skcl modules a module imports (at any depth)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {module for module in found if module.split(".")[0] == "skcl"}


def inside(module, package):
    return module == package or module.startswith(package + ".")


@pytest.mark.parametrize(
    "package, forbidden",
    [
        ("skcl._exact", ("skcl._gradient",)),
        ("skcl._gradient", ("skcl._exact",)),
        ("skcl._utils", ("skcl._gradient", "skcl._exact", "skcl._sequential")),
        ("skcl._sequential", ("skcl._gradient", "skcl._exact")),
    ],
)
def test_the_layers_import_only_downwards(package, forbidden):
    offenders = {
        str(path.relative_to(ROOT)): sorted(m for m in imported_modules(path)
                                            if any(inside(m, f) for f in forbidden))
        for path in modules() if inside(module_name(path), package)
    }
    assert not {path: found for path, found in offenders.items() if found}


def test_jax_begins_at_the_gradient_family():
    # The exact family, the surface, the helpers and the public leaves import
    # without JAX (the exact family's device solve imports it when asked): a
    # search over random features and an exact head never loads it.
    code = (
        "import sys, skcl, skcl._sequential, skcl._utils.validation, skcl._utils.docstrings, "
        "skcl._utils.progress, skcl.metrics, skcl.pipeline, skcl.exceptions, skcl.datasets, "
        "skcl.model_selection, skcl.plotting, skcl.reproduce\n"
        "from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier\n"
        "from skcl.feature_extraction import RandomFeatures\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'optax', 'torch')))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_no_module_is_longer_than_one_job():
    long = {str(p.relative_to(ROOT)): n for p in modules()
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long


def private_reads(path):
    """Expressions reading a private name of something that is not ``self``,
    ``cls``, ``super()``, ``type(self)``, a class of the same module or an
    imported name (``obj._name``, ``getattr(obj, "_name")``)."""
    tree = ast.parse(path.read_text())
    imported = {(alias.asname or alias.name).split(".")[0]
                for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names}
    classes = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    own = {"self", "cls"} | imported | classes

    def private(name):
        return name.startswith("_") and not name.startswith("__")

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr):
            value = node.value
            if isinstance(value, ast.Name) and value.id in own:
                continue
            if isinstance(value, ast.Call) and getattr(value.func, "id", None) in ("super", "type"):
                continue
            # A NamedTuple's own API (_replace, _fields, ...) and scikit-learn's
            # parameter declarations are public contracts despite the underscore.
            if node.attr in ("_replace", "_fields", "_asdict", "_make", "_parameter_constraints"):
                continue
            yield ast.unparse(node)
        elif (isinstance(node, ast.Call) and getattr(node.func, "id", None)
              in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) > 1
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
              and private(node.args[1].value)):
            yield ast.unparse(node)


def test_no_module_reaches_into_another_objects_private_state():
    found = {(str(p.relative_to(PACKAGE)), expression)
             for p in modules() for expression in private_reads(p)}
    unexplained = sorted(found - set(ALLOWED_PRIVATE_ACCESS))
    assert not unexplained
    # An exception that no longer occurs is dropped from the list.
    assert not set(ALLOWED_PRIVATE_ACCESS) - found
