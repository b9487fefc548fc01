/*
 * providers/cudacommon/ipc.c - process mode: CUDA IPC export and import,
 * and the leader's per-peer cache of mappings (cudacommon.h).
 *
 * A peer exports, for each of a, b, w that it has, the IPC handle of the
 * whole allocation holding it plus the pointer's offset in it (frameworks
 * hand out pointers inside big arenas; cudaIpcGetMemHandle maps whole
 * allocations), and the PCI bus id of its device (ordinals differ between
 * processes under CUDA_VISIBLE_DEVICES).  The leader opens each handle once
 * (about 10 ms each) and keeps the mapping, keyed by (peer pid, its start
 * time, handle bytes), until forget_peer() or until the peer publishes a new
 * handle for the same base (the old allocation was freed).  The blob format
 * is the same for every GPU provider (it first shipped with cusolvermg,
 * hence its magic).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "cudacommon.h"
#include "muster/proc.h"

#define BLOB_MAGIC 0x436d4749u /* "CmGI" */
#define BLOB_VERSION 1u

typedef struct blob_mem {
  cudaIpcMemHandle_t handle;
  uint64_t base;  /* exporter's base address (tells a re-allocation apart) */
  int64_t off;    /* pointer - base                                        */
  int32_t present;
  int32_t pad;
} blob_mem_t;

/* One mapping of a peer's allocation, opened on the leader. */
typedef struct cuc_ipc_entry {
  int64_t pid;
  uint64_t start_time;
  cudaIpcMemHandle_t handle;
  uint64_t peer_base;              /* the exporter's base address        */
  int device;                      /* leader's ordinal of the memory     */
  void *base;                      /* mapped base in this process        */
  uint64_t last_use;               /* epoch when last used               */
  struct cuc_ipc_entry *next;
} cuc_ipc_entry_t;

typedef struct blob {
  uint32_t magic, version;
  int64_t pid;
  uint64_t start_time;
  char busid[16];    /* "0000:00:00.0" */
  blob_mem_t mem[3]; /* a, b, w */
  char why[128];     /* why nothing could be exported ("" when it could) */
} blob_t;

typedef CUresult (*addr_range_fn)(CUdeviceptr *base, size_t *size, CUdeviceptr ptr);

/* Base of the allocation holding p, through the driver entry point (the
 * provider does not link libcuda, so it loads where no driver exists). */
static int alloc_base(int dev, const void *p, uint64_t *base, cuc_err_t *E) {
  static addr_range_fn fn;
  if (!fn) {
    void *f = NULL;
    enum cudaDriverEntryPointQueryResult q;
    cudaError_t st = cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, 12000,
                                                      cudaEnableDefault, &q);
    if (st != cudaSuccess) return cuc_cuda(E, dev, "cudaGetDriverEntryPointByVersion(cuMemGetAddressRange)", st);
    if (!f || q != cudaDriverEntryPointSuccess)
      return cuc_fail(E, MUSTER_ECUDA, "device %d: cuMemGetAddressRange not found in the driver", dev);
    fn = (addr_range_fn)f;
  }
  CUdeviceptr b = 0;
  size_t size = 0;
  CUresult r = fn(&b, &size, (CUdeviceptr)(uintptr_t)p);
  if (r != CUDA_SUCCESS)
    return cuc_fail(E, MUSTER_ECUDA, "device %d: cuMemGetAddressRange(%p) failed: CUresult %d "
                    "(is the pointer device memory from cudaMalloc?)", dev, p, (int)r);
  *base = (uint64_t)b;
  return 0;
}

static int export_one(int dev, const void *p, const char *what, blob_mem_t *m, cuc_err_t *E) {
  int rc = 0;
  struct cudaPointerAttributes at;
  memset(m, 0, sizeof *m);
  if (!p) return 0;
  CUC_CU(dev, cudaPointerGetAttributes(&at, p));
  if (at.type != cudaMemoryTypeDevice)
    return cuc_fail(E, MUSTER_EUNSUPPORTED,
                    "device %d: %s=%p is not device memory (type %d); process mode needs "
                    "cudaMalloc'ed memory the leader can open with CUDA IPC", dev, what, p, (int)at.type);
  CUC_CHECK(alloc_base(dev, p, &m->base, E));
  CUC_CU(dev, cudaIpcGetMemHandle(&m->handle, (void *)(uintptr_t)m->base));
  m->off = (int64_t)((uintptr_t)p - m->base);
  m->present = 1;
out:
  return rc;
}

