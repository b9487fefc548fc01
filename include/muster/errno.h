/*
 * muster/errno.h - every muster error code, its meaning and its kind, in one
 * table (included by muster.h; do not include it alone).
 *
 * MUSTER_ERRNO_MAP(X) calls X(name, value, meaning, kind) once per code.
 * The codes (MUSTER_EINVAL ...), muster_strerror(), muster_err_name() and
 * muster_err_kind() are all generated from it, as libuv does with
 * UV_ERRNO_MAP, so a code added here exists everywhere at once.  Values are
 * part of the ABI: never renumber, only append.
 *
 * The kind says what sort of failure a code is, in the terms frameworks
 * use (absl/XLA/TensorFlow canonical codes, Python exceptions).  Every
 * adapter maps kinds, never individual codes, to its framework's errors, so
 * one failure means the same thing in JAX, TensorFlow and PyTorch.
 */
#ifndef MUSTER_ERRNO_H
#define MUSTER_ERRNO_H

/* X(name, value, meaning, kind) */
#define MUSTER_ERRNO_MAP(X)                                                                  \
  X(EINVAL, -1, "invalid argument", INVALID_ARGUMENT)                                        \
  X(ENOMEM, -2, "out of memory", RESOURCE_EXHAUSTED)                                         \
  X(ENOSPC, -3, "no space in /dev/shm", RESOURCE_EXHAUSTED)                                  \
  X(EACCES, -4, "permission denied", PERMISSION_DENIED)                                      \
  X(EEXIST, -5, "group already exists", FAILED_PRECONDITION)                                 \
  X(ENOENT, -6, "not found", NOT_FOUND)                                                      \
  X(ECORRUPT, -7, "corrupt segment", INTERNAL)                                               \
  X(EVERSION, -8, "version mismatch", FAILED_PRECONDITION)                                   \
  X(ETIMEDOUT, -9, "timed out waiting for peers", DEADLINE_EXCEEDED)                         \
  X(EPEERDEAD, -10, "peer died", ABORTED)                                                    \
  X(EPOISONED, -11, "group poisoned by an earlier failure", ABORTED)                         \
  X(EMISMATCH, -12, "participants disagree", INVALID_ARGUMENT)                               \
  X(ENOPROVIDER, -13, "no provider for routine", UNIMPLEMENTED)                              \
  X(EPROVIDER, -14, "provider failed", INTERNAL)                                             \
  X(EUNSUPPORTED, -15, "not supported", UNIMPLEMENTED)                                       \
  X(ECUDA, -16, "CUDA error", INTERNAL)                                                      \
  X(ESYS, -17, "system call failed", INTERNAL)                                               \
  X(ETILE, -18, "invalid tile size", INVALID_ARGUMENT)                                       \
  X(ENONFINITE, -19, "NaN or Inf in matrix", NUMERICAL)                                      \
  X(EBUSY, -20, "rank already taken", FAILED_PRECONDITION)                                   \
  X(ENOTPD, -21, "matrix not positive definite", NUMERICAL)                                 \
  X(ESINGULAR, -22, "matrix singular or rank deficient", NUMERICAL)                         \
  X(EEXITING, -23, "the process is exiting", FAILED_PRECONDITION)

/* Kinds of failure.  X(NAME, value, "name", what it covers) */
#define MUSTER_ERR_KIND_MAP(X)                                                               \
  X(OK, 0, "ok", "no error")                                                                       \
  X(INVALID_ARGUMENT, 1, "invalid_argument", "the caller's arguments are wrong or inconsistent")                 \
  X(NUMERICAL, 2, "numerical", "the matrix lacks a property the routine needs (definite, regular, full rank, finite)")        \
  X(DEADLINE_EXCEEDED, 3, "deadline_exceeded", "peers did not come in time")                                      \
  X(ABORTED, 4, "aborted", "a peer died or the group was aborted")                                      \
  X(RESOURCE_EXHAUSTED, 5, "resource_exhausted", "memory or /dev/shm space ran out")                               \
  X(PERMISSION_DENIED, 6, "permission_denied", "another user's segment or an unwritable /dev/shm")                \
  X(NOT_FOUND, 7, "not_found", "a named object does not exist")                                           \
  X(UNIMPLEMENTED, 8, "unimplemented", "no engine for this routine, dtype or memory here")                    \
  X(FAILED_PRECONDITION, 9, "failed_precondition", "the state of the system forbids the call now")                  \
  X(INTERNAL, 10, "internal", "an engine, CUDA or the system failed")

#define MUSTER_OK 0

typedef enum muster_errno {
#define MUSTER__ERRNO_ENUM(name, value, meaning, kind) MUSTER_##name = (value),
  MUSTER_ERRNO_MAP(MUSTER__ERRNO_ENUM)
#undef MUSTER__ERRNO_ENUM
} muster_errno_t;

typedef enum muster_err_kind {
#define MUSTER__KIND_ENUM(NAME, value, name, what) MUSTER_KIND_##NAME = (value),
  MUSTER_ERR_KIND_MAP(MUSTER__KIND_ENUM)
#undef MUSTER__KIND_ENUM
} muster_err_kind_t;

#endif /* MUSTER_ERRNO_H */
