"""muster_torch: multi-device dense solvers for PyTorch: potrs (with log det
A on request), potri, syevd for Hermitian A; getrs (general A) and gels
(least squares, tall A).

A matrix held in column blocks, one per device, is solved in one call by
the muster runtime: cuSolverMg on NVIDIA GPUs, LAPACK on the CPU.
The caller holds the blocks either in one process (a list of tensors, one
per device) or one per process (torchrun: a tensor and group=, or a
DTensor).  The ops are torch.library custom ops (muster::potrs,
muster::potrs_logdet, muster::potri, muster::syevd, muster::getrs,
muster::gels) with fake and autograd registrations, so meta
tensors, torch.compile and autograd work.  See docs/torch.md.

Modules: _runtime (libmuster's C API in ctypes, shared with the other
adapters), _lib (loading it; errors as exceptions), _buffers (work buffers,
dtypes), _checks (dtype and shape checks), _solve (one call of the
runtime), _ops (the custom ops and fake implementations), _grad (their
derivatives), _vmap (their torch.func.vmap rules), _dist (process
groups: group names, gathers), _api (the public functions), linalg
(torch.linalg's names: solve, eigh, eigvalsh, inv, lstsq, slogdet), with
_batch (its batch dimensions) and _linalg_checks (its argument checks).
"""
from . import _grad  # noqa: F401  (registers the derivatives)
from . import _vmap  # noqa: F401  (registers the torch.func.vmap rules)
from . import linalg
from ._api import (block_columns, cat_columns, gels, getrs, least_squares, lu_solve, potri,
                   potrs, split_columns, syevd)
from ._dist import group_name
from ._lib import (
    MusterError,
    MusterLinAlgError,
    MusterMemoryError,
    MusterNotFoundError,
    MusterNotImplementedError,
    MusterPermissionError,
    MusterRuntimeError,
    MusterTimeoutError,
    MusterValueError,
    lib_dir,
    release,
    strerror,
)

from . import _lib, _runtime

__version__ = _runtime.package_version("muster_torch")

# the libraries now, so that a package without them fails at import, not at
# its first call (the message says what is missing and how to get it)
_lib.lib_dir()

__all__ = [
    "linalg", "potrs", "potri", "syevd", "getrs", "gels", "lu_solve", "least_squares", "block_columns", "split_columns", "cat_columns", "group_name",
    "lib_dir", "strerror", "release", "MusterError", "MusterLinAlgError", "MusterValueError",
    "MusterTimeoutError", "MusterRuntimeError", "MusterMemoryError", "MusterPermissionError",
    "MusterNotFoundError", "MusterNotImplementedError",
]
