/*
 * muster/store.h - a bootstrap over a key-value store the caller supplies
 * (docs/multinode.md#the-store-bootstrap-c-api).
 *
 * The processes of a jax.distributed or torch.distributed job already share
 * a key-value store (jax's distributed client, torch's dist.Store): with
 * it, N processes on any nodes can meet without MPI.  The caller hands
 * three callbacks (set, a blocking get, optionally delete); muster builds
 * on them an allgather, a barrier, an abort every rank hears, and liveness
 * as far as a store allows: every rank beats (a key it rewrites every
 * beat_s), and a wait on the others fails when a peer's beat has not moved
 * for timeout_s, naming it (pid, host, what it was doing).  A peer on this
 * node that died is named at once; one that runs, however slowly, is never
 * timed out (the rule of the MPI kind).
 *
 * With a communicator: pass muster_store_allgather and the store as
 * muster_comm_opts_t's allgather and ctx (kind "store"); muster_solve_comm
 * then also watches the peers' beats while the provider runs.
 *
 * Keys, all under "muster/<name>/": "beat/<rank>", "ag/<k>/<rank>" (the
 * k-th allgather), "abort".  A name is for one open: a set reopened with
 * the same name in the same store is refused (its keys are there).
 */
#ifndef MUSTER_STORE_H
#define MUSTER_STORE_H

#include <stddef.h>

#include "muster.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The caller's store.  Every callback returns 0 or a negative MUSTER_E*
 * code with a message in err (errlen bytes); each may be called from a
 * thread of muster's (the heartbeat), concurrently with the others. */
typedef struct muster_kv {
  void *ctx;
  /* Set key to len bytes of val, replacing any value it had. */
  int (*set)(void *ctx, const char *key, const void *val, size_t len, char *err, size_t errlen);
  /* Wait up to timeout_s seconds (0: do not wait) for key; copy up to cap
   * bytes of its value to buf and its whole size to *len.  MUSTER_ENOENT
   * when it is not there by then (no message needed). */
  int (*get)(void *ctx, const char *key, double timeout_s, void *buf, size_t cap, size_t *len,
             char *err, size_t errlen);
  /* Optional (NULL): remove key; a key that is not there is no error.
   * With it, each rank removes its values of an allgather once every rank
   * has read them. */
  int (*del)(void *ctx, const char *key, char *err, size_t errlen);
} muster_kv_t;

typedef struct muster_store_opts {
  const char *name;  /* the set of ranks: its keys' prefix; [A-Za-z0-9._-], 1..64 chars */
  int rank, size;    /* this rank of size (1..MUSTER_MAX_RANKS)                          */
  double timeout_s;  /* a peer silent this long is gone; as muster_timeout() takes it:
                        0: MUSTER_TIMEOUT (default 60 s; "inf": never), INFINITY: never */
  double beat_s;     /* how often this rank beats; 0: timeout_s / 4, at most 1 s          */
} muster_store_opts_t;

typedef struct muster_store muster_store_t;

/* Open this rank's end: checks the name is new in the store, writes the
 * first beat and starts the heartbeat thread.  Waits for nobody.  0 with
 * *out, MUSTER_EINVAL (options, kv), MUSTER_EEXIST (the name was used),
 * or the store's error. */
MUSTER_EXTERN int muster_store_open(const muster_kv_t *kv, const muster_store_opts_t *opts,
                                    muster_store_t **out);

/* A muster_allgather_fn (store: a muster_store_t *): every rank passes len
 * bytes; all gets size * len, rank r's at r * len.  Fails, on every rank,
 * with MUSTER_EMISMATCH (ranks passed different len), MUSTER_ETIMEDOUT (a
 * peer silent for timeout_s), MUSTER_EPEERDEAD (a peer on this node died,
 * or closed its end while we waited), the code of a rank's abort, or the
 * store's error; the failure is then written to the abort key, so the
 * others end too, and the set stays failed. */
MUSTER_EXTERN int muster_store_allgather(void *store, const void *mine, void *all, size_t len,
                                         char *err, size_t errlen);

/* An allgather of nothing. */
MUSTER_EXTERN int muster_store_barrier(muster_store_t *s);

/* Fail the set: every rank waiting (or that will wait) on it returns code
 * (negative) with "rank R aborted the store set NAME: why".  Returns code. */
MUSTER_EXTERN int muster_store_abort(muster_store_t *s, int code, const char *why);

/* 0 while the set may go on: no abort, no peer silent for timeout_s or
 * dead on this node; else that error (set in muster_last_error()). */
MUSTER_EXTERN int muster_store_check(muster_store_t *s);

/* Stop beating (a last beat says this rank closed) and free s.  This
 * rank's last allgather value and its beat stay in the store: another rank
 * may still be reading them, and none can tell when all have; they go
 * with the store (the job's). */
MUSTER_EXTERN int muster_store_close(muster_store_t *s);

#ifdef __cplusplus
}
#endif
#endif /* MUSTER_STORE_H */
