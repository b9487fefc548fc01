# tools/ci/openblas-kernels.sh - sourced by tests/run-all.sh and
# tests/mpi/run-mpi-tests.sh: on a CPU with AVX2 where OpenBLAS picked its
# Prescott (SSE3) kernels, export OPENBLAS_CORETYPE=Haswell and say so.
#
# Why: OpenBLAS 0.3.21 (Debian 12) falls back to Prescott on a CPU it does
# not know (CI's and the development VMs' "Intel(R) Xeon(R) Processor"), and
# those kernels give NaNs that depend on what lies past the arrays: ssyevd
# in concurrent calls with OpenBLAS's own threads (lapack_provider_
# concurrent_calls: 4 of 60 runs), pssyevd f32 after other solves in the
# process (the MPI driver, one seed every time).  Both pass with Haswell or
# SkylakeX kernels (docs/providers/lapack.md, "Old x86 cores").  Not ours to fix;
# the tests that exist to run the old kernels
# (lapack_provider_old_kernels_*) set OPENBLAS_CORETYPE themselves.  A
# value already set is kept.
openblas_corename() {
  python3 -c 'import ctypes; l = ctypes.CDLL("libopenblas.so.0"); f = l.openblas_get_corename
f.restype = ctypes.c_char_p; print(f().decode())' 2>/dev/null
}
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -qw avx2 /proc/cpuinfo && [ "$(openblas_corename)" = Prescott ]; then
  export OPENBLAS_CORETYPE=Haswell
  echo "OpenBLAS picked its Prescott kernels on a CPU with AVX2: OPENBLAS_CORETYPE=Haswell (tools/ci/openblas-kernels.sh)"
fi
