"""torch.func.vmap rules of the ops (torch.library.register_vmap, torch >=
2.4): without them vmap stops at "Batching rule not implemented for
muster::potrs".

  * A batched (any of its shards has a vmapped dimension): one call of the
    op per batch element, results stacked along dimension 0.  Each call is
    a whole muster solve (a collective when A is spread over ranks).
  * A shared (no shard batched) and only B batched (potrs, potrs_logdet,
    getrs, gels): ONE call, the batch moved into B's columns:
    A [X_1 ... X_b] = [B_1 ... B_b].  potrs_logdet's log det is then
    unbatched (out_dim None): the same A for every element.

The rules are collective exactly as the ops are: with group=, every rank
must vmap over the same batch size (one muster call per element, in order).
"""
import torch

from ._ops import gels_op, getrs_op, potri_op, potrs_logdet_op, potrs_op, syevd_op


def _take(x, d, i):
    """Element i of x along its vmapped dimension d (lists element-wise)."""
    if isinstance(x, (list, tuple)):
        return [_take(t, dd, i) for t, dd in zip(x, d)]
    return x if d is None else x.select(d, i)


def _stack(outs):
    """Per-element results (a tensor, a list, or a tuple of those) stacked
    along dimension 0, and the matching out_dims."""
    first = outs[0]
    if isinstance(first, torch.Tensor):
        return torch.stack(outs), 0
    parts = [_stack(list(p)) for p in zip(*outs)]
    results, dims = [p[0] for p in parts], [p[1] for p in parts]
    if isinstance(first, tuple):
        return tuple(results), tuple(dims)
    return results, dims


def _loop(op):
    def rule(info, in_dims, *args):
        outs = [op(*[_take(x, d, i) for x, d in zip(args, in_dims)])
                for i in range(info.batch_size)]
        return _stack(outs)
    return rule


def _a_shared(in_dims):
    return all(d is None for d in in_dims[0])


def _b_in_columns(b, d):
    """B_1 ... B_b (b moved to dim 0) side by side: (rows, b * k) or
    (rows, b) for vectors; returns it and how to undo it on X."""
    b = b.movedim(d, 0)
    count = b.shape[0]
    if b.dim() == 2:  # a batch of vectors: one column each
        return b.mT, lambda x: x.mT
    k = b.shape[2]
    wide = b.permute(1, 0, 2).reshape(b.shape[1], count * k)
    return wide, lambda x: x.reshape(x.shape[0], count, k).permute(1, 0, 2)


def _with_rhs(op, logdet=False):
    """The rule of an op taking (a, b, ...): one call when only b is batched."""
    loop = _loop(op)

    def rule(info, in_dims, a, b, *rest):
        if not _a_shared(in_dims) or in_dims[1] is None:
            return loop(info, in_dims, a, b, *rest)
        wide, unstack = _b_in_columns(b, in_dims[1])
        out = op(a, wide, *rest)
        if logdet:
            return (unstack(out[0]), out[1]), (0, None)
        return unstack(out), 0
    return rule


potrs_op.register_vmap(_with_rhs(potrs_op))
potrs_logdet_op.register_vmap(_with_rhs(potrs_logdet_op, logdet=True))
getrs_op.register_vmap(_with_rhs(getrs_op))
gels_op.register_vmap(_with_rhs(gels_op))
potri_op.register_vmap(_loop(potri_op))
syevd_op.register_vmap(_loop(syevd_op))
