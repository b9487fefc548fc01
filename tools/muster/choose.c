/*
 * tools/muster/choose.c - which provider and memory `muster solve` and
 * `muster bench --calibrate` use (see choose.h).
 */
#include <stdio.h>
#include <string.h>

#include "choose.h"
#include "muster/provider.h"

int cli_provider_info(const char *name, muster_provider_info_t *out) {
  muster_provider_info_t list[64];
  int count = muster_providers_list(list, 64);
  for (int i = 0; i < count && i < 64; i++)
    if (!strcmp(list[i].name, name)) {
      *out = list[i];
      return 1;
    }
  return 0;
}

/* The query of spec's call (q.mem 0: any memory). */
static void query_of(const sr_spec_t *spec, muster_provider_query_t *q) {
  memset(q, 0, sizeof *q);
  q->routine = spec->routine;
  q->dtype = spec->dtype;
  q->n = spec->n;
  q->nrhs = muster_routine_nrhs(spec->routine, spec->nrhs);
  q->tile = spec->tile;
  q->layout = MUSTER_LAYOUT_BLOCK;
  q->flags = spec->flags;
  q->nranks = spec->ranks;
  q->ndevices = spec->ranks;
  q->nnodes = 1;
  q->span = spec->processes ? MUSTER_SPAN_PROCESSES : MUSTER_SPAN_THREADS;
  if (spec->nodes > 0) {
    /* --launcher mpi: muster_solve_comm runs collective providers only,
     * and they are the ones that declare the span of several nodes (a
     * leader provider reaches its ranks through one node's memory) */
    q->nnodes = spec->nodes;
    q->span = MUSTER_SPAN_NODES;
  }
}

int cli_choose_memory(const sr_spec_t *spec, int *cuda, char *name, size_t name_len, char *reason,
                      size_t rlen, char *why, size_t len) {
  *cuda = 0;
  muster_provider_query_t q;
  query_of(spec, &q);
  muster_provider_info_t pick;
  if (muster_provider_choose(&q, spec->provider, name, name_len, reason, rlen) == 0) {
    if (cli_provider_info(name, &pick) && !(pick.mem_kinds & (1u << MUSTER_MEM_HOST)) &&
        (pick.mem_kinds & (1u << MUSTER_MEM_CUDA)))
      *cuda = 1;
    return 0;
  }
  char forced[32];
  if (spec->provider && *spec->provider) snprintf(forced, sizeof forced, "%s", spec->provider);
  else muster_provider_forced(spec->routine, forced, sizeof forced);
  if (!forced[0] || !cli_provider_info(forced, &pick)) return 0;
  snprintf(name, name_len, "%s", forced); /* for the report should the solve not start */
  if ((pick.mem_kinds & (1u << MUSTER_MEM_HOST)) || !(pick.mem_kinds & (1u << MUSTER_MEM_CUDA))) return 0;
  *cuda = 1;
  if (pick.available) return 0;
  snprintf(why, len, "provider '%s' (%.200s, CUDA memory only) cannot run here: %s", pick.name, pick.path,
           pick.why[0] ? pick.why : "its probe said unavailable");
  return -1;
}

