"""One BLAS thread beside torch: numpy's small products stop waiting on thread wake-ups.

numpy's BLAS (OpenBLAS in the wheels) runs a product over as many threads as there are
cores, and so does torch's OpenMP pool. Between two model calls a run does many small
numpy products (distances between word vectors, probe metrics); each one wakes BLAS
threads that must first get a core from torch's, which spin for a while after every
forward pass. Measured on 2 cores: a norm of 7,000 numbers takes 3 microseconds alone
and 0.1-4 milliseconds right after a forward pass, depending on the load. Products that
small gain nothing from a second thread, so a run that searches sets BLAS to one thread
(torch's own pool is untouched).
"""

from __future__ import annotations

__all__ = ["single_blas_thread"]


def single_blas_thread() -> bool:
    """Limit every BLAS library loaded in this process to one thread, for the rest of
    the process. Returns whether a BLAS library was found (threadpoolctl finds the ones
    numpy, scipy and friends have loaded)."""
    # deferred: threadpoolctl reads the loaded libraries, so it runs after numpy loads
    from threadpoolctl import threadpool_info, threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
    return any(info.get("user_api") == "blas" for info in threadpool_info())
