/*
 * runtime/shm/segment.h - the on-disk (in-/dev/shm) format of a muster group
 * segment, and the functions that create, attach, validate and remove one.
 *
 * FORMAT STABILITY (for tools/shmdump and anyone decoding segments):
 *   layout version 1, frozen at its first commit.  Later changes are
 *   additive only (new fields go into the reserved bytes, never move or
 *   resize a field) and are listed here:
 *     - slot.abort_seen at offset 88 (was reserved, zero): 1 once the rank
 *       sitting there has been given the group's abort error.  Decoders
 *       may show it; old segments have 0 there.
 *     - slot.pidns at offset 96 and header.creator_pidns at offset 240 (were
 *       reserved, zero): the pid namespace (inode of /proc/self/ns/pid) of
 *       the occupant / creator.  When it is non-zero and differs from the
 *       reader's, its pid is not meaningful to the reader: report liveness
 *       as unknown, never as dead (muster__proc_same_pidns()).
 *     - the file name gained <pidns> (2026-11-23, after 5b153d5; see below).
 *       The layout is unchanged; builds up to 5b153d5 named segments
 *       muster.<uid>.<job>.<group>, and the two never open each other's.
 *     - header.launcher_pid/_start/_pidns at offsets 404/408/416 and
 *       slot.declared_pid/_start at offsets 92/104 (were reserved, zero):
 *       the process holding the group as its launcher, and the pid it
 *       declared for each rank that has not joined yet (runtime/shm/barrier_launcher.h).
 *       A waiter judges an empty seat by its declared pid, and a dead
 *       launcher poisons the group.  Old segments have 0 there: no launcher.
 *
 * A segment is /dev/shm/muster.<uid>.<pidns>.<job>.<group>, mode 0600, size
 * header_size + nranks * slot_size bytes, all of it allocated at creation
 * (posix_fallocate), so a full /dev/shm is an error at creation and never a
 * SIGBUS later (header 3200 bytes, slot 2176 bytes: 2 ranks = 7552 bytes).
 * <uid> and <pidns> (the inode of the creator's /proc/self/ns/pid, never 0)
 * are decimal without leading zeros, <job> has no '.', so the group name is
 * everything after the fourth '.'.  The pid namespace is part of the name so
 * that processes of different pid namespaces sharing /dev/shm (containers)
 * never meet in one segment: their pids and tids (seat words, liveness)
 * mean nothing to each other.  Every process of a group is therefore in one
 * pid namespace, and creator_pidns equals the name's <pidns>.
 *
 * Creation protocol: the creator writes every field below with magic = 0,
 * then publishes magic last with a release store.  An attacher waits (a few
 * ms) for a non-zero magic, then validates every field
 * (muster__segment_validate) before any use.  A creator that fails (no
 * space) removes the file; an attacher whose file was removed or replaced
 * while it waited goes back to the name (and so meets the creator's error
 * when it creates the segment itself).
 *
 * Concurrency: fields marked [atomic] change while the group runs; read them
 * with __atomic_load_n (relaxed is enough for a dump).  Everything else is
 * written once by the creator before magic is published.
 *
 * Lifetime ("anonymous after formation"): the name is removed by the rank
 * whose arrival sets the last bit of seen_mask (the group is then "formed",
 * formed = 1), so after formation the segment lives only while some process
 * maps it; processes keep the fd open while the group is cached, so
 * /proc/PID/fd/N -> "/dev/shm/muster.... (deleted)" finds it.  A group that
 * never forms is unlinked by the last participant out (seats word: count
 * reaches 0 and the closing bit is set in the same CAS), or by whoever
 * poisons it.
 */
#ifndef MUSTER_SEGMENT_H
#define MUSTER_SEGMENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "muster.h"
#include "muster/segment.h" /* the public seam: names, listing, a view */

#define MUSTER_SEG_MAGIC UINT64_C(0x31474553542d534d) /* "MS-TSEG1" little-endian */
#define MUSTER_SEG_VERSION 1u
#define MUSTER_SEG_PREFIX MUSTER_SEGMENT_PREFIX    /* file name prefix in /dev/shm */
#define MUSTER_SEG_REASON_MAX 512                 /* abort_reason bytes incl. NUL */

