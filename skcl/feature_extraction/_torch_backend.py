"""A torch network as the backbone: its weights, its device, its forward pass.

Both a ``torch.nn.Module`` given directly and a torchvision model (built in
``_torchvision_backend``) run here, in torch itself, so that their features
are torch's own forward pass, bit for bit.

torch and torchvision are optional (``pip install "skcl[torch]"``): they are
imported inside the functions that need them, so that skcl imports and
works without them.
"""

import contextlib
import copy
import os
import sys
import threading
from collections.abc import Mapping

import joblib

from ._feature_cache import function_identity

__all__ = [
    "frozen",
    "import_torch",
    "is_torch_module",
    "is_weights_path",
    "load_weights",
    "module_copy",
    "module_identity",
    "read_weights_file",
    "state_dict_hash",
    "torch_device",
    "torch_forward",
    "torch_precision",
]

_TORCH_EXTRA = (
    'pip install "skcl[torch]" (torch>=2.1 and torchvision>=0.16; for an NVIDIA GPU, '
    "torch's CUDA build: see https://pytorch.org/get-started/locally/)"
)

_WEIGHTS_FILE_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt", ".tar")

# torch's precision flags are global to the process: one forward at a time
# sets and restores them, so that two extractors of different precisions
# in threads (a search's candidates) cannot run under each other's flags.
_PRECISION_LOCK = threading.RLock()

# torch >= 2.9 sets TF32 per backend and operator (fp32_precision: "ieee" is
# full float32, "tf32" TensorFloat-32); the legacy allow_tf32 flags must not
# be mixed with them, so these are used wherever they exist.
_FP32_PRECISION_FLAGS = ("cuda.matmul", "cudnn.conv", "cudnn.rnn")


def import_torch(what):
    """torch (and torchvision), or an ImportError that says how to install them."""
    try:
        import torch
        import torchvision  # noqa: F401  (torchvision.models is imported by callers)
    except ImportError as error:
        raise ImportError(
            f"{what} runs in torch, which is not installed (or torchvision is not): "
            f"{_TORCH_EXTRA}. Without torch, pass a JAX function apply(params, images) "
            f"as the backbone."
        ) from error
    return torch


def is_torch_module(obj):
    """Whether ``obj`` is a ``torch.nn.Module``, without importing torch."""
    # A torch module can only exist once torch is imported: no import here.
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


def is_weights_path(weights):
    """Whether ``weights`` names a local file rather than published weights."""
    if isinstance(weights, os.PathLike):
        return True
    return isinstance(weights, str) and (
        os.sep in weights
        or "/" in weights
        or weights.lower().endswith(_WEIGHTS_FILE_SUFFIXES)
        or os.path.exists(weights)
    )


def read_weights_file(path, torch):
    """The state dict in a torch weights file, read without running its code.

    Parameters
    ----------
    path : str
        A file written by ``torch.save(model.state_dict(), path)``, or a
        checkpoint holding the state dict under ``"state_dict"`` or
        ``"model"``.
    torch : module
        torch, imported by the caller.

    Returns
    -------
    dict
    """
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # missing, truncated, pickled code, not torch's
        raise ValueError(
            f"{path} is not a readable torch weights file ({type(error).__name__}: "
            f"{error}); write one with torch.save(model.state_dict(), path)."
        ) from error
    for key in ("state_dict", "model"):  # common checkpoint layouts
        if isinstance(state, Mapping) and isinstance(state.get(key), Mapping):
            state = state[key]
    if not isinstance(state, Mapping):
        raise ValueError(f"{path} holds a {type(state).__name__}, not a state dict.")
    return dict(state)


def load_weights(model, state, source):
    """Load ``state`` into ``model``, strictly, with a ValueError when it does not fit.

    Parameters
    ----------
    model : torch.nn.Module
    state : (dict, str) or None
        The state dict and where it came from (for the message); None
        leaves the model as it is.
    source : str
        The network, as the message names it.
    """
    if state is None:
        return
    state, where = state
    try:
        model.load_state_dict(state, strict=True)
    except (RuntimeError, KeyError, TypeError) as error:
        raise ValueError(
            f"The weights in {where} do not fit {source}: they were probably "
            f"written for another architecture. {_first_lines(error)}"
        ) from error


def module_copy(module, state):
    """A copy of the user's torch module, with ``state`` loaded into it.

    A copy, so that ``eval()``, ``.to(device)`` and loaded weights leave
    the user's module as it was.
    """
    model = copy.deepcopy(module)
    load_weights(model, state, type(module).__name__)
    return model


def torch_device(device, torch):
    """The ``device`` parameter as a torch device that is there.

    Parameters
    ----------
    device : str
        "auto", "cpu", "cuda", "gpu" or a torch device such as "cuda:1".
    torch : module
        torch, imported by the caller.

    Returns
    -------
    torch.device
        With its index for a GPU, so that ``device_`` names the one used.
    """
    name = device.lower()
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    name = "cuda" + name[3:] if name.startswith("gpu") else name
    try:
        placed = torch.device(name)
    except RuntimeError as error:
        raise ValueError(f"device {device!r} is not a torch device: {error}") from error
    if placed.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(
                f"device={device!r}, but torch sees no CUDA GPU (torch "
                f"{torch.__version__}; a CPU-only build, or no driver). Use "
                f"device='auto' or 'cpu'."
            )
        if placed.index is None:
            placed = torch.device("cuda", torch.cuda.current_device())
    return placed


