/*
 * adapters/tensorflow/tfInt.h - private to libmuster_tf.so.
 *
 * The TensorFlow C API headers come from the tensorflow pip wheel
 * (tf.sysconfig.get_include()).  ops.h declares its handle types only as
 * `struct X;`, which is enough for C++ but not for C, so we give C the
 * typedefs it needs before including it (a repeated identical typedef is
 * valid C11 should a later ops.h add them).
 */
#ifndef MUSTER_TF_INT_H
#define MUSTER_TF_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "tensorflow/c/c_api.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

typedef struct TF_OpDefinitionBuilder TF_OpDefinitionBuilder;
typedef struct TF_ShapeHandle TF_ShapeHandle;
typedef struct TF_DimensionHandle TF_DimensionHandle;
typedef struct TF_ShapeInferenceContext TF_ShapeInferenceContext;
#include "tensorflow/c/ops.h"
/* kernels.h is included by tf_kernels.c alone: in C it defines (not just
 * declares) TF_InputRange_Args_STRUCT_SIZE, so two users would clash. */

#include "muster.h"

#define MUSTER_TF_HIDDEN __attribute__((visibility("hidden")))

/* The op names, one per routine ("MusterPotrs", ...). */
MUSTER_TF_HIDDEN const char *muster__tf_op_name(muster_routine_t r);

/* Register the CPU kernels of routine r's op (tf_kernels.c).  Called once,
 * at load, after the op itself is registered (tf_ops.c).  Returns 0 or -1
 * with `why` filled. */
MUSTER_TF_HIDDEN int muster__tf_register_kernels(muster_routine_t r, char *why, size_t whylen);

#endif
