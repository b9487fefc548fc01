/*
 * muster/segment.h - the public seam for inspecting group segments: their
 * file names, which segments are where, and a read-only copy of what one
 * holds.  For tools (shmdump), test harnesses (leak checks) and adapters;
 * the runtime's own code uses the same functions, so a name is made and
 * taken apart in one place (runtime/shm/segment_name.c).
 *
 * A group's segment is the file
 *
 *     /dev/shm/muster.<uid>.<pidns>.<job>.<group>
 *
 * <uid> and <pidns> are decimal without leading zeros: the owner's uid and
 * the inode of the creator's /proc/self/ns/pid (never 0).  <job> has no
 * '.', so the group name is everything after the fourth '.'.  Every process
 * of a group is in one pid namespace (processes of two namespaces that
 * share /dev/shm, containers, never meet in one segment).  docs/runtime.md
 * "Naming" is the documentation of record.
 *
 * Conventions: muster.h's (0 or a negative MUSTER_E* code).  The parsing
 * and matching functions never set muster_last_error(): scanners feed them
 * every file of a folder.  Nothing here writes to a segment; only
 * muster_segment_reclaim_stale removes one, by the rule a join applies.
 */
#ifndef MUSTER_SEGMENT_PUBLIC_H
#define MUSTER_SEGMENT_PUBLIC_H

#include <stddef.h>
#include <stdint.h>

#include "../muster.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MUSTER_SEGMENT_DIR "/dev/shm"   /* the folder segments live in      */
#define MUSTER_SEGMENT_PREFIX "muster." /* every segment file name's start */
/* Longest file name the runtime makes, without NUL: "muster." + uid (10
 * digits) + '.' + pidns (20) + '.' + job + '.' + group = 200 bytes.  Names
 * found in a folder may be longer (up to NAME_MAX, 255): the parser takes
 * any group part. */
#define MUSTER_SEGMENT_NAME_MAX (7 + 10 + 1 + 20 + 1 + MUSTER_MAX_JOB + 1 + MUSTER_MAX_NAME)
#define MUSTER_SEGMENT_FILE_MAX 255     /* NAME_MAX: longest name in a folder */

/* ------------------------------------------------------------------------ */
/* Names                                                                     */
/* ------------------------------------------------------------------------ */

/* A segment file name taken apart (copies, no pointers into the input). */
typedef struct muster_segment_name {
  uint32_t uid;                          /* the owner's uid                  */
  uint64_t pidns;                        /* the creator's pid namespace, > 0 */
  char job[MUSTER_MAX_JOB + 1];          /* 1..MUSTER_MAX_JOB bytes, no '.'   */
  char group[MUSTER_SEGMENT_FILE_MAX + 1]; /* all after the fourth '.'       */
  char file[MUSTER_SEGMENT_FILE_MAX + 1];  /* the whole name                  */
} muster_segment_name_t;

/* Take apart a file name (a basename, no folder): MUSTER_OK when it is
 * "muster." + uid (decimal, no leading zero, 32 bits) + '.' + pidns
 * (decimal, no leading zero, 1..2^64-1) + '.' + a valid job
 * (muster_segment_check_job's rule) + '.' + a non-empty rest, the group,
 * and at most MUSTER_SEGMENT_FILE_MAX bytes.  The group is not judged: a
 * scanner must see a file with a hostile group name too.  MUSTER_EINVAL
 * for anything else, e.g. the names of builds up to 5b153d5,
 * "muster.<uid>.<job>.<group>" (unless their job was all digits: then they
 * read as a name of another pid namespace).  Reads name only up to its
 * NUL; *out is zeroed on error.  Never sets muster_last_error(). */
MUSTER_EXTERN int muster_segment_name_parse(const char *name, muster_segment_name_t *out);

/* Make the name of (job, group) for uid and pid namespace pidns (0: this
 * process's, muster_segment_self_pidns) into buf of cap bytes: the inverse
 * of muster_segment_name_parse.  MUSTER_OK; MUSTER_EINVAL (message set)
 * when job breaks muster_segment_check_job's rule, group is empty or has a
 * '/', or the name does not fit (muster_group_join's rule for a group is
 * stricter; this one lets a test name the hostile files a scanner must
 * survive); MUSTER_ESYS when pidns is 0 and this process's namespace cannot
 * be read. */
