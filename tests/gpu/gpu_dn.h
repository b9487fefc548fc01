/* tests/gpu/gpu_dn.h - the cusolverdn provider's GPU cases (gpu_dn.c), run
 * by gpu-test --provider cusolverdn. */
#ifndef MUSTER_GPU_DN_H
#define MUSTER_GPU_DN_H

#include "gpu_case.h"

/* Append every cusolverdn case (kills: the SIGKILL cases too). */
void dn_cases(tcase_t *cases, int *ncases, int kills);

/* Append the getrs, gels and potrs-with-log-det cases (gpu_dn_general.c)
 * of provider dn. */
void dn_general_cases(tcase_t *cases, int *ncases, const gprov_t *dn);

/* Append the geqrf, gesvd and polar cases (gpu_dn_factors.c) of provider
 * dn, each named "... [factors]". */
void dn_factor_cases(tcase_t *cases, int *ncases, const gprov_t *dn);

#endif
