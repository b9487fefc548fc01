/*
 * adapters/jax/ffi.c - the XLA FFI handler of muster_jax, in plain C: its
 * entry points, the execution context and the way out (status, errors).
 *
 * Written against xla/ffi/api/c_api.h only: every XLA service is reached
 * through call_frame->api, nothing of XLA or jaxlib is linked, and the
 * handler answers XLA's registration metadata call with FFI API 0.1, the
 * oldest version XLA still accepts (jaxlib 0.10.2 speaks 0.3 and 0.11.2
 * speaks 0.4; both accept 0.1).  The newer API entries it uses (RunId_Get,
 * DeviceOrdinal_Get) are called only when api->struct_size shows that the
 * running XLA has them, so one build serves every jaxlib that registers it.
 *
 * One instance runs per device (XLA runs them concurrently, one thread per
 * device, on the cpu and cuda platforms).  Each joins the muster group of
 * its launch (group_name.c names it from the group key, the routine, the
 * Python call site, the replica and XLA's run id) as the rank its
 * shard_map axis_index gave it, calls muster_solve with its shard, and
 * leaves (solve.c).
 *
 * Operands / results (all 2-D buffers column-major: the Python side asks
 * for layout (0, 1)):
 *   potrs  args [rank s32[2] = (rank, replica), a (ld x w), b (ld x nrhs)]
 *          rets [a (aliased), b (aliased, X on return), status s32[1]]
 *   getrs  as potrs (A left as it was: muster.h)
 *   gels   as potrs with ld = m, the rows of A and B (m >= n columns of
 *          A); X on return in b's first n rows
 *   potri  args [rank, a]  rets [a (aliased, inverse), status]
 *   syevd  args [rank, a]  rets [a (aliased, vectors), w (ld), status]
 *   geqrf, polar  as gels, with a (m x w) and b (m x nrhs, nrhs >= the
 *          b_cols of muster_routine_outputs) both outputs: A's factor in a,
 *          the others packed into b (docs/factorizations.md); any m >= 1
 *   gesvd  as geqrf, rets [a, b, w (min(m, n) singular values), status]
 * Attributes (attrs.c; no dtype: the buffers carry it): routine, n, nrhs,
 * tile, layout, flags, nranks, provider, group_key, site, return_status,
 * process_mode, and optionally local_ranks (ranks in this process).
 *
 * Failure: an XLA error carrying muster_last_error() (Python sees it as an
 * exception), or, with return_status=1, the status output (0 ok, k > 0 the
 * routine's info: status_of, < 0 a MUSTER_E* code) and
 * outputs filled with NaN.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudrv.h"
#include "mjInt.h"

/* The FFI API version we need: the oldest one XLA accepts. */
#define MJ_FFI_MAJOR 0
#define MJ_FFI_MINOR 1

/* api has entry `field` (struct_size tells how much of XLA_FFI_Api the
 * running XLA knows). */
#define MJ_API_HAS(api, field)                                                 \
  ((api)->struct_size >= offsetof(XLA_FFI_Api, field) + sizeof((api)->field) && \
   (api)->field != NULL)

int mj_set_err(mj_call_t *c, int code, const char *fmt, ...) {
  char msg[MJ_ERRLEN];
  va_list ap;
  va_start(ap, fmt);
  /* through a copy: the arguments may include c->err itself */
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  memcpy(c->err, msg, sizeof msg);
  return code;
}

/* ---- XLA errors --------------------------------------------------------- */

XLA_FFI_Error *mj_xla_error(const XLA_FFI_Api *api, XLA_FFI_Error_Code code, const char *msg) {
  XLA_FFI_Error_Create_Args a = {.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE,
                                 .message = msg, .errc = code};
  return api->XLA_FFI_Error_Create(&a);
}

/* 1 when an XLA query succeeded; else 0, with XLA's error dropped (the
 * caller falls back, or words its own). */
static int query_ok(const XLA_FFI_Api *api, XLA_FFI_Error *e) {
  if (!e) return 1;
  XLA_FFI_Error_Destroy_Args d = {.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, .error = e};
  api->XLA_FFI_Error_Destroy(&d);
  return 0;
}

/* The XLA code of a muster failure: by its kind (muster/errno.h), the same
 * mapping as every other adapter's. */