MUSTER_EXTERN int muster_segment_name_format(char *buf, size_t cap, uint32_t uid, uint64_t pidns,
                                             const char *job, const char *group);

/* The rule for a job key (MUSTER_JOB, opts->job): 1..MUSTER_MAX_JOB
 * printable ASCII bytes, no '/', '.' or space.  MUSTER_OK, or MUSTER_EINVAL
 * with the message set. */
MUSTER_EXTERN int muster_segment_check_job(const char *job);

/* This process's pid namespace (inode of /proc/self/ns/pid), which every
 * segment name it makes carries, into *ns: MUSTER_OK, or MUSTER_ESYS with
 * the message set when /proc is unreadable. */
MUSTER_EXTERN int muster_segment_self_pidns(uint64_t *ns);

/* What muster_segment_name_match requires of a name (bits; 0: only that it
 * parses). */
#define MUSTER_SEGMENT_MINE 0x1u  /* its uid is getuid()                      */
#define MUSTER_SEGMENT_HERE 0x2u  /* its pid namespace is this process's     */

/* 1 when file name `name` parses and meets every bit of `want` and, when
 * job is not NULL, names that job; else 0 (also when want has HERE and
 * this process's namespace is unknown).  Never sets muster_last_error().
 * A leak check of a job: want = MUSTER_SEGMENT_MINE, job = the job (any
 * pid namespace: a rank in a container leaks into the same /dev/shm). */
MUSTER_EXTERN int muster_segment_name_match(const char *name, unsigned want, const char *job);

/* List the segments in folder dir (NULL: MUSTER_SEGMENT_DIR) whose names
 * match (want, job) as muster_segment_name_match says, in readdir order,
 * into out[0 .. cap) (out may be NULL when cap is 0).  Returns how many
 * match, which may exceed cap (call again with a larger array), or
 * MUSTER_ESYS (message set) when dir cannot be read. */
MUSTER_EXTERN int muster_segment_list(const char *dir, unsigned want, const char *job,
                                      muster_segment_name_t *out, int cap);

/* Remove the segment of (job, group) of this process's pid namespace in
 * MUSTER_SEGMENT_DIR when a join of that name would reclaim it (stale:
 * creator and every seated rank dead; poisoned; corrupt with a dead
 * creator; a creation killed half way, 2 s old), and nothing else: a live
 * group is never touched.  1 removed, 0 not (no such file, kept, NULL or
 * invalid names, or an error: the thread's message may then be set).  For
 * sweeps of names nobody will join again (the CLI's leftovers of earlier
 * runs a SIGKILL interrupted, tools/muster/launch.c); `shmdump --clean`
 * judges segments of every namespace by the same rule. */
MUSTER_EXTERN int muster_segment_reclaim_stale(const char *job, const char *group);

/* ------------------------------------------------------------------------ */
/* A read-only view of a segment's contents                                 */
/* ------------------------------------------------------------------------ */

/* Phase of a rank's seat (muster_segment_rank_t.phase). */
#define MUSTER_SEGMENT_PHASE_FREE 0      /* never occupied                     */
#define MUSTER_SEGMENT_PHASE_JOINED 1    /* seated, not in a barrier           */
#define MUSTER_SEGMENT_PHASE_PUBLISHED 2 /* payload written, about to arrive   */
#define MUSTER_SEGMENT_PHASE_WAITING 3   /* at the barrier of barrier_gen      */
#define MUSTER_SEGMENT_PHASE_PASSED 4    /* past it (reading or computing)     */
#define MUSTER_SEGMENT_PHASE_LEFT 5      /* left; pid names the last occupant  */

/* One rank's seat.  Times are CLOCK_REALTIME ns, 0 when never set.  A pid
 * with its start_time (field 22 of /proc/PID/stat) names a process only in
 * pid namespace pidns (0: the segment's). */
