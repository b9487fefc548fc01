"""muster_jax: multi-device dense solvers (potrs, potri, syevd, lu_solve,
least_squares) for JAX.

Every device of a mesh holds one column block of A; the muster runtime
gathers the shards at one call and runs a provider (cuSolverMg on GPUs,
LAPACK on the CPU) once.  The API follows jaxmg: potrs / potri / syevd with
mesh= and in_specs=, the *_shardmap_ctx variants (jaxmg's *_no_shardmap
names too) for use inside your own shard_map, cyclic_1d_layout and
calculate_all_valid_T_A.  See docs/jax.md.

Modules: _lib (loading the libraries, the runtime's C functions), _layout
(the layout rules, from the runtime), _sharding (meshes, specs, placing A),
_groups (what names a solve's group), _call (the per-device FFI call),
_cholesky (potrs, potri), _eigh (syevd), _general (lu_solve,
least_squares), _cholesky_rules / _eigh_rules / _general_rules (their
derivatives and implementations), _algebra (the rules' products),
_factor (solves with potrs's Cholesky factor), _cyclic (cyclic_1d_layout).
_args (checks of the caller's arguments), _program (one XLA program per
call).  linalg: jax.numpy.linalg / jax.scipy.linalg names on the same
solvers.  jaxmg.v0 / jaxmg.v1: jaxmg 0.0.x's and 1.4.x's call forms.
"""
from . import _lib
from ._lib import ffi_api_version, last_solve, lib_dir, release, strerror
from ._layout import calculate_all_valid_T_A, check_T_A, local_cols
from ._cyclic import cyclic_1d_layout, cyclic_1d_to_block
from ._cholesky import (
    potri,
    potri_no_shardmap,
    potri_shardmap_ctx,
    potrs,
    potrs_no_shardmap,
    potrs_shardmap_ctx,
)
from ._eigh import syevd, syevd_no_shardmap, syevd_shardmap_ctx
from ._general import least_squares, least_squares_shardmap_ctx, lu_solve, lu_solve_shardmap_ctx
from . import linalg

__version__ = _lib.version()

_lib.load()

__all__ = [
    "linalg", "potrs", "potri", "syevd", "lu_solve", "least_squares",
    "lu_solve_shardmap_ctx", "least_squares_shardmap_ctx",
    "potrs_shardmap_ctx", "potri_shardmap_ctx", "syevd_shardmap_ctx",
    "potrs_no_shardmap", "potri_no_shardmap", "syevd_no_shardmap",
    "cyclic_1d_layout", "cyclic_1d_to_block", "calculate_all_valid_T_A", "check_T_A",
    "local_cols", "strerror", "ffi_api_version", "lib_dir", "last_solve", "release",
]
