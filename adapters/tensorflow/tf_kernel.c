/*
 * adapters/tensorflow/tf_kernel.c - one kernel instance: made from the op's
 * attributes when TensorFlow builds the node (rank, nranks, key -> group
 * "<routine>.<key>", tile, provider, shared_memory, timeout, same_step;
 * tf_ops.c documents them), deleted with it, and the kernel registrations
 * that tie the ops to mtf_compute for each element type.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfInt.h"

/* ---- attributes ------------------------------------------------------------ */

static bool attr_ok(TF_OpKernelConstruction *c, TF_Status *st) {
  if (TF_GetCode(st) == TF_OK) return true;
  TF_OpKernelConstruction_Failure(c, st);
  return false;
}

static void construction_fail(TF_OpKernelConstruction *c, TF_Status *st, const char *fmt, ...)
    MUSTER_TF_PRINTF(3, 4);
static void construction_fail(TF_OpKernelConstruction *c, TF_Status *st, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  TF_SetStatus(st, TF_INVALID_ARGUMENT, msg);
  TF_OpKernelConstruction_Failure(c, st);
}

/* Read a string attribute into buf (NUL-terminated); false on failure. */
static bool attr_string(TF_OpKernelConstruction *c, const char *name, char *buf, size_t cap,
                        TF_Status *st) {
  int32_t list_size = 0, total = 0;
  TF_OpKernelConstruction_GetAttrSize(c, name, &list_size, &total, st);
  if (!attr_ok(c, st)) return false;
  if (total < 0 || (size_t)total >= cap) {
    construction_fail(c, st, "attribute %s is %d bytes long; at most %zu", name, (int)total,
                      cap - 1);
    return false;
  }
  TF_OpKernelConstruction_GetAttrString(c, name, buf, (size_t)total, st);
  if (!attr_ok(c, st)) return false;
  buf[total] = '\0';
  return true;
}

/* Check Tw (syevd's eigenvalues, potrs's log det) against T: Tw must be
 * T's real type. */
static bool real_type_ok(TF_OpKernelConstruction *c, const char *op, TF_Status *st) {
  TF_DataType t, tw;
  TF_OpKernelConstruction_GetAttrType(c, "T", &t, st);
  if (!attr_ok(c, st)) return false;
  TF_OpKernelConstruction_GetAttrType(c, "Tw", &tw, st);
  if (!attr_ok(c, st)) return false;
  const mtf_type_t *row = mtf_type_of(t); /* T's constraint: never NULL */
  const mtf_type_t *want = mtf_real_type(row);
  if (tw != want->tf) {
    construction_fail(c, st, "%s: Tw (the real type of T) must be %s for T=%s", op,
                      want->name, row->name);
    return false;
  }
  return true;
}

/* Read the attributes into k; false with the construction failed if one is
 * missing or out of range. */
static bool read_attrs(TF_OpKernelConstruction *c, mtf_kernel_t *k, TF_Status *st) {
  const char *op = mtf_op_name(k->routine, k->logdet);
  char key[MUSTER_MAX_NAME + 1];
  int64_t rank = 0, nranks = 0;
  TF_Bool shared = 0, same_step = 0;
  float timeout = 0;
  TF_OpKernelConstruction_GetAttrInt64(c, "rank", &rank, st);
  if (!attr_ok(c, st)) return false;
  TF_OpKernelConstruction_GetAttrInt64(c, "nranks", &nranks, st);
  if (!attr_ok(c, st)) return false;
  TF_OpKernelConstruction_GetAttrInt64(c, "tile", &k->tile, st);
  if (!attr_ok(c, st)) return false;
  TF_OpKernelConstruction_GetAttrBool(c, "shared_memory", &shared, st);
  if (!attr_ok(c, st)) return false;
  TF_OpKernelConstruction_GetAttrBool(c, "same_step", &same_step, st);
  if (!attr_ok(c, st)) return false;
  TF_OpKernelConstruction_GetAttrFloat(c, "timeout", &timeout, st);
  if (!attr_ok(c, st)) return false;
  if (!attr_string(c, "key", key, sizeof key, st)) return false;
  if (!attr_string(c, "provider", k->provider, sizeof k->provider, st)) return false;
  if ((k->routine == MUSTER_SYEVD || k->logdet) && !real_type_ok(c, op, st)) return false;
  if (nranks < 1 || nranks > MUSTER_MAX_RANKS || rank < 0 || rank >= nranks) {
    construction_fail(c, st, "%s: rank=%" PRId64 " nranks=%" PRId64 ": need 0 <= rank < nranks <= %d",
                      op, rank, nranks, MUSTER_MAX_RANKS);
    return false;
  }
  if (!key[0] || strchr(key, '/')) {
    construction_fail(c, st, "%s: key '%s' must be non-empty and contain no '/'", op, key);
    return false;
  }
  int len = snprintf(k->group, sizeof k->group, "%s.%s", muster_routine_name(k->routine), key);
  if (len < 0 || (size_t)len >= sizeof k->group) {
    construction_fail(c, st, "%s: key '%s' too long: the group name '%s.<key>' has at most %d bytes",
                      op, key, muster_routine_name(k->routine), MUSTER_MAX_NAME);
    return false;
  }
  k->rank = (int)rank;
  k->nranks = (int)nranks;
  k->shared = shared != 0;
  k->same_step = same_step != 0;
  k->timeout_s = timeout;
  return true;
}