typedef struct muster_segment_rank {
  int32_t pid;             /* occupant, kept after it left; 0 never seated */
  int32_t tid;             /* its thread                                    */
  uint64_t start_time;
  uint64_t pidns;
  int32_t device;          /* -1: host                                       */
  uint32_t phase;          /* MUSTER_SEGMENT_PHASE_*                          */
  uint32_t barrier_gen;    /* generation at its last arrival                  */
  uint32_t abort_seen;     /* 1: it was given the group's abort error          */
  uint64_t sessions;       /* joins of this seat                               */
  uint64_t barriers;       /* barriers passed in this session                  */
  uint64_t arrive_ns, wait_start_ns, join_ns; /* wait_start_ns 0: not waiting */
  int32_t declared_pid;    /* a launcher's pid for a rank not joined yet, 0   */
  uint64_t declared_start;
  uint32_t payload_len;    /* bytes of its latest published round, 0 none     */
  uint32_t payload_round;  /* the generation that round was published for     */
  uint8_t payload[MUSTER_MAX_PAYLOAD];
} muster_segment_rank_t;

/* A segment's header and seats, copied out (the layout itself stays the
 * runtime's).  Strings are NUL-terminated. */
typedef struct muster_segment_view {
  uint32_t version;        /* layout version                                 */
  uint64_t total_size;     /* bytes: the file's size                          */
  uint32_t uid;            /* creator's uid                                   */
  int32_t nranks;          /* 1..MUSTER_MAX_RANKS                             */
  int32_t creator_pid;
  uint64_t creator_start;
  uint64_t creator_pidns;  /* equals the name's <pidns> (0: unknown)          */
  uint64_t created_ns;
  char job[MUSTER_MAX_JOB + 1];
  char group[MUSTER_MAX_NAME + 1];
  uint32_t generation;     /* barriers completed                              */
  uint32_t arrived;        /* ranks at the open barrier                        */
  uint32_t seated;         /* ranks seated now                                 */
  uint64_t seen_mask;      /* bit r: rank r has joined once                    */
  int formed;              /* every rank joined; the name was removed          */
  int retired, closing;
  int32_t launcher_pid;    /* a launcher holding the group, 0 none             */
  uint64_t launcher_start, launcher_pidns;
  int aborted;             /* 1: poisoned; abort_* below are set               */
  int32_t abort_code, abort_rank, abort_pid;
  uint64_t abort_ns;
  char abort_reason[512];
  int status_valid;        /* the leader published a status                    */
  int32_t status;          /* its latest one                                   */
  uint32_t status_round, status_len;
  muster_segment_rank_t ranks[MUSTER_MAX_RANKS]; /* [0, nranks) are set       */
} muster_segment_view_t;

/* Bytes of a segment of nranks (1..MUSTER_MAX_RANKS) ranks; 0 otherwise.
 * muster_segment_size(MUSTER_MAX_RANKS) is the largest a valid one has. */
MUSTER_EXTERN size_t muster_segment_size(int nranks);

/* Why muster_segment_view refused bytes (muster_segment_view_t aside). */
typedef struct muster_segment_verdict {
  int truncated;           /* shorter than a header or than its header says */
  char why[256];           /* one line: "bad magic ...", "" when valid       */
} muster_segment_verdict_t;

/* Validate len bytes of a segment (a copy: read the file with pread, never
 * map a live one to inspect it) field by field, then copy it into *out.
 * MUSTER_OK; MUSTER_ECORRUPT (bad magic, sizes, strings, out-of-range
 * values, truncated or padded) or MUSTER_EVERSION (another layout
 * version), with *verdict (may be NULL) saying why, and *out untouched.
 * Reads only inside [bytes, bytes + len); never crashes on any input; does
 * not set muster_last_error().  It checks the bytes alone: compare uid with
 * the file's owner and creator_pidns with the name's yourself. */
MUSTER_EXTERN int muster_segment_view(const void *bytes, size_t len, muster_segment_view_t *out,
                                      muster_segment_verdict_t *verdict);

/* Liveness of a process recorded in a segment: pid with its start time,
 * recorded in pid namespace pidns (0: unknown, taken as this one's). */
#define MUSTER_SEGMENT_DEAD 0
#define MUSTER_SEGMENT_ALIVE 1
#define MUSTER_SEGMENT_UNKNOWN (-1) /* another pid namespace: /proc here says
                                       nothing about it; treat as alive    */
MUSTER_EXTERN int muster_segment_pid_alive(int32_t pid, uint64_t start_time, uint64_t pidns);

#ifdef __cplusplus
}
#endif

#endif /* MUSTER_SEGMENT_PUBLIC_H */
