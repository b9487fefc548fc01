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

/* One factor case (a gc special) of any provider c->prov: A m x n (c->m,
 * c->n; rank-deficient of rank c->shift when > 0; NaN with c->nan_in) made
 * on the host, put in every rank's columns (c->layout, lda m +
 * c->lda_extra), solved c->reps times, checked by chk_factors on the host
 * (every rank's B and W the same); an expected error: the code on every
 * rank, nothing written (NaN: the message names it).  0 when it passed. */
int gd_factor_case(const tcase_t *c, int ndev);

#endif
