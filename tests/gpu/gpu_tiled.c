/* tests/gpu/gpu_tiled.c - the tiled provider's GPU cases (gpu_tiled.h):
 * potrs (with and without log det) for every dtype x mode (threads,
 * processes, muster_solve_all) x GPU count (1, 2, 4), on n that is a
 * multiple of neither the tile nor the GPU count (block layout: copied
 * into the engine's tiles; lda > n), small tiles (many steps of the
 * lookahead), the cyclic layout (worked in place), many right-hand sides,
 * a bigger f64 matrix with the default tile, not positive definite
 * (ENOTPD with the failing minor: 1, and 2000 deep in the matrix), NaN in A or B (ENONFINITE), each solved
 * twice (the second creates nothing: handles, streams and events,
 * buffers, peer enables, IPC opens), and in processes mode a rank
 * SIGKILLed mid-factorization.  The schedule's variants (lookahead depth
 * 2..4, the panel on its high-priority stream: MUSTER_TILED_LOOKAHEAD,
 * MUSTER_TILED_PRIORITY) each on a few of those shapes, threads and
 * processes; their names carry the variables (--only MUSTER_TILED_LOOKAHEAD
 * picks them).  MUSTER_TILED_OVERLAP=1 (the moves of the block layout
 * beside the work) on 2 and 4 GPUs likewise (--only MUSTER_TILED_OVERLAP):
 * f64 and c128, threads, processes and muster_solve_all, many steps, no
 * factor, not-PD deep inside and NaN in A with every rank's A checked
 * unchanged (also without the overlap), NaN in B, the cyclic layout (no
 * moves), a bigger matrix, and a rank killed mid-factorization. */
#include <stdio.h>

#include "gpu_tiled.h"

static const char *const tl_stat_names[] = {"handles", "streams", "allocs", "peer", "ipc_opens", "ipc_closes", "solves"};
static const gprov_t tl = {"tiled", "muster_tiled_stats", 7, tl_stat_names, 0x1f, 6, NULL};

/* The schedule's variants on R GPUs: many steps (tile 100, every slot
 * reused), an unaligned complex matrix with log det, the cyclic layout in
 * place, not positive definite deep inside, NaN in A. */
static void variants(tcase_t *cases, int *nc, int R) {
  static const char *const envs[] = {"MUSTER_TILED_LOOKAHEAD=2 MUSTER_TILED_PRIORITY=1",
                                     "MUSTER_TILED_LOOKAHEAD=3 MUSTER_TILED_PRIORITY=1",
                                     "MUSTER_TILED_LOOKAHEAD=4 MUSTER_TILED_PRIORITY=0",
                                     "MUSTER_TILED_LOOKAHEAD=1 MUSTER_TILED_PRIORITY=1"};
  tcase_t *c;
  for (size_t v = 0; v < sizeof envs / sizeof envs[0]; v++)
    for (int mode = 0; mode < 2; mode++) { /* threads, processes */
      c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_F64, mode, R, 3001, 0, 0, "");
      if (v < 2) { /* tile 100 and the variant: two variables and a tile */
        static char both[2][160];
        snprintf(both[v], sizeof both[v], "MUSTER_TILED_TILE=100 %s", envs[v]);
        c->env = both[v];
      } else c->env = envs[v];
      gc_name(c, "variant");
      c = gc_add(cases, nc, &tl, MUSTER_POTRS, MUSTER_LOGDET, v % 2 ? MUSTER_C128 : MUSTER_C64, mode, R, 2053 + 7 * R,
                 3, 0, "");
      c->env = envs[v];
      gc_name(c, "variant unaligned");
      if (v >= 2) continue;
      c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_F32, mode, R, 1001, 3, 96, "");
      c->layout = MUSTER_LAYOUT_CYCLIC;
      c->env = envs[v];
      gc_name(c, "variant cyclic");
      c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_F64, mode, R, 3001, 0, 0, "");
      c->zero_col = 2000;
      c->expect = MUSTER_ENOTPD;
      c->env = envs[v];
      gc_name(c, "variant not-PD at 2000");
      c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_F64, mode, R, 1500, 0, 0, "");
      c->nan_in = 'a';
      c->expect = MUSTER_ENONFINITE;
      c->env = envs[v];
      gc_name(c, "variant NaN-in-A");
    }
  c = gc_add(cases, nc, &tl, MUSTER_POTRS, MUSTER_LOGDET, MUSTER_F64, M_THREADS, R, 16384, 0, 0, "");
  c->env = envs[1];
  c->reps = 1;
  gc_name(c, "variant big");
}

