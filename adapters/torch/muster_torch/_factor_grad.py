"""The whole matrices a factorization's backward works on when the forward
ran with group= (_factorizations.py): every rank holds a column block of A
and of the factor the runtime left in A's place (muster_routine_outputs'
a_holds), the other factors whole.  The backward gathers A, that factor and
its gradient whole on every rank (all_gathers over the process group, as
the ops' derivatives do: _grad.py), applies the same whole-matrix rule as
without group=, and keeps this rank's columns of A_bar.

Contract (as the ops' replicated results, _grad.py): the gradients of the
whole factors are the same on every rank, and every rank runs the backward
(it is collective, like the forward)."""
import torch

from . import _dist, _factor_run, _lib, _runtime


class Whole:
    """One backward's view of the group: A's whole n, which factor the
    ranks hold blocks of (holds), gathers of blocks and this rank's columns."""

    def __init__(self, opts, a, routine, flags):
        pg, timeout = opts["group"], opts.get("timeout")
        self.name, self.rank, self.nranks = _dist.resolve(pg, timeout)
        self.m, self.k = a.shape
        self.dtype, self.device = a.dtype, a.device
        self.n = _dist.total_columns(self.k, pg, timeout)  # no rank knows n from its block
        self.holds = _factor_run.outputs(routine, flags, self.m, self.n)["a_holds"]
        self.thin_holds = _factor_run.outputs("gesvd", 0, self.m, self.n)["a_holds"]  # U, or V^H when wide

    def gather(self, block):
        """The whole m x n matrix from every rank's column block (A's, or of
        the factor in A's place, or its gradient: None gives zeros)."""
        if block is None:
            block = torch.zeros((self.m, self.k), dtype=self.dtype, device=self.device)
        return _dist.gather_columns([block], self.name, self.nranks, ncols=self.n)

    def whole(self, what, t, holds=None):
        """Factor (or gradient) `what` whole: gathered when it is the one in
        A's place (holds: of another form than the call's, e.g. the thin SVD
        a backward recomputes), as it is otherwise."""
        return self.gather(t) if what == (self.holds if holds is None else holds) else t

    def mine(self, ga):
        """This rank's columns of the whole A_bar."""
        c0, k = _runtime.block_cols(_lib.runtime(), self.n, self.nranks, self.rank)
        return ga[:, c0:c0 + k].contiguous()
