"""Batch dimensions for muster_torch.linalg: torch.linalg's broadcasting of
leading (batch) dimensions, run as one muster call per matrix.

muster solves one matrix per call (spread over devices); a batch of them is
a loop: the batch dimensions of the inputs are broadcast against each other
as torch.linalg does, every matrix is solved on its own, and the results
are stacked back into the batch shape.  Autograd runs through the loop
(indexing and torch.stack are differentiable).
"""
import torch


def is_vector_rhs(a, b) -> bool:
    """torch.linalg.solve's rule: B is a (batch of) vector(s) when it is 1-D,
    or when its shape is A's without the last dimension."""
    return b.dim() == 1 or (b.dim() == a.dim() - 1 and b.shape == a.shape[:-1])


def broadcast(name, a, b, vector):
    """(batch shape, A, B) with A and B expanded to the common batch shape
    (A keeps its last 2 dimensions, B its last 1 (vector) or 2)."""
    core = 1 if vector else 2
    if b.dim() < core:
        raise ValueError(f"muster_torch.linalg.{name}: B has shape {tuple(b.shape)}: a "
                         "vector (*, n) or a matrix (*, n, k)")
    try:
        batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:b.dim() - core])
    except RuntimeError:
        raise ValueError(f"muster_torch.linalg.{name}: the batch dimensions of A "
                         f"{tuple(a.shape[:-2])} and B {tuple(b.shape[:b.dim() - core])} do "
                         "not broadcast") from None
    return (batch, a.expand(batch + a.shape[-2:]),
            b.expand(batch + b.shape[b.dim() - core:]))


def each(fn, batch, *xs):
    """fn applied to each matrix of the inputs xs (all shaped batch + core),
    its results (a tensor or a tuple of tensors) stacked into batch + their
    shape.  An empty batch (one dimension 0) runs fn once on meta tensors
    for the result shapes."""
    if len(batch) == 0:
        return fn(*xs)
    flat = [x.reshape((-1,) + x.shape[len(batch):]) for x in xs]
    count = flat[0].shape[0]
    if count == 0:
        probe = fn(*[torch.empty(x.shape[1:], dtype=x.dtype, device="meta") for x in flat])
        return _map(lambda r: torch.empty(batch + r.shape, dtype=r.dtype, device=xs[0].device),
                    probe)
    outs = [fn(*[x[i] for x in flat]) for i in range(count)]
    if isinstance(outs[0], torch.Tensor):
        return torch.stack(outs).reshape(batch + outs[0].shape)
    return tuple(torch.stack(parts).reshape(batch + parts[0].shape) for parts in zip(*outs))


def _map(f, r):
    return f(r) if isinstance(r, torch.Tensor) else tuple(f(t) for t in r)
