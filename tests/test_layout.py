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
    ("_exact/merging.py", "model._merge_state"):
        "merge_models is the public face of the exact estimators' merging hooks",
    ("_exact/merging.py", "first._merge_state"):
        "merge_models is the public face of the exact estimators' merging hooks",
    ("_exact/merging.py", "merged._take_merge_state"):
        "merge_models is the public face of the exact estimators' merging hooks",
    ("_gradient/deferred_folds.py", "estimator._complete_fold"):
        "complete_pending_fold is the public face of the mixin's hook, in the mixin's module",
    ("export/_classifiers.py", "mlp._optimizer"):
        "the one partial_fit step that sets MLPClassifier's label encoding leaves scikit-learn's "
        "Adam state, not skcl's and not a type skops trusts: deleted, a later partial_fit of "
        "scikit-learn's starts a fresh one",
    ("_sequential.py", "estimator._check_params"):
        "check_hyperparameters is the public face of the surface's hook, in the surface's module",
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
    # without JAX (the exact family's device solve imports it when asked), and
    # an exact model or RandomFeatures fitted and used at its defaults never
    # loads it (backend="auto" takes JAX only when the user's process has).
    code = (
        "import sys, numpy as np, skcl, skcl._sequential, skcl._utils.validation, "
        "skcl._utils.docstrings, skcl._utils.progress, skcl.metrics, skcl.pipeline, "
        "skcl.exceptions, skcl.datasets, skcl.model_selection, skcl.plotting, skcl.reproduce\n"
        "from skcl import GaussianDiscriminantClassifier, LeastSquaresClassifier\n"
        "from skcl.feature_extraction import RandomFeatures\n"
        "from sklearn.datasets import load_iris\n"
        "X, y = load_iris(return_X_y=True)\n"
        "for model in (GaussianDiscriminantClassifier(), LeastSquaresClassifier()):\n"
        "    model.partial_fit(X[y < 2], y[y < 2], classes=[0, 1, 2])\n"
        "    model.partial_fit(X[y == 2], y[y == 2])\n"
        "    model.predict(X), model.predict_proba(X), model.decision_function(X)\n"
        "    model.fit(X, y).predict_proba(X)\n"
        "RandomFeatures().fit(X).transform(X)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'optax', 'torch')))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, check=True)
    assert result.stdout.strip() == "[]"


# A room is skcl's top-level module or package a module lives in (``_exact``,
# ``model_selection``, ``metrics``, ...). Its private names and, for the
# public ones, its private modules are its own: others use what it exports.

#: Layers every room may import from, private modules included: the helpers
#: below everything, and the surface below both families (the search asks it
#: whether an estimator is skcl's and checks its hyperparameters).
SHARED_LAYERS = ("_utils", "_sequential")

#: The private rooms: the two families, used through their estimators.
FAMILIES = ("_exact", "_gradient")

_COMMAND_LINE = ("skcl/__main__.py is the command line of the reproduce package, which "
                 "keeps only the parsing there; the protocol's registries and writers are its "
                 "body")
_EXTRACTOR = ("PretrainedFeatureExtractor trains its CNN with the gradient family's core "
              "(its model, likelihood, prior and minimiser) rather than a copy of it")

#: A module of one room importing a private module of another, each with its reason.
#: Keys are (importing module, imported module).
ALLOWED_PRIVATE_MODULES = {
    ("skcl.__main__", "skcl.reproduce._files"): _COMMAND_LINE,
    ("skcl.__main__", "skcl.reproduce._registry"): _COMMAND_LINE,
    ("skcl.__main__", "skcl.reproduce._console"): _COMMAND_LINE,
    ("skcl.__main__", "skcl.reproduce._sequences"): _COMMAND_LINE,
    ("skcl.model_selection._evaluation", "skcl._gradient.deferred_folds"):
        "the search's folds wait for the kept candidate, through the gradient core's hook",
    ("skcl.feature_extraction._extractor", "skcl._gradient.consolidation"): _EXTRACTOR,
    ("skcl.feature_extraction._extractor", "skcl._gradient.likelihoods"): _EXTRACTOR,
    ("skcl.feature_extraction._extractor", "skcl._gradient.model"): _EXTRACTOR,
    ("skcl.feature_extraction._extractor", "skcl._gradient.training"): _EXTRACTOR,
    ("skcl.feature_extraction._random_features", "skcl._exact.backend"):
        "RandomFeatures chooses its backend by the exact family's rule, so that a pipeline "
        "of RandomFeatures and an exact head runs on one device, decided once",
    ("skcl.feature_extraction._random_features", "skcl._exact.device"):
        "RandomFeatures's features are computed on the device by the exact family's device "
        "code, which already holds JAX's float64 and memory handling",
    ("skcl.reproduce._at_scale", "skcl._exact.openblas"):
        "RanDumb's model refuses up front where the exact family's own products are blocked "
        "around OpenBLAS's crashing syrk: one limit and one version list for both",
    ("skcl.reproduce._runner", "skcl._exact.openblas"):
        "the protocol refuses, before any data loads, a scikit-learn model whose products would "
        "crash the loaded OpenBLAS: the exact family's limit and version list, not a copy",
    ("skcl.reproduce._method", "skcl.model_selection._sequence"):
        "the protocol learns scikit-learn baselines (GaussianNB, SGD) as the search does, and "
        "is_skcl_classifier is how the search tells them apart, not a public name",
}

#: Private names imported from another room, each with its reason.
#: Keys are (importing module, the imported name in full).
ALLOWED_PRIVATE_NAMES = {
    ("skcl.model_selection._candidates", "skcl.pipeline._is_fitted"):
        "scikit-learn's test of fittedness as skcl's Pipeline applies it to its steps; the "
        "search checks the same steps the same way",
    ("skcl.model_selection._prefix", "skcl.pipeline._is_fitted"):
        "scikit-learn's test of fittedness as skcl's Pipeline applies it to its steps; the "
        "search checks the same steps the same way",
    ("skcl.model_selection._sequence", "skcl.metrics._check_task_scoring"):
        "the search scores each task with the metrics' own scorer check",
    ("skcl.model_selection._sequence", "skcl.metrics._scorer_name"):
        "the search names its score columns as the metrics name a scorer",
}

_SAMPLE_WEIGHT = ("scikit-learn's own estimators check sample_weight with it (non-negative, "
                  "one per row, its dtype); there is no public equivalent")
_FEATURE_NAMES = ("the extractors take images, which validate_data would refuse, yet keep "
                  "feature_names_in_ as scikit-learn's transformers do")
_PIPELINE = "skcl's Pipeline is scikit-learn's, walked and timed as its own fit does"
_CONSTRAINTS = ("skcl's estimators declare _parameter_constraints in scikit-learn's own "
                "vocabulary, which it has not made public; _utils/validation.py is the adapter")

#: scikit-learn's private names (and names from its private modules) in use,
#: each with its reason. Keys are (importing module, the name in full).
ALLOWED_SKLEARN_PRIVATE = {
    ("skcl._sequential", "sklearn.utils.validation._check_sample_weight"): _SAMPLE_WEIGHT,
    ("skcl.feature_extraction._extractor", "sklearn.utils.validation._check_sample_weight"):
        _SAMPLE_WEIGHT,
    ("skcl.feature_extraction._backbone", "sklearn.utils.validation._check_feature_names"):
        _FEATURE_NAMES,
    ("skcl.feature_extraction._extractor", "sklearn.utils.validation._check_feature_names"):
        _FEATURE_NAMES,
    ("skcl.model_selection._sequence", "sklearn.utils.validation._num_samples"):
        "counts the rows of any array-like (lists, frames, sparse) as scikit-learn's splitters do",
    ("skcl.pipeline", "sklearn.base._fit_context"): _PIPELINE,
    ("skcl.pipeline", "sklearn.utils._user_interface._print_elapsed_time"): _PIPELINE,
    ("skcl.pipeline", "sklearn.pipeline._name_estimators"): _PIPELINE,
    **{("skcl._utils.validation", f"sklearn.utils._param_validation.{name}"): _CONSTRAINTS
       for name in ("Interval", "StrOptions", "InvalidParameterError",
                    "validate_parameter_constraints")},
    ("skcl._utils.progress", "sklearn.utils._param_validation.validate_parameter_constraints"):
        _CONSTRAINTS,
}


def room(module):
    """The top-level module or package of skcl that ``module`` belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def is_module(name):
    base = PACKAGE.parent / Path(*name.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def imports(path):
    """The (module, name or None) pairs a module imports, absolute, at any depth."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from ((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = node.module
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                full = f"{target}.{alias.name}"
                yield (full, None) if is_module(full) else (target, alias.name)


def private(name):
    return name.startswith("_") and not name.startswith("__")


def cross_room_imports():
    """What each module takes from another room: private modules and private names."""
    modules_found, names_found = set(), set()
    for path in modules():
        importer = module_name(path)
        for module, name in imports(path):
            if module.split(".")[0] != "skcl" or room(module) in ("", room(importer)):
                continue
            if name is not None and private(name):
                names_found.add((importer, f"{module}.{name}"))
            inner = module.split(".")[2:]  # below the room
            reaches_private = room(module) in FAMILIES or any(map(private, inner))
            if reaches_private and room(module) not in SHARED_LAYERS:
                # The families import one another never (tested above), and
                # below their estimators no other room is theirs to use.
                if room(importer) not in FAMILIES:
                    modules_found.add((importer, module))
    return modules_found, names_found


def test_no_room_takes_another_rooms_private_names():
    found = cross_room_imports()[1]
    assert not sorted(found - set(ALLOWED_PRIVATE_NAMES))
    assert not set(ALLOWED_PRIVATE_NAMES) - found


def test_public_rooms_reach_no_private_module_of_another():
    found = cross_room_imports()[0]
    assert not sorted(found - set(ALLOWED_PRIVATE_MODULES))
    assert not set(ALLOWED_PRIVATE_MODULES) - found


def sklearn_private_names(path):
    """scikit-learn's private names a module imports or reads off a module of it."""
    tree = ast.parse(path.read_text())
    sklearn_aliases = {}
    for module, name in imports(path):
        if module.split(".")[0] != "sklearn":
            continue
        full = module if name is None else f"{module}.{name}"
        if any(map(private, full.split("."))):
            yield full
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sklearn":
            sklearn_aliases.update({alias.asname or alias.name: f"{node.module}.{alias.name}"
                                    for alias in node.names})
        elif isinstance(node, ast.Import):
            sklearn_aliases.update({alias.asname or alias.name: alias.name for alias in node.names
                                    if alias.name.split(".")[0] == "sklearn"})
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and private(node.attr)
                and isinstance(node.value, ast.Name) and node.value.id in sklearn_aliases):
            yield f"{sklearn_aliases[node.value.id]}.{node.attr}"


def test_scikit_learn_private_names_are_named_with_their_reason():
    found = {(module_name(p), name) for p in modules() for name in sklearn_private_names(p)}
    assert not sorted(found - set(ALLOWED_SKLEARN_PRIVATE))
    assert not set(ALLOWED_SKLEARN_PRIVATE) - found


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