XLA_FFI_Error_Code mj_xla_code_of(int rc) {
  switch (muster_err_kind(rc)) {
  case MUSTER_KIND_INVALID_ARGUMENT:
  case MUSTER_KIND_NUMERICAL: return XLA_FFI_Error_Code_INVALID_ARGUMENT;
  case MUSTER_KIND_DEADLINE_EXCEEDED: return XLA_FFI_Error_Code_DEADLINE_EXCEEDED;
  case MUSTER_KIND_ABORTED: return XLA_FFI_Error_Code_ABORTED;
  case MUSTER_KIND_RESOURCE_EXHAUSTED: return XLA_FFI_Error_Code_RESOURCE_EXHAUSTED;
  case MUSTER_KIND_PERMISSION_DENIED: return XLA_FFI_Error_Code_PERMISSION_DENIED;
  case MUSTER_KIND_NOT_FOUND: return XLA_FFI_Error_Code_NOT_FOUND;
  case MUSTER_KIND_UNIMPLEMENTED: return XLA_FFI_Error_Code_UNIMPLEMENTED;
  case MUSTER_KIND_FAILED_PRECONDITION: return XLA_FFI_Error_Code_FAILED_PRECONDITION;
  default: return XLA_FFI_Error_Code_INTERNAL;
  }
}

/* ---- execution context --------------------------------------------------- */

/* XLA's ordinal of this device, or -1 when the running XLA cannot say. */
static int device_ordinal(const XLA_FFI_Api *api, XLA_FFI_ExecutionContext *ctx) {
  if (!MJ_API_HAS(api, XLA_FFI_DeviceOrdinal_Get)) return -1;
  XLA_FFI_DeviceOrdinal_Get_Args d = {.struct_size = XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE, .ctx = ctx};
  return query_ok(api, api->XLA_FFI_DeviceOrdinal_Get(&d)) ? d.device_ordinal : -1;
}

/* XLA's id of this launch, or 0 when the running XLA cannot say
 * (group_name.c then uses no pooled name). */
static int64_t run_id(const XLA_FFI_Api *api, XLA_FFI_ExecutionContext *ctx) {
  if (!MJ_API_HAS(api, XLA_FFI_RunId_Get)) return 0;
  XLA_FFI_RunId_Get_Args r = {.struct_size = XLA_FFI_RunId_Get_Args_STRUCT_SIZE, .ctx = ctx};
  return query_ok(api, api->XLA_FFI_RunId_Get(&r)) ? r.run_id : 0;
}

/* On the cuda platform: XLA's stream, and the CUDA device that holds A
 * (the ordinal the runtime and CUDA IPC need, which is not XLA's when a
 * process sees a subset of the devices). */
static int read_cuda_context(mj_call_t *c, XLA_FFI_ExecutionContext *ctx) {
  XLA_FFI_Stream_Get_Args s = {.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE, .ctx = ctx};
  if (!query_ok(c->api, c->api->XLA_FFI_Stream_Get(&s)))
    return mj_set_err(c, MUSTER_ECUDA, "XLA_FFI_Stream_Get failed");
  c->stream = s.stream;
  return mj_cuda_device_of(c->a_in->data, &c->device, c->err, sizeof c->err);
}

int mj_read_context(mj_call_t *c, XLA_FFI_CallFrame *cf) {
  c->device = device_ordinal(c->api, cf->ctx);
  c->run_id = run_id(c->api, cf->ctx);
  c->stream = NULL;
  return c->cuda ? read_cuda_context(c, cf->ctx) : 0;
}

/* ---- the call ------------------------------------------------------------------ */

static XLA_FFI_Error *metadata(XLA_FFI_CallFrame *cf) {
  /* XLA passes no api here: nothing can be reported but success */
  XLA_FFI_Metadata_Extension *ext = (XLA_FFI_Metadata_Extension *)cf->extension_start;
  ext->metadata->api_version.major_version = MJ_FFI_MAJOR;
  ext->metadata->api_version.minor_version = MJ_FFI_MINOR;
  ext->metadata->traits = 0; /* not command-buffer (CUDA graph) compatible */
  return NULL;
}

/* The status output: 0, the routine's info k > 0 (potrs/potri: the leading
 * minor that is not positive definite; getrs: U(k,k) zero or under the
 * singularity rule; gels: R(k,k)
 * below the rank threshold), or the MUSTER_E* code. */
static int32_t status_of(int rc, const muster_solve_result_t *res) {
  if ((rc == MUSTER_ENOTPD || rc == MUSTER_ESINGULAR) && res->info > 0) return (int32_t)res->info;
  return rc;
}

/* After the solve: the status output always; on failure either NaN outputs
 * (return_status) or an XLA error carrying the message. */
