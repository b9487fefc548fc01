/*
 * adapters/tensorflow/tf_init.c - what runs when TensorFlow loads
 * libmuster_tf.so: register each op (tf_ops.c), then its CPU kernels
 * (tf_kernel.c).  The top of the adapter: nothing calls into this file.
 */
#include <stdio.h>

#include "tfInt.h"

/* A constructor cannot return an error; a failure here (an op of that name
 * already registered by another copy of this library) is reported on
 * stderr and TensorFlow's own "op not found" follows at use. */
__attribute__((constructor)) static void muster_tf_init(void) {
  static const struct {
    muster_routine_t routine;
    bool logdet;
  } ops[] = {{MUSTER_POTRS, false}, {MUSTER_POTRI, false}, {MUSTER_SYEVD, false},
             {MUSTER_GETRS, false}, {MUSTER_GELS, false},  {MUSTER_POTRS, true}};
  char why[512];
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    if (mtf_register_op(ops[i].routine, ops[i].logdet, why, sizeof why) < 0 ||
        mtf_register_kernels(ops[i].routine, ops[i].logdet, why, sizeof why) < 0)
      fprintf(stderr, "libmuster_tf: %s\n", why);
  }
}
