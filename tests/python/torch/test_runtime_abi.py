"""adapters/common/runtime.py (every adapter's _runtime.py) mirrors muster.h
in ctypes: a C program compiled against include/muster.h prints each
struct's size and field offsets and each constant, and they must equal the
ctypes ones.  A field added to muster.h without runtime.py fails here."""
import ctypes
import pathlib
import subprocess

import muster_torch._runtime as rt
import muster_torch._solve as solve
import muster_torch._store as store

REPO = pathlib.Path(__file__).resolve().parents[3]

# ctypes struct -> (C type, C field names in order)
STRUCTS = {
    rt.Named: ("muster_named_t",
               ("group", "rank", "nranks", "job", "timeout_s", "device", "tag", "n")),
    rt.SolveArgs: ("muster_solve_args_t",
                   ("routine", "dtype", "n", "nrhs", "tile", "layout", "flags", "provider")),
    rt.Shard: ("muster_shard_t",
               ("mem", "device", "a", "lda", "col0", "ncols", "b", "ldb", "w", "stream")),
    rt.SolveResult: ("muster_solve_result_t", ("info", "tile", "seconds", "provider", "reason")),
    # adapters/common/store.py's (muster/store.h, muster/provider_v2.h)
    store._KV: ("muster_kv_t", ("ctx", "set", "get", "del")),
    store._StoreOpts: ("muster_store_opts_t", ("name", "rank", "size", "timeout_s", "beat_s")),
    store._CommOpts: ("muster_comm_opts_t", ("kind", "rank", "size", "name", "job", "timeout_s", "device",
                                             "allgather", "ctx")),
    store._Query: ("muster_provider_query_t",
                   ("routine", "dtype", "n", "nrhs", "tile", "layout", "flags", "mem", "nranks", "ndevices",
                    "nnodes", "span", "devices", "free_bytes", "total_bytes")),
}
CONSTANTS = {
    "MUSTER_MEM_HOST": rt.MEM_HOST, "MUSTER_MEM_CUDA": rt.MEM_CUDA,
    "MUSTER_LAYOUT_BLOCK": rt.LAYOUT_BLOCK, "MUSTER_LAYOUT_CYCLIC": rt.LAYOUT_CYCLIC,
    "MUSTER_NO_VECTORS": rt.NO_VECTORS, "MUSTER_NO_FACTOR": rt.NO_FACTOR,
    "MUSTER_LOGDET": solve.LOGDET,  # muster_torch's own (runtime.py is shared, not mine)
    "MUSTER_MAX_RANKS": rt.MAX_RANKS, "MUSTER_MAX_NAME": rt.MAX_NAME,
    "MUSTER_MAX_JOB": rt.MAX_JOB, "MUSTER_MAX_REASON": rt.MAX_REASON,
    "MUSTER_EINVAL": rt.EINVAL, "MUSTER_ENOMEM": rt.ENOMEM, "MUSTER_EPOISONED": rt.EPOISONED,
    "MUSTER_DEFAULT_TIMEOUT_S * 1000": int(rt.DEFAULT_TIMEOUT_S * 1000),
    "MUSTER_ENOENT": store.ENOENT, "MUSTER_ESYS": store.ESYS,
    "MUSTER_SPAN_PROCESSES": store.SPAN_PROCESSES, "MUSTER_SPAN_NODES": store.SPAN_NODES,
}


def _c_program():
    lines = ["#include <stdio.h>", "#include <stddef.h>", "#include <muster.h>", "#include <muster/store.h>",
             "#include <muster/provider_v2.h>",
             "int main(void) {"]
    for ctype, fields in STRUCTS.values():
        lines.append(f'  printf("{ctype} size %zu\\n", sizeof({ctype}));')
        for f in fields:
            lines.append(f'  printf("{ctype} {f} %zu\\n", offsetof({ctype}, {f}));')
    for name in CONSTANTS:
        lines.append(f'  printf("{name} %lld\\n", (long long)({name}));')
    return "\n".join(lines + ["  return 0;", "}"]) + "\n"


def test_ctypes_mirror_matches_muster_h(tmp_path):
    src, exe = tmp_path / "abi.c", tmp_path / "abi"
    src.write_text(_c_program())
    subprocess.run(["gcc", "-std=gnu11", "-I", str(REPO / "include"), "-o", str(exe), str(src)],
                   check=True)
    c = {}
    for line in subprocess.run([str(exe)], check=True, capture_output=True,
                               text=True).stdout.splitlines():
        *key, value = line.split()
        c[" ".join(key)] = int(value)
    py = {}
    for struct, (ctype, fields) in STRUCTS.items():
        assert [f[0] for f in struct._fields_] == list(fields), ctype
        py[f"{ctype} size"] = ctypes.sizeof(struct)
        for f in fields:
            py[f"{ctype} {f}"] = getattr(struct, f).offset
    py.update(CONSTANTS)
    assert py == c