static XLA_FFI_Error *finish(mj_call_t *c, int rc, const muster_solve_result_t *res) {
  char why[MJ_ERRLEN];
  snprintf(why, sizeof why, "%s", c->err); /* mj_mem_write may reuse c->err */
  int32_t status = status_of(rc, res);
  int wrc = mj_mem_write(c, c->status_out->data, &status, sizeof status);
  if (rc == 0)
    return wrc < 0 ? mj_xla_error(c->api, XLA_FFI_Error_Code_INTERNAL, c->err) : NULL;
  if (!c->at.return_status) return mj_xla_error(c->api, mj_xla_code_of(rc), why);
  mj_mem_fill_nan(c, c->a_out);
  mj_mem_fill_nan(c, c->b_out);
  mj_mem_fill_nan(c, c->w_out);
  return wrc < 0 ? mj_xla_error(c->api, XLA_FFI_Error_Code_INTERNAL, c->err) : NULL;
}

/* Malformed calls (attributes, operands) are programming errors of the
 * Python side: always an XLA error, whatever return_status says. */
static XLA_FFI_Error *malformed(mj_call_t *c) {
  char msg[MJ_ERRLEN + 32];
  snprintf(msg, sizeof msg, "muster_jax: %s", c->err);
  return mj_xla_error(c->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, msg);
}

/* A failure before the join ends the peers at once (mj_abort_peers):
 * they may be waiting in the group already (an MPMD process whose own
 * shapes are wrong, a copy that failed).  Only without the attributes or
 * the operands is there no group to tell; those failures are the
 * program's, alike on every instance. */
static XLA_FFI_Error *execute(mj_call_t *c, XLA_FFI_CallFrame *cf) {
  muster_solve_result_t res;
  memset(&res, 0, sizeof res);
  if (mj_decode_attrs(c, &cf->attrs) < 0 || mj_bind_buffers(c, cf) < 0) return malformed(c);
  int rc;
  if ((rc = mj_read_context(c, cf)) < 0 || (rc = mj_check_buffers(c)) < 0) {
    mj_abort_peers(c, rc);
    return malformed(c);
  }
  if ((rc = mj_read_rank(c)) == 0 && (rc = mj_copy_alias(c, c->a_in, c->a_out)) == 0 &&
      (rc = mj_copy_alias(c, c->b_in, c->b_out)) == 0)
    rc = mj_solve(c, &res);
  else
    mj_abort_peers(c, rc);
  return finish(c, rc, &res);
}

XLA_FFI_Error *mj_handle(XLA_FFI_CallFrame *cf, int cuda, mj_execute_fn run) {
  if (cf->extension_start && cf->extension_start->type == XLA_FFI_Extension_Metadata)
    return metadata(cf);
  if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE)
    return mj_xla_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "muster_jax: called at a stage other than execute");
  mj_call_t *c = calloc(1, sizeof *c);
  if (!c) return mj_xla_error(cf->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "muster_jax: out of memory");
  c->api = cf->api;
  c->cuda = cuda;
  XLA_FFI_Error *out = run(c, cf);
  free(c);
  return out;
}

/* The handlers registered with jax.ffi.register_ffi_target. */
MJ_EXPORT XLA_FFI_Error *muster_jax_cpu(XLA_FFI_CallFrame *cf) { return mj_handle(cf, 0, execute); }
MJ_EXPORT XLA_FFI_Error *muster_jax_cuda(XLA_FFI_CallFrame *cf) { return mj_handle(cf, 1, execute); }

/* muster_jax.distributed.clear_failure()'s custom call (target
 * muster_jax_nothing): no operands, no results, nothing done; its side effect
 * gives the device a fresh runtime token in JAX, replacing a failed solve's.
 * jax.debug.callback would do as much but needs a CPU device, which a JAX
 * limited to GPUs lacks. */
static XLA_FFI_Error *nothing(mj_call_t *c, XLA_FFI_CallFrame *cf) {
  (void)c;
  (void)cf;
  return NULL;
}
MJ_EXPORT XLA_FFI_Error *muster_jax_nothing(XLA_FFI_CallFrame *cf) { return mj_handle(cf, 0, nothing); }

/* The FFI API version the handler reports, for tests. */
MJ_EXPORT int muster_jax_ffi_api_version(int *major, int *minor) {
  if (major) *major = MJ_FFI_MAJOR;
  if (minor) *minor = MJ_FFI_MINOR;
  return 0;
}
