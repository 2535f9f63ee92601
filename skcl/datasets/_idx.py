"""Reader for IDX files, the format of MNIST, Fashion-MNIST and EMNIST.

An IDX file is a header followed by the raw array in C order:

- 2 zero bytes;
- one byte giving the element type (0x08 = uint8, 0x09 = int8,
  0x0B = int16, 0x0C = int32, 0x0D = float32, 0x0E = float64);
- one byte giving the number of dimensions d;
- d big-endian uint32 sizes;
- the data, big-endian.

So the magic number of an image file of uint8 is 0x00000803 (2051) and
that of a label file is 0x00000801 (2049). Files may be gzipped.
"""

import gzip
import math
from pathlib import Path

import numpy as np

__all__ = ["read_idx", "find_idx"]

_DTYPES = {
    0x08: np.dtype("u1"),
    0x09: np.dtype("i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


# deflate's largest ratio is about 1032: a .gz file of n bytes holds at most this many.
_MAX_DEFLATE_RATIO = 1040
_CHUNK = 1 << 24


def _declared_bytes(head):
    """The data bytes a header (magic and sizes) declares; 0 when incomplete."""
    dims = head[3]
    if len(head) < 4 + 4 * dims:
        return 0
    sizes = (int.from_bytes(head[4 + 4 * i : 8 + 4 * i], "big") for i in range(dims))
    return math.prod(sizes) * _DTYPES[head[2]].itemsize


def _read_at_most(f, path, declared, compressed):
    """The data after the header: one byte more than ``declared`` at most.

    Nothing is allocated for what the file cannot hold: a plain file's size
    is known, and a gzipped one holds at most ``_MAX_DEFLATE_RATIO`` times
    its size (beyond that it is truncated); the data are read a chunk at a
    time, so that a header's sizes never ask for memory the file's content
    does not fill.
    """
    size = path.stat().st_size
    if compressed and declared > _MAX_DEFLATE_RATIO * size:
        raise ValueError(
            f"{path} is truncated: its header declares {declared} bytes of data, more than "
            f"a gzip file of {size} bytes can hold."
        )
    if not compressed:  # its own size bounds what is read
        declared = min(declared, size)
    data = bytearray()
    try:
        while len(data) <= declared:
            chunk = f.read(min(_CHUNK, declared + 1 - len(data)))
            if not chunk:
                break
            data += chunk
    except MemoryError as error:
        raise MemoryError(
            f"{path}: its header declares {declared / 2**30:.3g} GiB of data, more than "
            "this process can hold."
        ) from error
    return bytes(data)


def find_idx(folder, name):
    """The path of ``name`` in ``folder``, or of ``name.gz``, or None."""
    folder = Path(folder)
    for candidate in (folder / name, folder / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    return None


def read_idx(path, *, ndim=None):
    """Read an IDX file (plain or gzipped) into a numpy array.

    Parameters
    ----------
    path : str or path-like
        The file; a name ending in ``.gz`` is decompressed.
    ndim : int, default=None
        The number of dimensions the file must have (3 for images, 1 for
        labels); None accepts any.

    Returns
    -------
    ndarray
        The array, in the file's element type (native byte order).

    Raises
    ------
    ValueError
        If the file is not IDX (bad magic number), has the wrong number of
        dimensions, or its size does not match its header (truncated or
        padded), or the gzip stream is corrupt.
    """
    path = Path(path)
    compressed = path.suffix == ".gz"
    opener = gzip.open if compressed else open
    try:
        with opener(path, "rb") as f:
            content = f.read(4)
            if len(content) == 4 and content[:2] == b"\x00\x00" and content[2] in _DTYPES:
                content += f.read(4 * content[3])  # the sizes
                content += _read_at_most(f, path, _declared_bytes(content), compressed)
    except (OSError, EOFError) as error:  # gzip.BadGzipFile is an OSError
        raise ValueError(f"Cannot read the IDX file {path}: {error}") from error
    if len(content) < 4:
        raise ValueError(f"{path} is not an IDX file: only {len(content)} bytes.")
    zero, code, dims = content[0:2], content[2], content[3]
    magic = int.from_bytes(content[:4], "big")
    if zero != b"\x00\x00" or code not in _DTYPES:
        raise ValueError(
            f"{path} is not an IDX file: its magic number is {magic:#010x}; "
            "IDX files start with 0x0000 then a type code (0x08 for uint8 "
            "images, e.g. 0x00000803 = 2051 for images, 0x00000801 = 2049 "
            "for labels)."
        )
    if ndim is not None and dims != ndim:
        raise ValueError(
            f"{path} holds a {dims}-dimensional array (magic number "
            f"{magic}), expected {ndim} dimensions "
            f"(magic number {0x800 + ndim}); are images and labels swapped?"
        )
    header = 4 + 4 * dims
    if len(content) < header:
        raise ValueError(f"{path} is truncated: its header is incomplete.")
    shape = tuple(
        int.from_bytes(content[4 + 4 * i : 8 + 4 * i], "big") for i in range(dims)
    )
    dtype = _DTYPES[code]
    expected = header + math.prod(shape) * dtype.itemsize
    if len(content) != expected:
        state = "truncated" if len(content) < expected else "longer than its header says"
        raise ValueError(
            f"{path} is {state}: its header gives shape {shape} "
            f"({expected} bytes in all) but the file has {len(content)} bytes."
        )
    array = np.frombuffer(content, dtype=dtype, offset=header).reshape(shape)
    # A writable array in native byte order, independent of the file buffer.
    return array.astype(dtype.newbyteorder("="))
