/* tests/providers/fake_mp.c - stand-ins for NCCL (FAKE_NCCL_VERSION set:
 * libnccl.so.2 saying that version), cuBLASMp (FAKE_CUBLASMP:
 * libcublasmp.so.0, which cuSOLVERMp 0.9 needs loaded beside it) or
 * cuSOLVERMp (libcusolverMp.so.0; with FAKE_MP_NO_SVD without 0.9's Gesvd
 * and Polar, as 0.8 is),
 * exporting every symbol the cusolvermp provider resolves (mpapi.h), so
 * its library choice and refusals are tested without NVIDIA's libraries
 * (tests/unit/test_mp_provider.c).  Nothing here is ever called for real
 * work: every function fails. */
#define API __attribute__((visibility("default")))
#if defined(FAKE_CUBLASMP)
API int cublasMpCreate(void) { return 1; }
#elif defined(FAKE_NCCL_VERSION)
API int ncclGetVersion(int *v) {
  *v = FAKE_NCCL_VERSION;
  return 0;
}
API const char *ncclGetErrorString(int r) { return r ? "fake NCCL error" : "no error"; }
#define FAIL(name) \
  API int name(void) { return 3; }
FAIL(ncclGetUniqueId)
FAIL(ncclCommInitRankConfig)
FAIL(ncclCommGetAsyncError)
FAIL(ncclCommAbort)
FAIL(ncclCommDestroy)
FAIL(ncclGroupStart)
FAIL(ncclGroupEnd)
FAIL(ncclSend)
FAIL(ncclRecv)
FAIL(ncclAllReduce)
#else
#define FAIL(name) \
  API int name(void) { return 7; }
FAIL(cusolverMpCreate)
FAIL(cusolverMpDestroy)
FAIL(cusolverMpGetVersion)
FAIL(cusolverMpCreateDeviceGrid)
FAIL(cusolverMpDestroyGrid)
FAIL(cusolverMpCreateMatrixDesc)
FAIL(cusolverMpDestroyMatrixDesc)
FAIL(cusolverMpPotrf_bufferSize)
FAIL(cusolverMpPotrf)
FAIL(cusolverMpPotrs_bufferSize)
FAIL(cusolverMpPotrs)
FAIL(cusolverMpSyevd_bufferSize)
FAIL(cusolverMpSyevd)
FAIL(cusolverMpGetrf_bufferSize)
FAIL(cusolverMpGetrf)
FAIL(cusolverMpGetrs_bufferSize)
FAIL(cusolverMpGetrs)
FAIL(cusolverMpGeqrf_bufferSize)
FAIL(cusolverMpGeqrf)
FAIL(cusolverMpOrmqr_bufferSize)
FAIL(cusolverMpOrmqr)
FAIL(cusolverMpGels_bufferSize)
FAIL(cusolverMpGels)
FAIL(cusolverMpOrgqr_bufferSize)
FAIL(cusolverMpOrgqr)
#ifndef FAKE_MP_NO_SVD /* 0.9's (mpapi.h: MP_SOLVER091_SYMBOLS); solver08/ lacks them, as 0.8 does */
FAIL(cusolverMpGesvdDescriptorCreate)
FAIL(cusolverMpGesvdDescriptorDestroy)
FAIL(cusolverMpGesvdDescriptorSetAttribute)
FAIL(cusolverMpGesvd_bufferSize)
FAIL(cusolverMpGesvd)
FAIL(cusolverMpPolarDescriptorCreate)
FAIL(cusolverMpPolarDescriptorDestroy)
FAIL(cusolverMpPolar_bufferSize)
FAIL(cusolverMpPolar)
#endif
#endif