int cuc_ipc_export(const muster_shard_t *mine, void *out, size_t cap, size_t *len, cuc_err_t *E) {
  int rc = 0;
  blob_t b;
  int dev = mine->device;
  char why[256] = "";
  cuc_err_t inner = {why, sizeof why, E ? E->who : NULL};
  if (cap < sizeof b)
    return cuc_fail(E, MUSTER_EINVAL, "export blob needs %zu bytes, the runtime gave %zu", sizeof b, cap);
  memset(&b, 0, sizeof b);
  b.magic = BLOB_MAGIC;
  b.version = BLOB_VERSION;
  b.pid = (int64_t)getpid();
  b.start_time = muster_proc_self_start_time();
  CUC_CU(dev, cudaDeviceGetPCIBusId(b.busid, (int)sizeof b.busid, dev));
  /* The runtime may ask for an export it will not use (threads mode before
   * it knows every rank is local): a failure here is reported by the leader
   * only if it really needs this rank's memory (leader_import). */
  if (export_one(dev, mine->a, "a", &b.mem[0], &inner) < 0 ||
      export_one(dev, mine->b, "b", &b.mem[1], &inner) < 0 ||
      export_one(dev, mine->w, "w", &b.mem[2], &inner) < 0) {
    memset(b.mem, 0, sizeof b.mem);
    snprintf(b.why, sizeof b.why, "%s", why);
  }
  memcpy(out, &b, sizeof b);
  *len = sizeof b;
out:
  return rc;
}

static void close_entry(cuc_ipc_entry_t *e) {
  cudaSetDevice(e->device);
  cudaIpcCloseMemHandle(e->base);
  (void)cudaGetLastError();
  cuc_stat_add(CUC_STAT_IPC_CLOSES, 1);
  free(e);
}

void cuc_ipc_tick(cuc_ipc_cache_t *c) { c->epoch++; }

/* Close the least recently used mappings not used in the current epoch
 * while there are more than CUC_IPC_MAX. */
static void trim(cuc_ipc_cache_t *c) {
  int count = 0;
  for (cuc_ipc_entry_t *e = c->head; e; e = e->next) count++;
  while (count-- > CUC_IPC_MAX) {
    cuc_ipc_entry_t **victim = NULL;
    for (cuc_ipc_entry_t **pp = &c->head; *pp; pp = &(*pp)->next)
      if ((*pp)->last_use < c->epoch && (!victim || (*pp)->last_use < (*victim)->last_use)) victim = pp;
    if (!victim) return;
    cuc_ipc_entry_t *e = *victim;
    *victim = e->next;
    close_entry(e);
  }
}

/* Close the mappings of peers that are gone (the runtime may not call
 * forget_peer for a rank that died): once per epoch. */
static void sweep_dead(cuc_ipc_cache_t *c) {
  if (c->swept == c->epoch + 1) return;
  c->swept = c->epoch + 1;
  for (cuc_ipc_entry_t **pp = &c->head; *pp;) {
    cuc_ipc_entry_t *e = *pp;
    if (e->start_time != 0 && muster_proc_start_time((pid_t)e->pid, NULL) != e->start_time) {
      *pp = e->next;
      close_entry(e);
    } else {
      pp = &e->next;
    }
  }
}

static int import_one(cuc_ipc_cache_t *c, const blob_t *b, int dev, const blob_mem_t *m, void **ptr,
                      cuc_err_t *E) {
  int rc = 0;
  *ptr = NULL;
  if (!m->present) return 0;
  for (cuc_ipc_entry_t **pp = &c->head; *pp;) {
    cuc_ipc_entry_t *e = *pp;
    if (e->pid == b->pid && e->start_time == b->start_time &&
        !memcmp(&e->handle, &m->handle, sizeof m->handle)) {
      e->last_use = c->epoch;
      *ptr = (char *)e->base + m->off;
      return 0;
    }
    /* a dead incarnation of this pid, or a new allocation at an address the
     * peer had exported before (the old one was freed): the mapping is stale */
    if (e->pid == b->pid &&
        (e->start_time != b->start_time || (e->peer_base == m->base && e->last_use < c->epoch))) {
      *pp = e->next;
      close_entry(e);
      continue;
    }
    pp = &e->next;
  }
  cuc_ipc_entry_t *e = calloc(1, sizeof *e);
  if (!e) return cuc_fail(E, MUSTER_ENOMEM, "out of host memory for an IPC mapping");
  CUC_CU(dev, cudaSetDevice(dev));
  CUC_CU(dev, cudaIpcOpenMemHandle(&e->base, m->handle, cudaIpcMemLazyEnablePeerAccess));
  cuc_stat_add(CUC_STAT_IPC_OPENS, 1);
  e->pid = b->pid;
  e->start_time = b->start_time;
  e->handle = m->handle;
  e->peer_base = m->base;
  e->device = dev;
  e->last_use = c->epoch;
  e->next = c->head;
  c->head = e;
  *ptr = (char *)e->base + m->off;
  e = NULL;
  trim(c);
out:
  free(e);
  return rc;
}