/* Phase of one rank slot (slot.phase). */
enum muster_seg_phase {
  MUSTER_PHASE_FREE = 0,      /* never occupied                               */
  MUSTER_PHASE_JOINED = 1,    /* seated, not in a barrier                      */
  MUSTER_PHASE_PUBLISHED = 2, /* exchange: payload written, about to arrive    */
  MUSTER_PHASE_WAITING = 3,   /* arrived at the barrier of generation
                                 barrier_gen, waiting for the others          */
  MUSTER_PHASE_PASSED = 4,    /* passed that barrier (reading / computing)     */
  MUSTER_PHASE_LEFT = 5,      /* left; pid/start_time name the last occupant   */
  MUSTER_PHASE_MAX_ = 5
};

/* abort_state values */
enum { MUSTER_ABORT_NONE = 0, MUSTER_ABORT_WRITING = 1, MUSTER_ABORT_SET = 2 };

/* seats word: low 16 bits = ranks seated now, bit 31 = closing (the last
 * one out of an unformed group set it and is removing the name; attachers
 * that see it retry from the name). */
#define MUSTER_SEATS_COUNT(w) ((w) & 0xffffu)
#define MUSTER_SEATS_CLOSING 0x80000000u

/* One rank's slot.  slot_size bytes (64-byte multiple), slots follow the
 * header in rank order. */
struct muster_seg_slot {
  uint32_t owner_tid;     /* 0    [atomic] seat word: 0 free, else the tid
                                  of the thread sitting there (CAS 0 -> tid) */
  int32_t pid;            /* 4    [atomic] occupant's pid; kept after leave
                                  (phase LEFT) to name the last occupant    */
  uint64_t start_time;    /* 8    [atomic] occupant's /proc/PID/stat field 22
                                  (clock ticks after boot); pid + start_time
                                  identify a process (a reused pid differs)  */
  int32_t tid;            /* 16   [atomic] occupant's thread id             */
  int32_t device;         /* 20   [atomic] occupant's device, -1 host        */
  uint32_t phase;         /* 24   [atomic] enum muster_seg_phase             */
  uint32_t barrier_gen;   /* 28   [atomic] generation word value at its last
                                  arrival (the barrier it is/was in)         */
  uint64_t sessions;      /* 32   [atomic] joins of this seat so far
                                  (= muster_group_session of the handle)  */
  uint64_t barriers;      /* 40   [atomic] barriers passed in this session   */
  uint64_t arrive_ns;     /* 48   [atomic] CLOCK_REALTIME ns of last arrival  */
  uint64_t wait_start_ns; /* 56   [atomic] CLOCK_REALTIME ns it began waiting,
                                  0 when not waiting                        */
  uint64_t join_ns;       /* 64   [atomic] CLOCK_REALTIME ns of last join     */
  uint32_t payload_len[2];/* 72   [atomic] bytes in payload[i], <= max_payload */
  uint32_t payload_gen[2];/* 80   [atomic] generation word value of the round
                                  payload[i] was published for; the round of
                                  generation G uses buffer G & 1            */
  uint32_t abort_seen;    /* 88   [atomic] (added 2026-11-21, additive) 1 once
                                  the occupant of this seat was given the
                                  group's abort error; a later join of this
                                  rank through the cache then starts a fresh
                                  group instead of reporting it again      */
  int32_t declared_pid;   /* 92   [atomic] (added 2026-11-23, additive) pid a
                                  launcher declared for this rank before it
                                  joined (muster_launch_declare), 0 none;
                                  while the seat is empty, or being taken,
                                  the rank's liveness is judged by it       */
  uint64_t pidns;         /* 96   [atomic] (added 2026-11-21, additive) inode
                                  of the occupant's /proc/self/ns/pid, 0 if
                                  unknown.  pid + start_time mean something
                                  only to readers in the same pid namespace:
                                  others must not judge liveness by them    */
  uint64_t declared_start;/* 104  [atomic] (added 2026-11-23, additive) its
                                  start time (as start_time), 0 unknown;
                                  written before declared_pid (release)     */
  uint8_t reserved[16];   /* 112  zero                                     */
  uint8_t payload[2][MUSTER_MAX_PAYLOAD]; /* 128 double-buffered payloads  */
};

