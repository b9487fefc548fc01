/* tools/muster/libs_found.h - where the libraries the loaded providers
 * link were found (`muster providers`). */
#ifndef MUSTER_TOOLS_LIBS_FOUND_H
#define MUSTER_TOOLS_LIBS_FOUND_H

/* "libraries:" and one line per loaded library of a provider's engine
 * (CUDA's, NCCL, LAPACKE, OpenBLAS, gfortran, ScaLAPACK, MPI): its file
 * name and the path it was loaded from. */
void libs_found_print(void);

/* The same as a JSON array of {"name", "path"} objects. */
void libs_found_json(void);

#endif
