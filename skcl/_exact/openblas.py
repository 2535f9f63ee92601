"""OpenBLAS's threaded syrk crashes for wide products: the limit skcl keeps below.

OpenBLAS 0.3.30 (SciPy 1.17's wheel) and 0.3.31 (numpy 2.4's) segfault
in their threaded syrk (AᵀA, and LAPACK's Cholesky, whose trailing
updates are that syrk) for wide matrices: on two threads, measured by
``benchmarks/timing/bench_openblas_crash.py``, from 16,384 columns at 1,342 and
2,048 rows (15,000 and 14,000 ran), from 20,000 at 256 rows (18,000 ran)
and at 30,000 with as few as 16 rows (25,000 ran); numpy's and scipy's
Choleskys from 16,384 (14,000 ran). One thread never crashed. The
scipy-openblas64 wheels of 0.3.29 and 0.3.34 (the newest) crashed at the
same sizes (AᵀA of 16,384 × 1,342 and 23,000 × 256, potrf of 16,384,
through ctypes): no release is known to be free of it, so every OpenBLAS
on more than one thread is taken as affected.

skcl's own products and Choleskys stay below ``DIRECT_MAX_COLUMNS``
(:func:`.moments.gram`, :func:`.linalg.cholesky` build wider ones from
blocks), with any BLAS. Third-party code it calls (RanDumb's model, all
scikit-learn's) cannot be blocked: :func:`refuse_wide_products` refuses
it up front, naming the library and the workaround.
"""

import numbers
import os

from ..exceptions import CrashingBLASError

__all__ = ["DIRECT_MAX_COLUMNS", "MEASURED_CRASHING", "crashing_openblas",
           "refuse_wide_products"]

# The widest product and Cholesky skcl hands to BLAS / LAPACK whole: every
# probe at or below it ran (12,000 columns at 1,342 and 2,048 rows, 8,192 at
# up to 12,000; numpy's and scipy's Choleskys of 12,000 and 14,000), with a
# margin below the narrowest crash (16,384 columns).
DIRECT_MAX_COLUMNS = 12_000
# The releases seen to crash (none was seen not to), for the message.
MEASURED_CRASHING = ("0.3.29", "0.3.30", "0.3.31", "0.3.34")


def crashing_openblas():
    """The first loaded OpenBLAS running more than one thread (any release: see above).

    Returns
    -------
    dict or None
        threadpoolctl's description of the library (``version``,
        ``filepath``, ``num_threads``, ``architecture``), or None when no
        loaded BLAS is affected.
    """
    import numpy  # noqa: F401  (loads numpy's and scipy's OpenBLAS for threadpoolctl)
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_info

    for info in threadpool_info():
        if info.get("internal_api") == "openblas" and info.get("num_threads", 1) > 1:
            return info
    return None


def refuse_wide_products(n_columns, what):
    """Raise before ``what`` hands AᵀA of ``n_columns`` columns to a crashing OpenBLAS.

    Parameters
    ----------
    n_columns : int
        The columns of the widest product or Cholesky ``what`` runs.
    what : str
        Who runs it, for the message (e.g. "RanDumbJoint(n_components=25000)").

    Raises
    ------
    skcl.exceptions.CrashingBLASError
        A RuntimeError, above ``DIRECT_MAX_COLUMNS`` columns with an OpenBLAS on more
        than one thread.
    """
    if not isinstance(n_columns, numbers.Integral) or n_columns <= DIRECT_MAX_COLUMNS:
        return  # a setting of the wrong type is its validator's to refuse
    info = crashing_openblas()
    if info is None:
        return
    raise CrashingBLASError(
        f"{what} runs scikit-learn's products and Choleskys of {n_columns:,} columns, "
        f"which segfault in the loaded OpenBLAS {info['version']} "
        f"({os.path.basename(info['filepath'])}, {info['num_threads']} threads) above "
        f"{DIRECT_MAX_COLUMNS:,} columns. Run it on one BLAS thread "
        "(OPENBLAS_NUM_THREADS=1 before Python starts, or inside "
        "threadpoolctl.threadpool_limits(1, user_api='blas')), or with another BLAS (MKL); "
        f"OpenBLAS {', '.join(MEASURED_CRASHING)} all crashed.")