/* Leader's status, double-buffered like payloads: set during the round of
 * generation G it goes to status[G & 1] with gen = G. */
struct muster_seg_status {
  uint32_t gen;           /* [atomic] round it was set for                  */
  uint32_t valid;         /* [atomic] 1 once set at least once              */
  int32_t status;         /* [atomic] leader's status code                  */
  uint32_t len;           /* [atomic] bytes in data, <= max_payload          */
  uint8_t reserved[48];
  uint8_t data[MUSTER_MAX_PAYLOAD];
};

struct muster_seg_header {
  /* ---- identity: written once before magic is published ---- */
  uint64_t magic;          /* 0    MUSTER_SEG_MAGIC, release-stored last     */
  uint32_t version;        /* 8    MUSTER_SEG_VERSION                        */
  uint32_t header_size;    /* 12   sizeof(struct muster_seg_header)          */
  uint64_t total_size;     /* 16   header_size + nranks * slot_size          */
  uint32_t slot_size;      /* 24   sizeof(struct muster_seg_slot)            */
  uint32_t max_payload;    /* 28   MUSTER_MAX_PAYLOAD                        */
  uint32_t uid;            /* 32   creator's uid (must equal file owner)     */
  int32_t nranks;          /* 36   1..MUSTER_MAX_RANKS                       */
  int32_t creator_pid;     /* 40                                            */
  uint32_t reserved0;      /* 44                                            */
  uint64_t creator_start;  /* 48   creator's /proc/PID/stat field 22         */
  uint64_t created_ns;     /* 56   CLOCK_REALTIME ns                          */
  char job[72];            /* 64   NUL-terminated, <= MUSTER_MAX_JOB bytes   */
  char group[104];         /* 136  NUL-terminated, <= MUSTER_MAX_NAME bytes  */
  uint64_t creator_pidns;  /* 240  (added 2026-11-21, additive) inode of the
                                   creator's /proc/self/ns/pid, 0 unknown   */
  uint8_t reserved1[8];    /* 248                                           */

  /* ---- barrier (own cache lines: spinners read, arrivers write) ---- */
  _Alignas(64) uint32_t generation; /* 256 [atomic] futex word: +1 each time
                                       a barrier completes                  */
  uint32_t sleepers;       /* 260  [atomic] waiters inside FUTEX_WAIT         */
  uint8_t reserved2[56];
  _Alignas(64) uint32_t arrived; /* 320 [atomic] ranks arrived at the open
                                    barrier (reset by the last arriver)      */
  uint8_t reserved3[60];

  /* ---- membership ---- */
  _Alignas(64) uint64_t seen_mask; /* 384 [atomic] bit r: rank r has sat    */
  uint32_t seats;          /* 392  [atomic] MUSTER_SEATS_* word               */
  uint32_t formed;         /* 396  [atomic] 1: every rank has sat; the name
                                   was removed                              */
  uint32_t retired;        /* 400  [atomic] 1: a process dropped the group
                                   from its cache; joiners go by name again  */
  int32_t launcher_pid;    /* 404  [atomic] (added 2026-11-23, additive) pid
                                   of the process holding the group as its
                                   launcher (muster_launch_open), 0 none
                                   (CAS 0 -> pid; the two fields below follow
                                   it, 0 there: not known yet)              */
  uint64_t launcher_start; /* 408  [atomic] (additive) its start time         */
  uint64_t launcher_pidns; /* 416  [atomic] (additive) its pid namespace; it
                                   also names the namespace of every
                                   declared_pid                             */
  uint8_t reserved4[24];   /* 424                                           */

