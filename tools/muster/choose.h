/*
 * tools/muster/choose.h - the provider a CLI run will use, and so the
 * memory its shards go in, decided the runtime's way before any shard
 * exists (muster_provider_choose; the solve itself chooses again from the
 * shards' facts and reports what ran).
 */
#ifndef MUSTER_CLI_CHOOSE_H
#define MUSTER_CLI_CHOOSE_H

#include <stddef.h>

#include "solve_run.h"

/* This build's entry for provider `name`: 1 and *out, or 0 when none. */
int cli_provider_info(const char *name, muster_provider_info_t *out);

/* The runtime's choice for spec (every memory kind considered) into name
 * (name_len bytes) and why into reason (rlen; "" if none); *cuda = 1 when
 * it takes only CUDA memory.  A forced CUDA-only provider that cannot run
 * here is an error: -1 with why (len bytes) (the runtime would only say
 * that no provider takes host memory).  Anything else the runtime refuses
 * runs on the host, where the solve reports it: 0. */
int cli_choose_memory(const sr_spec_t *spec, int *cuda, char *name, size_t name_len, char *reason,
                      size_t rlen, char *why, size_t len);


#endif
