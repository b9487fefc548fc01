/*
 * adapters/tensorflow/tf_ops.c - the op definitions MusterPotrs, MusterPotri,
 * MusterSyevd, MusterGetrs, MusterGels and MusterPotrsLogdet (potrs that
 * also returns log det A, a real scalar of type Tw), their names and their
 * shape functions.  tf_init.c registers
 * them when TensorFlow loads the library (tf.load_op_library dlopens it, the
 * constructor runs, and TF's op watcher turns what it registers into Python
 * wrappers).
 *
 * Every op takes this participant's shard: `a` is its column block of the
 * global n x n matrix A (shape [n, ncols]: the block layout of
 * muster/layout.h), potrs and getrs also take the replicated right-hand
 * sides b [n, nrhs] and return X [n, nrhs].  gels's A is m x n (m >= n):
 * `a` is [m, ncols], b [m, nrhs], and X [n, nrhs] whose n the participants
 * learn from each other's widths at the rendezvous (shape [?, nrhs]).  Attributes say who meets whom:
 *   rank, nranks   this participant and how many meet
 *   key            group key: the op's group is "<routine>.<key>"; callers
 *                  make it unique per op in flight (muster_tf does)
 *   tile           T_A of the block-cyclic layout, 0: the provider's choice
 *   provider       backend name, "": $MUSTER_PROVIDER or the best available
 *   shared_memory  participants are separate processes: work buffers come
 *                  from muster_shard_alloc so the leader can map them
 *   timeout        rendezvous deadline in seconds, 0: $MUSTER_TIMEOUT / 60
 *   same_step      participants are the replicas of one function call (one
 *                  TensorFlow step id): they check they share it before
 *                  solving, so two runs of one traced function that overlap
 *                  fail instead of mixing their shards
 * The ops are stateful: they meet other participants, so they must never be
 * constant-folded, deduplicated or pruned.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "tfInt.h"

/* Attributes every op has after T (the element type, built from tf_tensor.c's
 * table in register_op). */
static const char *const common_attrs[] = {
    "rank: int >= 0",
    "nranks: int >= 1",
    "key: string",
    "tile: int = 0",
    "provider: string = ''",
    "shared_memory: bool = false",
    "timeout: float = 0",
    "same_step: bool = false",
};

/* ---- op names -------------------------------------------------------------- */

static char op_names[MUSTER_ROUTINE_END][32];
static pthread_once_t op_names_once = PTHREAD_ONCE_INIT;

/* TensorFlow op names are CamelCase: "potrs" -> "MusterPotrs", for every
 * routine of muster/types.h. */
static void name_ops(void) {
  static const muster_routine_t all[] = {
#define MUSTER__TF_ROUTINE(NAME, value, ...) MUSTER_##NAME,
      MUSTER_ROUTINE_MAP(MUSTER__TF_ROUTINE)
#undef MUSTER__TF_ROUTINE
  };
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    const char *s = muster_routine_name(all[i]);
    snprintf(op_names[all[i]], sizeof op_names[all[i]], "Muster%c%s",
             toupper((unsigned char)s[0]), s + 1);
  }
}

const char *mtf_op_name(muster_routine_t r, bool logdet) {
  if (logdet) return r == MUSTER_POTRS ? "MusterPotrsLogdet" : "Muster?";
  pthread_once(&op_names_once, name_ops);
  if ((int)r < 0 || (int)r >= MUSTER_ROUTINE_END || !op_names[r][0]) return "Muster?";
  return op_names[r];
}

/* ---- shape functions ----------------------------------------------------- */

/* Shape handles of one shape function, freed together. */
typedef struct shapes {
  TF_ShapeHandle *a, *a2, *b, *b2, *w;
  TF_DimensionHandle *an, *bn;
} shapes_t;

static void shapes_free(shapes_t *s) {
  TF_ShapeHandle *h[] = {s->a, s->a2, s->b, s->b2, s->w};
  for (size_t i = 0; i < sizeof h / sizeof h[0]; i++)
    if (h[i]) TF_DeleteShapeHandle(h[i]);
  if (s->an) TF_DeleteDimensionHandle(s->an);
  if (s->bn) TF_DeleteDimensionHandle(s->bn);
}