  /* ---- abort (poison) ---- */
  _Alignas(64) uint32_t abort_state; /* 448 [atomic] MUSTER_ABORT_*: code and
                                        reason valid once SET                */
  int32_t abort_code;      /* 452  MUSTER_E* every participant gets         */
  int32_t abort_rank;      /* 456  rank blamed (dead/missing/aborting), -1   */
  int32_t abort_pid;       /* 460  pid of that rank, 0 unknown               */
  uint64_t abort_ns;       /* 464  CLOCK_REALTIME ns                         */
  uint8_t reserved5[40];
  char abort_reason[MUSTER_SEG_REASON_MAX]; /* 512 NUL-terminated            */

  /* ---- leader status ---- */
  struct muster_seg_status status[2]; /* 1024 */

  /* ---- per-rank slots follow: struct muster_seg_slot slots[nranks] ---- */
};

/* The layout is pinned: these hold on every build (x86-64 and aarch64). */
_Static_assert(sizeof(struct muster_seg_slot) == 2176, "slot layout changed");
_Static_assert(sizeof(struct muster_seg_status) == 1088, "status layout changed");
_Static_assert(sizeof(struct muster_seg_header) == 3200, "header layout changed");
_Static_assert(offsetof(struct muster_seg_header, generation) == 256, "layout");
_Static_assert(offsetof(struct muster_seg_header, arrived) == 320, "layout");
_Static_assert(offsetof(struct muster_seg_header, seen_mask) == 384, "layout");
_Static_assert(offsetof(struct muster_seg_header, abort_state) == 448, "layout");
_Static_assert(offsetof(struct muster_seg_header, abort_reason) == 512, "layout");
_Static_assert(offsetof(struct muster_seg_header, status) == 1024, "layout");
_Static_assert(offsetof(struct muster_seg_slot, payload) == 128, "layout");
_Static_assert(offsetof(struct muster_seg_slot, declared_pid) == 92, "layout");
_Static_assert(offsetof(struct muster_seg_slot, declared_start) == 104, "layout");
_Static_assert(offsetof(struct muster_seg_header, launcher_pid) == 404, "layout");
_Static_assert(offsetof(struct muster_seg_header, launcher_start) == 408, "layout");
_Static_assert(offsetof(struct muster_seg_header, launcher_pidns) == 416, "layout");

#define MUSTER_SEG_HEADER_SIZE ((uint32_t)sizeof(struct muster_seg_header))
#define MUSTER_SEG_SLOT_SIZE ((uint32_t)sizeof(struct muster_seg_slot))

static inline size_t muster__segment_size(int nranks) {
  return (size_t)MUSTER_SEG_HEADER_SIZE + (size_t)nranks * MUSTER_SEG_SLOT_SIZE;
}

static inline struct muster_seg_slot *muster__segment_slot(struct muster_seg_header *h,
                                                           int rank) {
  return (struct muster_seg_slot *)((char *)h + MUSTER_SEG_HEADER_SIZE +
                                    (size_t)rank * MUSTER_SEG_SLOT_SIZE);
}

/* Check a mapped segment of maplen bytes (maplen = the file size) field by
 * field.  Returns MUSTER_OK, MUSTER_ECORRUPT (bad magic, sizes, strings,
 * out-of-range values, truncated) or MUSTER_EVERSION (magic right, other
 * layout version); on error writes a one-line reason into why (may be NULL).
 * Reads only inside [map, map + maplen); never crashes on any input.  Does
 * not set muster_last_error(). */
MUSTER_HIDDEN int muster__segment_validate(const void *map, size_t maplen, char *why,
                                           size_t whylen);

/* Names.  Job: 1..MUSTER_MAX_JOB printable ASCII bytes, no '/', no '.', no
 * space (muster_segment_check_job, include/muster/segment.h).  Group:
 * 1..MUSTER_MAX_NAME printable ASCII bytes, no '/', no space, not only
 * dots.  Return MUSTER_OK or MUSTER_EINVAL with the message set. */
MUSTER_HIDDEN int muster__segment_check_group(const char *group);

/* MUSTER_JOB checked as a job name (muster_segment_check_job); *job points
 * into the environment.  Unset: MUSTER_DEFAULT_JOB (env.h).  Here, not in
 * env.c: the rule is the segment name's, a layer above env. */