#define TL_OV "MUSTER_TILED_OVERLAP=1"

/* MUSTER_TILED_OVERLAP=1 on R >= 2 GPUs (one GPU works in place: no moves). */
static void overlap(tcase_t *cases, int *nc, int R) {
  tcase_t *c;
  for (int mode = 0; mode < 3; mode++) { /* threads, processes, muster_solve_all */
    c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_F64, mode, R, 3001, 0, 0, "");
    c->env = "MUSTER_TILED_TILE=100 " TL_OV; /* 31 columns arriving, 31 steps */
    gc_name(c, "overlap");
    c = gc_add(cases, nc, &tl, MUSTER_POTRS, MUSTER_LOGDET, MUSTER_C128, mode, R, 2053 + 7 * R, 3, 0, "");
    c->env = TL_OV;
    gc_name(c, "overlap unaligned");
    /* the failing minor in tile column 7 of 12: columns 0..6 of L final
     * (and, if written back early, wrong in A) before it fails */
    for (int ov = 0; ov < 2; ov++) {
      c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, mode == M_PROCS ? MUSTER_C128 : MUSTER_F64, mode, R, 3001, 0, 0, "");
      c->zero_col = 2000;
      c->expect = MUSTER_ENOTPD;
      c->a_kept = 1;
      c->env = ov ? TL_OV : "MUSTER_TILED_OVERLAP=0";
      gc_name(c, "overlap not-PD at 2000, A kept");
    }
    if (mode == M_ALL) continue;
    c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_F64, mode, R, 1500, 0, 0, "");
    c->nan_in = 'a';
    c->expect = MUSTER_ENONFINITE;
    c->a_kept = 1;
    c->env = TL_OV;
    gc_name(c, "overlap NaN-in-A, A kept");
    c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_F64, mode, R, 1500, 0, 0, "");
    c->nan_in = 'b';
    c->expect = MUSTER_ENONFINITE;
    c->env = TL_OV;
    gc_name(c, "overlap NaN-in-B");
    c = gc_add(cases, nc, &tl, MUSTER_POTRS, MUSTER_NO_FACTOR, MUSTER_F64, mode, R, 1200, 0, 0, "");
    c->env = TL_OV;
    gc_name(c, "overlap no-factor");
    c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_F32, mode, R, 1001, 3, 96, "");
    c->layout = MUSTER_LAYOUT_CYCLIC;
    c->env = TL_OV;
    gc_name(c, "overlap cyclic");
  }
  c = gc_add(cases, nc, &tl, MUSTER_POTRS, MUSTER_LOGDET, MUSTER_F64, M_THREADS, R, 16384 + 13, 0, 0, "");
  c->env = TL_OV;
  gc_name(c, "overlap big");
}