/* Input i as a matrix (rank 2) into *out; false with status set if not. */
static bool input_matrix(TF_ShapeInferenceContext *ctx, int i, const char *what,
                         TF_ShapeHandle *in, TF_ShapeHandle *out, TF_Status *st) {
  TF_ShapeInferenceContextGetInput(ctx, i, in, st);
  if (TF_GetCode(st) != TF_OK) return false;
  TF_ShapeInferenceContextWithRank(ctx, in, 2, out, st);
  if (TF_GetCode(st) != TF_OK) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s must be a matrix (rank 2): %s", what, TF_Message(st));
    TF_SetStatus(st, TF_INVALID_ARGUMENT, msg);
    return false;
  }
  return true;
}

/* potrs, getrs, gels: a [rows, ncols] and b [rows, nrhs] with the same
 * rows; X [n, nrhs]: b's shape, but for gels, whose n is not known here. */
static void solve_shape(TF_ShapeInferenceContext *ctx, TF_Status *st, muster_routine_t r) {
  const char *op = mtf_op_name(r, false);
  bool tall = muster_routine_takes(r) & MUSTER_TAKES_M;
  char what[160];
  shapes_t s = {TF_NewShapeHandle(), TF_NewShapeHandle(), TF_NewShapeHandle(),
                TF_NewShapeHandle(), NULL, TF_NewDimensionHandle(), TF_NewDimensionHandle()};
  TF_ShapeHandle *n = NULL, *nrhs = NULL, *x = NULL;
  snprintf(what, sizeof what, "%s: a (this participant's column block of A, %s x ncols)", op,
           tall ? "m" : "n");
  if (!input_matrix(ctx, 0, what, s.a, s.a2, st)) goto out;
  snprintf(what, sizeof what, "%s: b (the right-hand sides, %s x nrhs)", op, tall ? "m" : "n");
  if (!input_matrix(ctx, 1, what, s.b, s.b2, st)) goto out;
  TF_ShapeInferenceContextDim(ctx, s.a2, 0, s.an);
  TF_ShapeInferenceContextDim(ctx, s.b2, 0, s.bn);
  if (TF_DimensionHandleValueKnown(s.an) && TF_DimensionHandleValueKnown(s.bn) &&
      TF_DimensionHandleValue(s.an) != TF_DimensionHandleValue(s.bn)) {
    char msg[256];
    snprintf(msg, sizeof msg, "%s: a has %lld rows but b has %lld: both must have %s rows", op,
             (long long)TF_DimensionHandleValue(s.an), (long long)TF_DimensionHandleValue(s.bn),
             tall ? "A's m" : "n");
    TF_SetStatus(st, TF_INVALID_ARGUMENT, msg);
    goto out;
  }
  if (!tall) {
    TF_ShapeInferenceContextSetOutput(ctx, 0, s.b2, st);
    goto out;
  }
  n = TF_ShapeInferenceContextVectorFromSize(ctx, -1); /* [?]: n, unknown here */
  nrhs = TF_NewShapeHandle();
  x = TF_NewShapeHandle();
  TF_ShapeInferenceContextSubshape(ctx, s.b2, 1, 2, nrhs, st);
  if (TF_GetCode(st) == TF_OK) TF_ShapeInferenceContextConcatenateShapes(ctx, n, nrhs, x, st);
  if (TF_GetCode(st) == TF_OK) TF_ShapeInferenceContextSetOutput(ctx, 0, x, st);
out:
  if (n) TF_DeleteShapeHandle(n);
  if (nrhs) TF_DeleteShapeHandle(nrhs);
  if (x) TF_DeleteShapeHandle(x);
  shapes_free(&s);
}

static void potrs_shape(TF_ShapeInferenceContext *c, TF_Status *st) { solve_shape(c, st, MUSTER_POTRS); }
static void getrs_shape(TF_ShapeInferenceContext *c, TF_Status *st) { solve_shape(c, st, MUSTER_GETRS); }
static void gels_shape(TF_ShapeInferenceContext *c, TF_Status *st) { solve_shape(c, st, MUSTER_GELS); }

/* MusterPotrsLogdet: X as potrs's, log det A a scalar. */
static void potrs_logdet_shape(TF_ShapeInferenceContext *ctx, TF_Status *st) {
  solve_shape(ctx, st, MUSTER_POTRS);
  if (TF_GetCode(st) != TF_OK) return;
  TF_ShapeHandle *scalar = TF_ShapeInferenceContextScalar(ctx);
  TF_ShapeInferenceContextSetOutput(ctx, 1, scalar, st);
  TF_DeleteShapeHandle(scalar);
}

