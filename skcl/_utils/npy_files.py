""".npy and .npz files read without pickle, their sizes checked before allocating.

``np.load(path, allow_pickle=False)`` runs no code, but it trusts a
header's shape: an array of a zip archive is allocated whole, at the
header's size, before its data are read, so a crafted file of a few bytes
asks for terabytes and a bare ``MemoryError`` escapes. Here the header is
read first, refused unless its dtype holds no Python objects and its bytes
fit in what the file holds, and only then are the data read, at most that
many bytes.
"""

import math
import zipfile
import zlib

import numpy as np
from numpy.lib import format as npy_format

__all__ = ["read_npy", "read_npz"]

_HEADER_READERS = {
    (1, 0): npy_format.read_array_header_1_0,
    (2, 0): npy_format.read_array_header_2_0,
}


def read_npy(file, size, *, dtype=None, shape=None):
    """One array of a ``.npy`` stream, its header checked against ``size``.

    Parameters
    ----------
    file : binary file object
        Open at its start, position 0 (a file, or a member of a zip archive).
    size : int
        How many bytes the stream holds, header included.
    dtype, shape : optional
        What the array must be; another is refused before its data are read.

    Returns
    -------
    ndarray
        A writable array that owns its data.

    Raises
    ------
    ValueError
        When the stream is not ``.npy`` (versions 1.0 and 2.0), its dtype
        holds Python objects (which would need pickle), it is not the
        ``dtype`` or ``shape`` asked for, its header asks for more bytes than
        the stream holds, or it is truncated.
    """
    version = npy_format.read_magic(file)
    if version not in _HEADER_READERS:
        raise ValueError(f"an .npy stream of format version {version}")
    stored_shape, fortran_order, stored_dtype = _HEADER_READERS[version](file)
    if stored_dtype.hasobject:
        raise ValueError(
            f"an array of dtype {stored_dtype} holds Python objects, refused (no pickle)"
        )
    if (dtype is not None and stored_dtype != dtype) or (
            shape is not None and stored_shape != tuple(shape)):
        raise ValueError(f"an array of {stored_dtype} {stored_shape}, not {dtype} {shape}")
    shape, dtype = stored_shape, stored_dtype
    n_bytes = math.prod(shape) * dtype.itemsize
    available = size - file.tell()  # the bytes after the header
    if n_bytes > available:
        raise ValueError(
            f"an array of shape {shape} and dtype {dtype} needs {n_bytes} bytes, "
            f"the file holds {max(available, 0)}"
        )
    data = file.read(n_bytes)
    if len(data) != n_bytes:
        raise ValueError(f"truncated: {len(data)} of the array's {n_bytes} bytes")
    array = np.frombuffer(data, dtype=dtype)
    if fortran_order:
        return array.reshape(shape[::-1]).T.copy()
    return array.reshape(shape).copy()


def read_npz(path, names):
    """The arrays ``names`` of an ``.npz`` archive, each read by :func:`read_npy`.

    Parameters
    ----------
    path : str or path-like
    names : sequence of str
        The arrays wanted (without ``.npy``).

    Returns
    -------
    dict of str to ndarray

    Raises
    ------
    OSError
        When the file cannot be opened.
    KeyError
        When an array is missing.
    ValueError
        When the file is not a zip archive of ``.npy`` arrays (a plain
        ``.npy`` or a pickle included), or an array is refused by
        :func:`read_npy`.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            arrays = {}
            for name in names:
                info = archive.getinfo(f"{name}.npy")  # KeyError when missing
                with archive.open(info) as member:
                    arrays[name] = read_npy(member, info.file_size)
            return arrays
    except (zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError) as error:
        raise ValueError(
            f"not named arrays in an .npz archive ({type(error).__name__}: {error})"
        ) from error
