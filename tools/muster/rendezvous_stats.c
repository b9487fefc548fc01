/* tools/muster/rendezvous_stats.c - median / p99 of latency samples. */
#include <math.h>
#include <stdlib.h>

#include "rendezvous.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted v[0..n): the smallest sample that at
 * least p of the samples are <= to. */
static double percentile(const double *v, long n, double p) {
  long k = (long)ceil(p * (double)n);
  if (k < 1) k = 1;
  if (k > n) k = n;
  return v[k - 1];
}

void rv_stats(double *v, long n, struct rv_stats *out) {
  *out = (struct rv_stats){.n = n};
  if (n <= 0) return;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  double sum = 0;
  for (long i = 0; i < n; i++) sum += v[i];
  double median = (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  out->median_us = median * 1e6;
  out->p99_us = percentile(v, n, 0.99) * 1e6;
  out->mean_us = sum / (double)n * 1e6;
  out->min_us = v[0] * 1e6;
  out->max_us = v[n - 1] * 1e6;
}