static void potri_shape(TF_ShapeInferenceContext *ctx, TF_Status *st) {
  shapes_t s = {TF_NewShapeHandle(), TF_NewShapeHandle(), NULL, NULL, NULL, NULL, NULL};
  if (input_matrix(ctx, 0, "MusterPotri: a (this participant's column block of A, n x ncols)",
                   s.a, s.a2, st))
    TF_ShapeInferenceContextSetOutput(ctx, 0, s.a2, st);
  shapes_free(&s);
}

static void syevd_shape(TF_ShapeInferenceContext *ctx, TF_Status *st) {
  shapes_t s = {TF_NewShapeHandle(), TF_NewShapeHandle(), NULL, NULL, TF_NewShapeHandle(),
                NULL, NULL};
  if (!input_matrix(ctx, 0, "MusterSyevd: a (this participant's column block of A, n x ncols)",
                    s.a, s.a2, st))
    goto out;
  /* w: the n eigenvalues, [n] = a's first dimension */
  TF_ShapeInferenceContextSubshape(ctx, s.a2, 0, 1, s.w, st);
  if (TF_GetCode(st) != TF_OK) goto out;
  TF_ShapeInferenceContextSetOutput(ctx, 0, s.w, st);
  if (TF_GetCode(st) != TF_OK) goto out;
  TF_ShapeInferenceContextSetOutput(ctx, 1, s.a2, st);
out:
  shapes_free(&s);
}

/* ---- registration -------------------------------------------------------- */

int mtf_register_op(muster_routine_t r, bool logdet, char *why, size_t whylen) {
  TF_Status *st = TF_NewStatus();
  const char *name = mtf_op_name(r, logdet);
  TF_OpDefinitionBuilder *b = TF_NewOpDefinitionBuilder(name);
  char t_attr[128], names[96];
  int rc = 0;
  mtf_type_names(names, sizeof names);
  snprintf(t_attr, sizeof t_attr, "T: {%s}", names);
  TF_OpDefinitionBuilderAddAttr(b, t_attr);
  for (size_t i = 0; i < sizeof common_attrs / sizeof common_attrs[0]; i++)
    TF_OpDefinitionBuilderAddAttr(b, common_attrs[i]);
  TF_OpDefinitionBuilderAddInput(b, "a: T");
  switch (r) {
  case MUSTER_POTRS:
  case MUSTER_GETRS:
  case MUSTER_GELS:
    TF_OpDefinitionBuilderAddInput(b, "b: T");
    TF_OpDefinitionBuilderAddOutput(b, "x: T");
    if (logdet) {
      /* log det A is real, of Tw (checked against T as syevd's) */
      TF_OpDefinitionBuilderAddAttr(b, "Tw: {float, double}");
      TF_OpDefinitionBuilderAddOutput(b, "logdet: Tw");
      TF_OpDefinitionBuilderSetShapeInferenceFunction(b, potrs_logdet_shape);
      break;
    }
    TF_OpDefinitionBuilderSetShapeInferenceFunction(
        b, r == MUSTER_POTRS ? potrs_shape : r == MUSTER_GETRS ? getrs_shape : gels_shape);
    break;
  case MUSTER_POTRI:
    TF_OpDefinitionBuilderAddOutput(b, "inv: T");
    TF_OpDefinitionBuilderSetShapeInferenceFunction(b, potri_shape);
    break;
  case MUSTER_SYEVD:
    /* eigenvalues are real: float for float/complex64, double otherwise;
     * the kernel checks that Tw matches T (muster_tf passes it). */
    TF_OpDefinitionBuilderAddAttr(b, "Tw: {float, double}");
    TF_OpDefinitionBuilderAddOutput(b, "w: Tw");
    TF_OpDefinitionBuilderAddOutput(b, "v: T");
    TF_OpDefinitionBuilderSetShapeInferenceFunction(b, syevd_shape);
    break;
  default: /* every routine has its case above */
    break;
  }
  TF_OpDefinitionBuilderSetIsStateful(b, true);
  TF_RegisterOpDefinition(b, st); /* frees b either way */
  if (TF_GetCode(st) != TF_OK) {
    snprintf(why, whylen, "registering op %s: %s", name, TF_Message(st));
    rc = -1;
  }
  TF_DeleteStatus(st);
  return rc;
}
