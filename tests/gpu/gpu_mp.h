/* tests/gpu/gpu_mp.h - the cusolvermp provider's GPU cases of gpu-test
 * (gpu_mp.c; geqrf's in gpu_mp_qr.c), run by gpu-test --provider cusolvermp from run-mp-tests.sh
 * (which finds NCCL and cuSOLVERMp for it). */
#ifndef MUSTER_GPU_MP_H
#define MUSTER_GPU_MP_H

#include "gpu_case.h"

/* Append the cusolvermp cases that need at most maxR GPUs. */
void mp_cases(tcase_t *cases, int *ncases, int maxR);

/* Its geqrf cases (gpu_mp_qr.c), provider mp, named "... [mp-qr]". */
void mp_qr_cases(tcase_t *cases, int *ncases, const gprov_t *mp, int maxR);

#endif
