/*
 * muster/parse.h - the one parser of what a user types: numbers and
 * provider (backend) names.  The runtime reads every MUSTER_* variable with
 * it (runtime/env.c), the tools parse their options with it, and adapters
 * may validate the same way; exported so nothing re-implements it.
 *
 * Every function reads the WHOLE string (no leading or trailing space, no
 * trailing garbage, no hex, no silent truncation to a narrower type), checks
 * the range, and on failure returns MUSTER_EINVAL with muster_last_error()
 * set to a reason that quotes the value, e.g.
 *     '4294967298' is out of range 1..64
 * The caller says what the value was (the runtime prefixes the message), e.g.
 * "MUSTER_TIMEOUT" or "--ranks".  Nothing here reads the environment.
 */
#ifndef MUSTER_PARSE_H
#define MUSTER_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "../muster.h"

/* Longest provider (backend) name: the name fields are 32 bytes with NUL. */
#define MUSTER_MAX_BACKEND 31

/* Seconds accepted for a timeout: 1 ms .. 365 days (beyond that a deadline
 * is "none": say "inf"). */
#define MUSTER_MIN_SECONDS 1e-3
#define MUSTER_MAX_SECONDS (365.0 * 24 * 3600)

/* A decimal integer: an optional '-', then 1..19 digits, in [lo, hi]. */
MUSTER_EXTERN int muster_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* A decimal integer without sign in [0, hi] (all of uint64 when hi is
 * UINT64_MAX). */
MUSTER_EXTERN int muster_parse_u64(const char *s, uint64_t hi, uint64_t *out);

/* A comma-separated list of 1..cap integers in [lo, hi], none empty.
 * Returns the count, or MUSTER_EINVAL. */
MUSTER_EXTERN int muster_parse_i64_list(const char *s, int64_t lo, int64_t hi, int64_t *out,
                                         int cap);

/* A duration in seconds: a plain decimal number ("30", "0.5", "2e3") in
 * [MUSTER_MIN_SECONDS, MUSTER_MAX_SECONDS], or, when allow_inf, "inf" or
 * "infinity" (any case), which sets *out = 0: no deadline. */
MUSTER_EXTERN int muster_parse_seconds(const char *s, int allow_inf, double *out);

/* A backend name of len bytes at s (not necessarily NUL-terminated):
 * 1..MUSTER_MAX_BACKEND bytes of [A-Za-z0-9._-], not starting with '.'
 * (what a provider file name minus ".so" may be). */
MUSTER_EXTERN int muster_parse_backend(const char *s, size_t len);

/* Check every MUSTER_* variable the runtime reads (docs/runtime.md,
 * "Environment"): 0, or MUSTER_EINVAL naming the first bad one and quoting
 * its value.  What a tool or program calls before it starts anything. */
MUSTER_EXTERN int muster_env_check(void);

#endif