MUSTER_HIDDEN int muster__env_job(const char **job);
/* 1 if every byte of s is one a job name (allow_dot 0) or a group name
 * (allow_dot 1) may hold; the length and the only-dots rule are the
 * callers'. */
MUSTER_HIDDEN int muster__segment_name_chars_ok(const char *s, int allow_dot);

/* Longest segment file name, without NUL (include/muster/segment.h). */
#define MUSTER_SEG_NAME_MAX MUSTER_SEGMENT_NAME_MAX
_Static_assert(MUSTER_SEG_NAME_MAX <= 255, "segment names must fit NAME_MAX");

/* This process's pid namespace, which every segment name it uses carries,
 * into *ns: MUSTER_OK, or MUSTER_ESYS with the message set when
 * /proc/self/ns/pid is unreadable. */
MUSTER_HIDDEN int muster__segment_pidns(uint64_t *ns);

/* "muster.<uid>.<pidns>.<job>.<group>" of this process (getuid(), its pid
 * namespace) into buf.  MUSTER_EINVAL if it does not fit; MUSTER_ESYS when
 * this process's pid namespace cannot be read (/proc/self/ns/pid). */
MUSTER_HIDDEN int muster__segment_name(char *buf, size_t cap, const char *job,
                                       const char *group);

/* The same name for pid namespace pidns (> 0) and uid getuid(); for tools
 * and tests that name segments of another namespace.  MUSTER_EINVAL if
 * pidns is 0 or the name does not fit. */
MUSTER_HIDDEN int muster__segment_name_in(char *buf, size_t cap, uint64_t pidns,
                                          const char *job, const char *group);

/* Folder segments live in: "/dev/shm", unless a test overrode it. */
MUSTER_HIDDEN const char *muster__segment_dir(void);

/* A mapped segment as the runtime holds it. */
struct muster_segment {
  struct muster_seg_header *hdr;
  size_t size;
  int fd;                  /* kept open while mapped (see lifetime above)  */
  dev_t dev;
  ino_t ino;
  uint64_t pidns;          /* the pid namespace in its name (the opener's)  */
  char path[320];          /* /dev/shm/muster.<uid>.<pidns>.<job>.<group>   */
};

/* Open group (job, group) of nranks of this process's pid namespace by
 * name: create it (O_CREAT|O_EXCL, 0600, fallocate, header, magic last) or
 * attach and validate the existing one (one whose header names another
 * creator pid namespace than its name is MUSTER_ECORRUPT); a stale existing
 * one (creator and every seated member dead, or corrupt with a dead
 * creator, or poisoned/closing) is removed and the open retried.  *created
 * says which.  Errors: MUSTER_EACCES, MUSTER_ENOSPC, MUSTER_ECORRUPT,
 * MUSTER_EVERSION, MUSTER_EMISMATCH (nranks differ; the existing group is
 * poisoned with EMISMATCH too), MUSTER_ESYS (also: no pid namespace known);
 * nothing is left behind on error. */
MUSTER_HIDDEN int muster__segment_open(struct muster_segment *seg, const char *job,
                                       const char *group, int nranks, int *created);

/* 1 when the segment would be stale (its creator and every seated rank
 * dead, as a join that reclaims it judges) once this process is gone:
 * nobody else can still use it. */
MUSTER_HIDDEN int muster__segment_ours_alone(const struct muster_seg_header *h);

/* muster_segment_reclaim_stale: public, muster/segment.h. */

/* Remove the segment's name if the name still refers to this segment
 * (same dev/ino).  Harmless when already gone. */
MUSTER_HIDDEN void muster__segment_unlink(const struct muster_segment *seg);

/* munmap + close. */
MUSTER_HIDDEN void muster__segment_close(struct muster_segment *seg);

/* Test hooks (tests only; never set in production): use another folder
 * instead of /dev/shm (NULL restores it), and make the next allocation fail
 * with errno err (0 disables). */
MUSTER_HIDDEN void muster__segment_test_set_dir(const char *dir);
MUSTER_HIDDEN void muster__segment_test_fail_alloc(int err);

#endif
