/* tests/gpu/gpu_tiled.h - the tiled provider's GPU cases (gpu_tiled.c), run
 * by gpu-test --provider tiled. */
#ifndef MUSTER_GPU_TILED_H
#define MUSTER_GPU_TILED_H

#include "gpu_case.h"

/* Append every tiled case on up to maxR GPUs (kills: the SIGKILL cases too). */
void tl_cases(tcase_t *cases, int *ncases, int maxR, int kills);

#endif
