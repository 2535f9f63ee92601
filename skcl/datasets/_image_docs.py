"""The sections the image loaders' docstrings share.

The loaders take the same parameters and return the same kind of Bunch,
so those sections are written once here; :func:`fill_doc` puts them in
place of ``{sections}`` in a loader's docstring, filled in with the
loader's own file layout, number of tasks and shapes.
"""

__all__ = [
    "fill_doc",
    "PARAMETERS",
    "ISIC_PARAMETERS",
    "SEQUENCE_RETURNS",
    "PRETRAINING_RETURNS",
    "MNIST_LAYOUT",
    "FASHION_LAYOUT",
    "CIFAR10_LAYOUT",
    "GRAY",
    "COLOUR",
]

PARAMETERS = """
    Parameters
    ----------
    root : str or path-like, default=None
        The data folder (see :func:`get_data_home`): ``root``, else the
        environment variable ``SKCL_DATA_DIR``, else ``~/skcl_data``.
        Files are expected in torchvision's layout below it: {layout}.
    download : bool, default=False
        When the files are missing, download them with torchvision (needs
        ``pip install "skcl[download]"``) into that layout. Without it a
        missing file raises :class:`FileNotFoundError` naming the files
        expected and where.
    random_state : int, default=1337
        Seed of the stratified validation split (the paper's seed).
"""
ISIC_PARAMETERS = """
    Parameters
    ----------
    root : str or path-like, default=None
        The data folder (see :func:`get_data_home`); the collection is read
        from ``<root>/{folder}/``: the images ``<isic_id>.jpg`` and the
        ``metadata.csv`` that the ISIC archive's download tool writes next
        to them (columns ``isic_id`` and ``diagnosis``; rows of other
        diagnoses are ignored).
    download : bool, default=False
        Must stay False: ISIC data needs a manual download (the error for
        True or for missing files says where to put it).
    random_state : int, default=1337
        Seed of both stratified splits (the paper's seed).
    cache : bool, default=False
        Decoding and resizing thousands of JPEGs takes a while (about 5 ms
        per 600×450 image on a 2-core machine: about a minute for
        HAM10000, longer for BCN20000's larger images). With True, the resized images are kept in
        ``<root>/{folder}/skcl_images_32x32.npz`` (no pickle) and read from
        there next time; delete that file after changing the images.
"""
SEQUENCE_RETURNS = """
    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``train``, ``validation``, ``test``: lists of {n_tasks} ``(X, y)``
        tasks, ``X`` uint8 of shape {shape}, ``y`` int64. ``classes`` (to
        pass as ``partial_fit(..., classes=...)``), ``target_names``,
        ``task_classes`` (the original class names of each task),
        ``task_labels`` (the labels of each task: those that compete when
        it is scored task-incrementally), ``scenario`` (``"class"`` or
        ``"domain"``: what the labels are for), ``name`` and ``DESCR``.
"""
PRETRAINING_RETURNS = """
    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``train``, ``validation``, ``test``: one ``(X, y)`` pair each,
        ``X`` uint8 of shape {shape}, ``y`` int64 in 0..{last}.
        ``classes``, ``target_names``, ``name`` and ``DESCR``.
"""


def fill_doc(*sections, **fields):
    """Decorator: replace ``{sections}`` in the docstring by ``sections``.

    Parameters
    ----------
    *sections : str
        Sections of this module (e.g. :data:`PARAMETERS`), in order.
    **fields
        The values of their ``{placeholders}`` (``layout``, ``n_tasks``,
        ``shape``, ``last``, ``folder``).

    Returns
    -------
    callable
        The decorator, which returns the function it was given.
    """

    def decorate(function):
        # str.replace, not str.format: docstrings hold other braces
        # (load_bcn12's ``{class: m / n_class}``).
        function.__doc__ = function.__doc__.replace(
            "{sections}", "".join(s.format(**fields) for s in sections)
        )
        return function

    return decorate


# The files of each dataset below the data folder, for ``layout``.
MNIST_LAYOUT = (
    "``MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte`` (or ``.gz``)"
)
FASHION_LAYOUT = (
    "``FashionMNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte`` "
    "(or ``.gz``)"
)
CIFAR10_LAYOUT = (
    "``cifar-10-batches-py/{data_batch_1..5, test_batch, batches.meta}``"
)
# The shapes of a task's images, for ``shape``.
GRAY = "(n_task_samples, 28, 28)"
COLOUR = "(n_task_samples, 32, 32, 3)"
