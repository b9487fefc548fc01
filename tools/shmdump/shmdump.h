/*
 * tools/shmdump/shmdump.h - shmdump's parts: finding segments (scan.c),
 * reading and judging them (decode.c), printing them (print.c), and the
 * command itself (shmdump.c).
 *
 * A segment is found two ways:
 *   - by name in /dev/shm (groups forming, stuck at join, stale, or foreign),
 *   - through /proc/PID/fd/N of every process of ours, for formed groups whose
 *     name the runtime already removed ("/dev/shm/muster.... (deleted)").
 * Both are deduplicated by (dev, inode); every pid holding one open is kept.
 */
#ifndef MUSTER_SHMDUMP_H
#define MUSTER_SHMDUMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "muster.h"
#include "muster/segment.h" /* the public seam: shmdump reads no runtime internals */

#define SD_PATH 512

/* How a segment was judged (worst first for the eye). */
enum sd_state {
  SD_LIVE = 0,   /* valid, formed, its members alive                         */
  SD_FORMING,    /* valid, not every rank has joined yet, not waiting long   */
  SD_STUCK,      /* some rank waits for at least SD_STUCK_S for others        */
  SD_POISONED,   /* aborted: every participant got the abort code            */
  SD_STALE,      /* creator and every member dead, nobody holds it open      */
  SD_DEAD_RANKS, /* some seated member dead, others alive                     */
  SD_UNREADABLE, /* cannot be opened or read (reason says why)               */
  SD_TRUNCATED,  /* shorter than a header or than its header says            */
  SD_CORRUPT,    /* a field fails validation                                 */
  SD_VERSION,    /* magic right, another layout version                      */
  SD_FOREIGN,    /* owned by another uid: not opened                          */
  SD_STATE_COUNT_
};

/* Liveness of a pid recorded in a segment.  UNKNOWN: it was recorded in
 * another pid namespace (the segment's name or its slot says so), where
 * our /proc says nothing about it; it is then treated as possibly alive
 * (never stale, never cleaned). */
enum { SD_DEAD = 0, SD_ALIVE = 1, SD_UNKNOWN = -1 };

#define SD_STUCK_S 1.0 /* a wait longer than this is shown as stuck */
/* --clean removes an unreadable (corrupt, truncated, other-version) by-name
 * segment only when nobody holds it and it has not changed for this long */
#define SD_CLEAN_MIN_AGE_S 2.0

struct sd_seg {
  char path[SD_PATH];      /* /dev/shm/NAME, or the link target (deleted)    */
  char open_path[SD_PATH]; /* what we open: /dev/shm/NAME or /proc/P/fd/N    */
  char name[256];          /* basename: muster.<uid>.<pidns>.<job>.<group>   */
  muster_segment_name_t parsed; /* the name taken apart, if name_ok          */
  int name_ok;             /* the name is of this build's format             */
  int by_name;             /* found in the folder (so --clean may unlink it) */
  dev_t dev;
  ino_t ino;
  uid_t owner;
  off_t file_size;
  double mtime;            /* last modification, CLOCK_REALTIME seconds      */
  pid_t *holders;          /* processes with it open or mapped (sorted)      */
  int nholders, cap_holders;

  /* set by sd_decode */
  enum sd_state state;
  char reason[512];        /* why it is unreadable/corrupt/stuck/...         */
  muster_segment_view_t *view; /* its validated contents, or NULL           */
  int creator_alive;        /* SD_ALIVE, SD_DEAD or SD_UNKNOWN               */
  int alive[MUSTER_MAX_RANKS];
  int removed;             /* --clean unlinked it                            */
};

struct sd_list {
  struct sd_seg *v;
  int n, cap;
};

struct sd_opts {
  const char *dir;   /* "/dev/shm" unless --dir */
  const char *job;   /* --job filter or NULL   */
  int json, clean, all_uids;
};

/* scan.c: fill `l` with every muster segment in opts->dir and behind
 * /proc/PID/fd.  0, or -1 with a message on stderr when dir cannot be read. */
int sd_scan(const struct sd_opts *o, struct sd_list *l);
void sd_list_free(struct sd_list *l);

/* decode.c */
void sd_decode(struct sd_seg *s, double now_real_s);
const char *sd_state_name(enum sd_state st);
const char *sd_phase_name(uint32_t phase);
const char *sd_alive_name(int alive); /* "alive", "DEAD", "unknown" */
/* 1 if the segment's name says it belongs to another pid namespace than
 * ours (0 for names that do not say: another format) */
int sd_other_pidns(const struct sd_seg *s);

/* print.c */
void sd_print_text(const struct sd_opts *o, const struct sd_list *l, double now_real_s);
void sd_print_json(const struct sd_opts *o, const struct sd_list *l, double now_real_s);

#endif