static void per_gpus(tcase_t *cases, int *nc, int R) {
  static const muster_dtype_t dts[4] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};
  tcase_t *c;
  int64_t n = 2053 + 7 * R; /* tile 256 (the engine's rule below 4096): 9 tile columns, the last short */
  for (int mode = 0; mode < 3; mode++) {
    for (int d = 0; d < 4; d++) {
      if (mode == M_ALL && (dts[d] == MUSTER_F32 || dts[d] == MUSTER_C128)) continue;
      gc_add(cases, nc, &tl, MUSTER_POTRS, 0, dts[d], mode, R, n, 5, 0, "unaligned");
      gc_add(cases, nc, &tl, MUSTER_POTRS, MUSTER_LOGDET, dts[d], mode, R, 1000 + 7 * R, 3, 0, "unaligned");
      c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, dts[d], mode, R, 1001, 3, 96, "");
      c->layout = MUSTER_LAYOUT_CYCLIC; /* in place, tile 96 */
      gc_name(c, "cyclic");
    }
    c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_F64, mode, R, 3001, 0, 0, "");
    c->env = "MUSTER_TILED_TILE=100"; /* 31 steps of lookahead, all slots reused */
    gc_name(c, "tile 100");
    c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_C64, mode, R, 1500, 1, 0, "");
    c->nrhs = 700;
    gc_name(c, "many rhs");
    c = gc_add(cases, nc, &tl, MUSTER_POTRS, MUSTER_NO_FACTOR, MUSTER_F64, mode, R, 1200, 0, 0, "no-factor");
    c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_F64, mode, R, 512, 0, 128, "not-PD");
    c->shift = -512;
    c->expect = MUSTER_ENOTPD;
    c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_C128, mode, R, 700, 3, 0, "not-PD");
    c->shift = -700;
    c->expect = MUSTER_ENOTPD;
    /* the failing minor deep inside: column 2000 zeroed (tile column 7 of
     * tile 256, on GPU 7 % R), the other columns positive definite */
    c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, mode == M_PROCS ? MUSTER_C128 : MUSTER_F64, mode, R, 3001, 0, 0,
               "not-PD at 2000");
    c->zero_col = 2000;
    c->expect = MUSTER_ENOTPD;
    for (int k = 0; k < 2 && mode != M_ALL; k++) {
      c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_F64, mode, R, 500, 0, 0, k ? "NaN-in-B" : "NaN-in-A");
      c->nan_in = k ? 'b' : 'a';
      c->expect = MUSTER_ENONFINITE;
    }
  }
  gc_add(cases, nc, &tl, MUSTER_POTRS, MUSTER_LOGDET, MUSTER_F64, M_THREADS, R, 8192 + 13, 0, 0, "big");
  c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_F64, M_THREADS, R, 16384, 0, 0, "big");
  c->reps = 1;
  variants(cases, nc, R);
  if (R >= 2) overlap(cases, nc, R);
}

void tl_cases(tcase_t *cases, int *nc, int maxR, int kills) {
  static const int Rs[3] = {1, 2, 4};
  for (int i = 0; i < 3; i++)
    if (Rs[i] <= maxR) per_gpus(cases, nc, Rs[i]);
  /* a rank SIGKILLed about 1 s into a solve: potrs f64 n = 65536 on 2
   * GPUs (the copy in, then more than 1 s of factorization) */
  for (int victim = 1; victim >= 0 && maxR >= 2 && kills; victim--) {
    tcase_t *c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_F64, M_PROCS, 2, 65536, 0, 0, "");
    c->victim = victim;
    c->survive_s = 2.0;
    c->reps = 1;
    c->special = gc_kill;
    snprintf(c->name, sizeof c->name, "kill rank %d (%s) mid-solve: tiled potrs f64 processes R=2 n=65536", victim,
             victim ? "non-leader" : "leader");
  }
  if (maxR >= 2 && kills) { /* and with the panel on its own stream, lookahead 3 */
    tcase_t *c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_F64, M_PROCS, 2, 65536, 0, 0, "");
    c->victim = 1;
    c->survive_s = 2.0;
    c->reps = 1;
    c->special = gc_kill;
    c->env = "MUSTER_TILED_LOOKAHEAD=3 MUSTER_TILED_PRIORITY=1";
    snprintf(c->name, sizeof c->name, "kill rank 1 (non-leader) mid-solve: tiled potrs f64 processes R=2 n=65536 %s",
             c->env);
  }
  if (maxR >= 2 && kills) { /* and with the moves overlapped */
    tcase_t *c = gc_add(cases, nc, &tl, MUSTER_POTRS, 0, MUSTER_F64, M_PROCS, 2, 65536, 0, 0, "");
    c->victim = 1;
    c->survive_s = 2.0;
    c->reps = 1;
    c->special = gc_kill;
    c->env = TL_OV;
    snprintf(c->name, sizeof c->name, "kill rank 1 (non-leader) mid-solve: tiled potrs f64 processes R=2 n=65536 %s",
             c->env);
  }
}
