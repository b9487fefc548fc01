"""The argument checks of muster_torch.linalg, named after its functions:
TypeError for what is not a tensor, ValueError for shapes and options
(torch.linalg raises RuntimeError for both).  The ops check dtypes."""
import torch

ASSUME = ("gen", "pos")


def square(name, a):
    if not isinstance(a, torch.Tensor):
        raise TypeError(f"muster_torch.linalg.{name}: A is a {type(a).__name__}, not a "
                        "torch.Tensor")
    if a.dim() < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"muster_torch.linalg.{name}: A has shape {tuple(a.shape)}: a square "
                         "matrix or a batch of them (*, n, n)")


def is_pos(name, value) -> bool:
    """assume=: True for "pos" (Hermitian positive definite A), False for
    "gen" (a general A)."""
    if value not in ASSUME:
        raise ValueError(f"muster_torch.linalg.{name}: assume={value!r}: 'gen' (a general "
                         "A) or 'pos' (Hermitian positive definite A)")
    return value == "pos"


def uplo(name, value):
    if value not in ("L", "U"):
        raise ValueError(f"muster_torch.linalg.{name}: UPLO={value!r}: 'L' or 'U'")


def lstsq_vector(a, b):
    """torch.linalg.lstsq's rule: B is a (batch of) vector(s) when it has
    one dimension less than A; otherwise as many."""
    if not isinstance(b, torch.Tensor) or b.dim() not in (a.dim() - 1, a.dim()):
        raise ValueError(f"muster_torch.linalg.lstsq: A has shape {tuple(a.shape)}, B "
                         f"{tuple(getattr(b, 'shape', ()))}: B must have as many dimensions "
                         "as A (*, m, k), or one less (*, m)")
    return b.dim() == a.dim() - 1


def rows_match(name, a, b, vector, left=True):
    """B is a tensor with A's rows (left) or columns (left=False), as the
    equation needs."""
    if not isinstance(b, torch.Tensor):
        raise TypeError(f"muster_torch.linalg.{name}: B is a {type(b).__name__}, not a "
                        "torch.Tensor")
    if b.dim() < (1 if vector else 2):
        raise ValueError(f"muster_torch.linalg.{name}: B has shape {tuple(b.shape)}: a "
                         "vector (*, n) or a matrix (*, n, k)")
    rows = b.shape[-1] if vector or not left else b.shape[-2]
    if rows != a.shape[-2]:
        eq = "A X = B" if left else "X A = B"
        raise ValueError(f"muster_torch.linalg.{name}: A has shape {tuple(a.shape)}, B "
                         f"{tuple(b.shape)}: {eq} needs B's {'rows' if left else 'columns'} "
                         f"to be A's {a.shape[-2]} rows")


def matrix(name, a):
    if not isinstance(a, torch.Tensor):
        raise TypeError(f"muster_torch.linalg.{name}: A is a {type(a).__name__}, not a "
                        "torch.Tensor")
    if a.dim() < 2:
        raise ValueError(f"muster_torch.linalg.{name}: A has shape {tuple(a.shape)}: a matrix "
                         "(*, m, n)")