static int import_blob(cuc_ipc_cache_t *c, int rank, int64_t peer_pid, const void *data, size_t len,
                       muster_shard_t *shard, cuc_err_t *E) {
  int rc = 0;
  blob_t b;
  int dev = -1;
  if (!data || len != sizeof b)
    return cuc_fail(E, MUSTER_ECORRUPT, "rank %d (pid %" PRId64 "): IPC blob of %zu bytes, expected %zu",
                    rank, peer_pid, len, sizeof b);
  memcpy(&b, data, sizeof b);
  if (b.magic != BLOB_MAGIC || b.version != BLOB_VERSION)
    return cuc_fail(E, MUSTER_EVERSION, "rank %d (pid %" PRId64 "): IPC blob magic %#x version %u, "
                    "expected %#x version %u (mixed provider builds?)", rank, peer_pid, b.magic,
                    b.version, BLOB_MAGIC, BLOB_VERSION);
  if (b.pid != peer_pid)
    return cuc_fail(E, MUSTER_EMISMATCH, "rank %d: IPC blob from pid %" PRId64 " published by pid %" PRId64,
                    rank, b.pid, peer_pid);
  b.busid[sizeof b.busid - 1] = '\0';
  b.why[sizeof b.why - 1] = '\0';
  if (b.why[0])
    return cuc_fail(E, MUSTER_EUNSUPPORTED, "rank %d (pid %" PRId64 ") could not export its memory: %s", rank,
                    peer_pid, b.why);
  cudaError_t st = cudaDeviceGetByPCIBusId(&dev, b.busid);
  if (st != cudaSuccess)
    return cuc_fail(E, MUSTER_ECUDA, "rank %d (pid %" PRId64 "): its device %s is not visible to the "
                    "leader (pid %d): cudaDeviceGetByPCIBusId: %s; every process must see every GPU "
                    "(do not narrow CUDA_VISIBLE_DEVICES per process)", rank, peer_pid, b.busid,
                    (int)getpid(), cudaGetErrorName(st));
  sweep_dead(c);
  CUC_CHECK(import_one(c, &b, dev, &b.mem[0], &shard->a, E));
  CUC_CHECK(import_one(c, &b, dev, &b.mem[1], &shard->b, E));
  CUC_CHECK(import_one(c, &b, dev, &b.mem[2], &shard->w, E));
  shard->device = dev;
  shard->mem = MUSTER_MEM_CUDA;
out:
  if (rc < 0) cuc_err_append(E, " (importing rank %d)", rank);
  return rc;
}

int cuc_ipc_import(cuc_ipc_cache_t *c, int rank, int64_t peer_pid, const void *data, size_t len,
                   muster_shard_t *shard, cuc_err_t *E) {
  int saved = cuc_device_save();
  int rc = import_blob(c, rank, peer_pid, data, len, shard, E);
  cuc_device_restore(saved);
  return rc;
}

/* Close the mappings of pid, or every mapping when all is set. */
static void close_matching(cuc_ipc_cache_t *c, int all, int64_t pid) {
  int saved = cuc_device_save();
  for (cuc_ipc_entry_t **pp = &c->head; *pp;) {
    cuc_ipc_entry_t *e = *pp;
    if (all || e->pid == pid) {
      *pp = e->next;
      close_entry(e);
    } else {
      pp = &e->next;
    }
  }
  cuc_device_restore(saved);
}

void cuc_ipc_forget(cuc_ipc_cache_t *c, int64_t pid) { close_matching(c, 0, pid); }

void cuc_ipc_free(cuc_ipc_cache_t *c) { close_matching(c, 1, 0); }
