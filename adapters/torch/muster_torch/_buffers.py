"""Work buffers: what one rank hands the runtime, as torch tensors.

muster shards are column-major (include/muster.h); a torch tensor of shape
(k, n), contiguous, is exactly the column-major n x k matrix, so a rank's
column block `a` (n x k) is copied into `empty(k, n)` as `a.mT`, B (n x
nrhs) into `empty(nrhs, n)`, and results come back as `.mT` views: column-
major (n x k) tensors, as torch.linalg returns them.  The copy is needed
anyway: every routine overwrites its inputs, and muster_torch never changes
a caller's tensor.

Where a buffer lives:
  * one process, many devices (muster_solve_all): torch.empty on the
    shard's device (CPU, or the CUDA caching allocator);
  * one process per rank, CUDA: torch.empty on the device (cudaMalloc'ed
    blocks, which the provider exports by CUDA IPC handle plus offset);
  * one process per rank, CPU: the leader must map the memory, so it comes
    from muster_shard_alloc, kept per (group, role) and grown when needed
    (the leader maps it once, not at every call); results are copied out.
"""
import ctypes
import threading

import torch

from . import _lib, _runtime

# torch dtype -> (muster dtype name, eigenvalue dtype)
DTYPES = {
    torch.float32: ("f32", torch.float32),
    torch.float64: ("f64", torch.float64),
    torch.complex64: ("c64", torch.float32),
    torch.complex128: ("c128", torch.float64),
}


def muster_dtype(t: torch.dtype) -> int:
    """The runtime's value for a torch dtype (muster_dtype_from_name)."""
    return _runtime.enum_value(_lib.runtime(), "dtype", DTYPES[t][0])


def real_dtype(t: torch.dtype) -> torch.dtype:
    """The eigenvalues' dtype for matrices of dtype t."""
    return DTYPES[t][1]


def ptr(t) -> int | None:
    """Data pointer of a tensor, None (NULL) when it has no elements."""
    return t.data_ptr() if t is not None and t.numel() else None


def stream_of(device: torch.device) -> int | None:
    """The caller's current CUDA stream on `device` (muster_shard_t.stream):
    the provider orders its reads after the work queued there."""
    if device.type != "cuda":
        return None
    return torch.cuda.current_stream(device).cuda_stream


def column_major(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """x (rows x cols) copied into a (cols, rows) buffer: column-major x."""
    if out is None:
        out = torch.empty((x.shape[1], x.shape[0]), dtype=x.dtype, device=x.device)
    out.copy_(x.mT)
    return out


class HostPool:
    """muster_shard_alloc memory for ranks that are processes on the CPU,
    one region per (group, role), grown (never shrunk) as calls need.

    Views handed out are valid until the next call of the same group: the
    caller copies results out before returning them."""

    def __init__(self):
        self._lock = threading.Lock()
        self._regions = {}  # (group, role) -> (address, bytes)

    def view(self, group: str, role: str, shape, dtype: torch.dtype) -> torch.Tensor:
        """A tensor of `shape` over the group's region for `role` ("a", "b", "w")
        (an ordinary empty tensor when `shape` has no element: a rank holding
        no column passes a NULL shard)."""
        nbytes = dtype.itemsize * int(torch.Size(shape).numel())
        if nbytes == 0:
            return torch.empty(shape, dtype=dtype)
        lib = _lib.runtime()
        with self._lock:
            addr, size = self._regions.get((group, role), (None, 0))
            if size < nbytes:
                if addr:
                    lib.muster_shard_free(addr)
                    del self._regions[(group, role)]
                p = ctypes.c_void_p()
                rc = lib.muster_shard_alloc(nbytes, ctypes.byref(p))
                if rc:
                    raise _lib.error(rc, f"muster_torch: muster_shard_alloc({nbytes})")
                addr, size = p.value, nbytes
                self._regions[(group, role)] = (addr, size)
        raw = (ctypes.c_char * nbytes).from_address(addr)
        return torch.frombuffer(raw, dtype=dtype, count=nbytes // dtype.itemsize).view(shape)


host_pool = HostPool()
