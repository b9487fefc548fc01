#!/bin/sh
# muster_jax.distributed over the store bootstrap: one process per GPU
# meeting over jax.distributed's store, solves on column blocks (first
# without provider=: on one node the choice may take a one-node engine,
# cusolvermg, cusolverdn or tiled, through the set's group, jax's buffers
# staged into memory CUDA IPC opens, and StoreSet.last must name what
# engine() predicts; then cusolvermp forced) and on the blocks of a 2-D
# mesh (P("pr", "pc"): 2 x 2 on 4 GPUs, else GPUs x 1; cusolvermp) with
# residuals (test_store_distributed.py -k gpu; storecase.solve_case and
# solve_grid_case), eagerly and then with every solve inside jax.jit (the
# muster_jax_store FFI custom call on device buffers; "proc I: jit solves
# ok").  Step 4 of run-gpu.sh, on its own:
#
#   tests/python/jax/run-store-gpu.sh [BUILD_DIR] [GPUS]     (from the repo root)
#
# BUILD_DIR, GPUS, $PYTHON (jax with CUDA, pytest), pass and failure:
# tests/python/run-store-gpu.sh, which this runs.
exec sh "$(dirname "$0")/../run-store-gpu.sh" jax "$@"