/* ---- lifetime -------------------------------------------------------------- */

static void kernel_delete(void *p) {
  mtf_kernel_t *k = p;
  if (!k) return;
  mtf_work_free(k);
  pthread_mutex_destroy(&k->busy);
  free(k);
}

static void *kernel_create(TF_OpKernelConstruction *c, muster_routine_t routine, bool logdet) {
  TF_Status *st = TF_NewStatus();
  mtf_kernel_t *k = calloc(1, sizeof *k);
  if (!k) {
    construction_fail(c, st, "%s: out of memory", mtf_op_name(routine, logdet));
    goto bad;
  }
  pthread_mutex_init(&k->busy, NULL);
  k->routine = routine;
  k->logdet = logdet;
  if (!read_attrs(c, k, st)) goto bad;
  TF_DeleteStatus(st);
  return k;
bad:
  kernel_delete(k);
  TF_DeleteStatus(st);
  return NULL;
}

static void *create_potrs(TF_OpKernelConstruction *c) { return kernel_create(c, MUSTER_POTRS, false); }
static void *create_potri(TF_OpKernelConstruction *c) { return kernel_create(c, MUSTER_POTRI, false); }
static void *create_syevd(TF_OpKernelConstruction *c) { return kernel_create(c, MUSTER_SYEVD, false); }
static void *create_getrs(TF_OpKernelConstruction *c) { return kernel_create(c, MUSTER_GETRS, false); }
static void *create_gels(TF_OpKernelConstruction *c) { return kernel_create(c, MUSTER_GELS, false); }
static void *create_potrs_logdet(TF_OpKernelConstruction *c) {
  return kernel_create(c, MUSTER_POTRS, true);
}

/* TensorFlow's create callback has no user argument: one function per
 * routine, indexed by its muster_routine_t value. */
static void *(*const creators[MUSTER_ROUTINE_END])(TF_OpKernelConstruction *) = {
    [MUSTER_POTRS] = create_potrs, [MUSTER_POTRI] = create_potri, [MUSTER_SYEVD] = create_syevd,
    [MUSTER_GETRS] = create_getrs, [MUSTER_GELS] = create_gels,
};

/* ---- registration -------------------------------------------------------- */

int mtf_register_kernels(muster_routine_t r, bool logdet, char *why, size_t whylen) {
  void *(*create)(TF_OpKernelConstruction *) =
      logdet ? (r == MUSTER_POTRS ? create_potrs_logdet : NULL)
             : (int)r > 0 && (int)r < MUSTER_ROUTINE_END ? creators[r] : NULL;
  const char *op = mtf_op_name(r, logdet);
  if (!create) {
    snprintf(why, whylen, "no kernel for routine %d (%s)", (int)r, op);
    return -1;
  }
  const mtf_type_t *t;
  TF_Status *st = TF_NewStatus();
  int rc = 0;
  for (size_t i = 0; (t = mtf_type_at(i)) != NULL && rc == 0; i++) {
    char name[96];
    snprintf(name, sizeof name, "%s_CPU_%s", op, t->name);
    TF_KernelBuilder *kb =
        TF_NewKernelBuilder(op, "CPU", create, mtf_compute, kernel_delete);
    TF_KernelBuilder_TypeConstraint(kb, "T", t->tf, st);
    if (TF_GetCode(st) != TF_OK) {
      TF_DeleteKernelBuilder(kb);
    } else {
      TF_RegisterKernelBuilder(name, kb, st); /* takes kb */
    }
    if (TF_GetCode(st) != TF_OK) {
      snprintf(why, whylen, "registering kernel %s: %s", name, TF_Message(st));
      rc = -1;
    }
  }
  TF_DeleteStatus(st);
  return rc;
}