def frozen(model, device):
    """``model`` on ``device``, in evaluation mode, its parameters without gradients."""
    model = model.to(device).eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model


def module_identity(module, model):
    """What names the user's torch module for the cache.

    Parameters
    ----------
    module : torch.nn.Module
        The module given as the backbone.
    model : torch.nn.Module
        Its copy as built, whose repr lists the layers and their settings.

    Returns
    -------
    tuple
    """
    return (
        "torch", type(module).__module__, type(module).__qualname__,
        repr(model),  # the layers and their settings
        # Your forward's code: a changed forward is another network.
        *function_identity(type(module).forward)[2:],
    )


def state_dict_hash(model):
    """A hash of the model's weights (and buffers), as they are once built."""
    return joblib.hash({k: v.detach().cpu().numpy() for k, v in model.state_dict().items()})


def _flag_owner(torch, path):
    """The torch.backends object of ``path`` ("cudnn.conv"), or None when absent."""
    owner = torch.backends
    for part in path.split("."):
        owner = getattr(owner, part, None)
        if owner is None:
            return None
    return owner if hasattr(owner, "fp32_precision") else None


@contextlib.contextmanager
def torch_precision(torch, precision, device_type):
    """Run the block in ``precision``; every flag of torch is restored after it.

    "float32": TF32 off for CUDA matrix products and cuDNN convolutions
    (torch turns it on for cuDNN convolutions by default on Ampere and
    later GPUs, which moves features by about 1e-3). "tf32": TF32 on for
    both (float32 on a CPU, which has no TF32). "bfloat16": torch's
    autocast to bfloat16 on the device (CPUs too), TF32 off for what stays
    in float32.

    Parameters
    ----------
    torch : module
    precision : {"float32", "tf32", "bfloat16"}
    device_type : str
        "cpu" or "cuda".
    """
    mode = "tf32" if precision == "tf32" else "ieee"
    with _PRECISION_LOCK, contextlib.ExitStack() as stack:
        owners = [_flag_owner(torch, path) for path in _FP32_PRECISION_FLAGS]
        if all(owner is not None for owner in owners):
            saved = [(owner, owner.fp32_precision) for owner in owners]
            for owner in owners:
                owner.fp32_precision = mode
        else:  # torch < 2.9: the legacy flags
            saved = [(torch.backends.cuda.matmul, torch.backends.cuda.matmul.allow_tf32),
                     (torch.backends.cudnn, torch.backends.cudnn.allow_tf32)]
            for owner, _ in saved:
                owner.allow_tf32 = mode == "tf32"
        stack.callback(_restore_flags, saved)
        if precision == "bfloat16":
            stack.enter_context(torch.autocast(device_type, dtype=torch.bfloat16))
        yield


def _restore_flags(saved):
    for owner, value in saved:
        if isinstance(value, bool):
            owner.allow_tf32 = value
        else:
            owner.fp32_precision = value


def torch_forward(model, spec, batch, device, precision="float32"):
    """torchvision's ImageClassification transforms, then the model, in torch.

    Parameters
    ----------
    model : torch.nn.Module
        The frozen network, on ``device``.
    spec : dict
        ``preprocess_``.
    batch : ndarray of shape (n, H, W, C), uint8 or float32
        Checked images.
    device : str
        ``device_``.
    precision : {"float32", "tf32", "bfloat16"}, default="float32"
        The arithmetic of the network's forward pass (the preprocessing is
        float32 always); see :func:`torch_precision`.

    Returns
    -------
    features : ndarray of shape (n, n_features), float32
    """
    import torch
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms import functional as F

    with torch.inference_mode():
        x = torch.from_numpy(batch).to(device).permute(0, 3, 1, 2)
        if spec["to_rgb"]:
            x = x.expand(-1, 3, -1, -1)
        # The steps and functions of torchvision's ImageClassification (what
        # weights.transforms() returns): uint8 images are resized and cropped
        # as uint8, with its rounding, then scaled to [0, 1] and normalised.
        if spec["resize_size"] is not None:
            size = spec["resize_size"]
            size = list(size) if isinstance(size, tuple) else [size]
            x = F.resize(x, size, interpolation=InterpolationMode(spec["interpolation"]),
                         antialias=True)
        if spec["crop_size"] is not None:
            x = F.center_crop(x, list(spec["crop_size"]))
        x = F.convert_image_dtype(x, torch.float)
        if spec["mean"] is not None:
            x = F.normalize(x, list(spec["mean"]), list(spec["std"]))
        # Standard NCHW strides, as a DataLoader would give: a permuted or
        # expanded view counts as channels-last (even where torch calls it
        # contiguous, with one channel), which picks other kernels and so
        # changes the last bits of the features.
        x = torch.empty(x.shape, dtype=x.dtype, device=x.device).copy_(x)
        with torch_precision(torch, precision, x.device.type):
            features = model(x)
        return features.reshape(len(features), -1).float().cpu().numpy()


def _first_lines(error, n=6):
    """The first ``n`` lines of an error's message: torch lists every key."""
    lines = str(error).strip().splitlines()
    return "\n".join(lines[:n]) + ("\n..." if len(lines) > n else "")
