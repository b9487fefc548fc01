#!/bin/sh
# muster_torch.distributed over the store bootstrap: one rank per GPU
# (nccl) meeting over the job's store, solves on column blocks
# (storecase.solve_case: potrs, getrs, syevd f64, first without provider=:
# on one node the choice may take a one-node engine, cusolvermg,
# cusolverdn or tiled, through the set's group, and StoreSet.last must name
# what engine() predicts; then cusolvermp forced) and on each rank's own
# block of a 2 x 2 grid (4 GPUs, else GPUs x 1) and of a 1 x GPUs one
# through solve(grid=) (gridcase.gpu_grid_case: potrs, getrs, syevd in f64
# and c128, n = 1003, residuals under 20 n eps, V gathered and checked):
#
#   tests/python/torch/run-store-gpu.sh [BUILD_DIR] [GPUS]     (from the repo root)
#
# BUILD_DIR, GPUS, $PYTHON (torch with CUDA, pytest), pass ("3 passed",
# "segments left: 0") and failure: tests/python/run-store-gpu.sh, which
# this runs.
exec sh "$(dirname "$0")/../run-store-gpu.sh" torch "$@"
