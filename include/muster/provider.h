/*
 * muster/provider.h - the ABI between the muster runtime and a solver
 * provider (a shared object the runtime dlopen()s by routine name).
 *
 * One frozen struct per ABI version, each in its own header (as NCCL does
 * for its plugins):
 *     muster/provider_v1.h  muster_provider_v1_t  leader providers
 *     muster/provider_v2.h  muster_provider_v2_t  leader and collective
 *                                                 providers, cost estimates
 * A provider exports the data symbol "muster_provider_v<N>" of one version
 * (or several).  The runtime looks the symbols up newest first and adapts
 * an older struct to what it needs; a file with no symbol it knows, or whose
 * struct says another abi_version than its symbol, is refused with a message
 * naming the file and the reason.  New providers implement the newest
 * version, MUSTER_PROVIDER_ABI_VERSION.
 *
 * The layout rules a provider compiles in (muster/layout.h) are part of its
 * version: v2 records MUSTER_LAYOUT_RULES_VERSION and the runtime refuses a
 * provider built with other rules.
 *
 * File layout on MUSTER_PROVIDER_PATH (each entry is a folder):
 *     <dir>/<backend>.so              the provider
 *     <dir>/<routine>/<backend>.so    symlink to ../<backend>.so, one per
 *                                     routine the provider implements
 *     <dir>/<backend>.cost            optional: its measured cost table
 *                                     (docs/choice.md), read by the runtime
 * so the providers of a routine are found by listing <dir>/<routine>/
 * without loading anything; a provider is dlopen()ed on first use of one of
 * its routines.  Build a provider with SCons' env.MusterProvider().
 *
 * The info > 0 contract (every version): a verdict on the input, LAPACK's
 * info = k > 0 (not positive definite at leading minor k, U(k,k) or R(k,k)
 * zero or under the rule of providers/common, no convergence), is returned
 * as *info = k with 0 or with the routine's code (MUSTER_ENOTPD,
 * MUSTER_ESINGULAR, ...: muster/types.h's `info` column; a provider whose
 * steps stop at the first error returns the code).  A collective provider
 * returns the same k and code on every rank.  The runtime words it, one
 * sentence per routine from that column; the provider does not word the
 * verdict.  Text it leaves in err is the detail, quoted after the sentence
 * in parentheses: where (the engine call, the device) and the numbers that
 * back it ("|R(8,8)| = 1e-17 <= m * eps * max|R(i,i)| = 2.2e-13").  Any
 * other negative code, info or not, is a failure worded by the provider.
 */
#ifndef MUSTER_PROVIDER_H
#define MUSTER_PROVIDER_H

#include "provider_v1.h"
#include "provider_v2.h"

#define MUSTER_PROVIDER_ABI_VERSION MUSTER_PROVIDER_V2_ABI

/* Optional, beside the struct of any version: the version of the engine
 * library the provider runs with, for the rows of its cost table that say
 * which version they were measured with ("version" lines, docs/choice.md).
 * A provider whose engine's speed changes between releases it can load
 * (cusolvermp: cuSOLVERMp 0.8 and 0.9) exports the function
 *     int muster_provider_engine_version(void *ctx, char *out, size_t cap);
 * ctx: its init's.  0 with "MAJOR.MINOR[.PATCH...]" in out (cap bytes,
 * e.g. "0.9.1"), or a negative MUSTER_E* code while it is not known (no
 * library loaded yet, or of unknown version): the table's rows are then
 * taken as for a provider without the function.  Called where the choice
 * is made, before each lookup in its table, from any thread: cheap, never
 * starting CUDA.  Without it a table's rows of any version count. */
#define MUSTER_PROVIDER_SYMBOL_ENGINE_VERSION "muster_provider_engine_version"
typedef int (*muster_provider_engine_version_fn)(void *ctx, char *out, size_t cap);

#endif /* MUSTER_PROVIDER_H */
