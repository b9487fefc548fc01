/*
 * tools/shmdump/decode.c - read one segment and judge it.
 *
 * The file is read with pread into a private, 64-byte aligned snapshot
 * rather than mapped: a segment that another process truncates while we
 * look cannot SIGBUS us, and the fields we validate are the fields we print
 * (a live group keeps changing under a mapping).  Only what fstat reports is
 * read, capped at the largest valid segment; the snapshot is validated and
 * copied out by the runtime's muster_segment_view() before any field is
 * used.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shmdump.h"

const char *sd_state_name(enum sd_state st) {
  static const char *names[SD_STATE_COUNT_] = {
      [SD_LIVE] = "live",           [SD_FORMING] = "forming",   [SD_STUCK] = "stuck",
      [SD_POISONED] = "poisoned",   [SD_STALE] = "stale",       [SD_DEAD_RANKS] = "dead-ranks",
      [SD_UNREADABLE] = "unreadable", [SD_TRUNCATED] = "truncated", [SD_CORRUPT] = "corrupt",
      [SD_VERSION] = "other-version", [SD_FOREIGN] = "foreign"};
  return (unsigned)st < SD_STATE_COUNT_ ? names[st] : "?";
}

const char *sd_phase_name(uint32_t phase) {
  switch (phase) {
  case MUSTER_SEGMENT_PHASE_FREE: return "never joined";
  case MUSTER_SEGMENT_PHASE_JOINED: return "joined";
  case MUSTER_SEGMENT_PHASE_PUBLISHED: return "published";
  case MUSTER_SEGMENT_PHASE_WAITING: return "waiting";
  case MUSTER_SEGMENT_PHASE_PASSED: return "passed";
  case MUSTER_SEGMENT_PHASE_LEFT: return "left";
  default: return "?";
  }
}

static int seated(uint32_t phase) {
  return phase >= MUSTER_SEGMENT_PHASE_JOINED && phase <= MUSTER_SEGMENT_PHASE_PASSED;
}

static void set_state(struct sd_seg *s, enum sd_state st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_state(struct sd_seg *s, enum sd_state st, const char *fmt, ...) {
  va_list ap;
  s->state = st;
  va_start(ap, fmt);
  vsnprintf(s->reason, sizeof s->reason, fmt, ap);
  va_end(ap);
}

/* Read the whole file into *snap (*len bytes); -1 with the state set. */
static int snapshot(struct sd_seg *s, int fd, unsigned char **snap, size_t *snap_len) {
  size_t cap = muster_segment_size(MUSTER_MAX_RANKS);
  size_t len = (size_t)s->file_size < cap ? (size_t)s->file_size : cap;
  size_t alloc = (len + 63) & ~(size_t)63;
  unsigned char *buf = aligned_alloc(64, alloc ? alloc : 64);
  if (!buf) {
    set_state(s, SD_UNREADABLE, "out of memory reading %zu bytes", len);
    return -1;
  }
  memset(buf, 0, alloc ? alloc : 64);
  size_t got = 0;
  while (got < len) {
    ssize_t n = pread(fd, buf + got, len - got, (off_t)got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  if (got < len) {
    free(buf);
    set_state(s, SD_TRUNCATED, "file shrank while being read (%zu of %zu bytes)", got, len);
    return -1;
  }
  *snap = buf;
  *snap_len = len;
  return 0;
}

static int open_checked(struct sd_seg *s) {
  int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | (s->by_name ? O_NOFOLLOW : 0);
  int fd = open(s->open_path, flags);
  if (fd < 0) {
    set_state(s, SD_UNREADABLE, "cannot open %s: %s", s->open_path, strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != s->dev ||
      st.st_ino != s->ino) {
    close(fd);
    set_state(s, SD_UNREADABLE, "replaced or removed while being read");
    return -1;
  }
  s->file_size = st.st_size; /* the size we read is the size we now see */
  return fd;
}

int sd_other_pidns(const struct sd_seg *s) {
  uint64_t mine;
  return s->name_ok && muster_segment_self_pidns(&mine) == MUSTER_OK &&
         s->parsed.pidns != mine;
}

/* pid + start time mean something only in the pid namespace they were
 * recorded in: the segment's (its name) and the slot's (slot.pidns /
 * creator_pidns, 0 = unknown: assume the segment's). */
static int liveness(const struct sd_seg *s, pid_t pid, uint64_t start, uint64_t pidns) {
  if (sd_other_pidns(s)) return SD_UNKNOWN;
  switch (muster_segment_pid_alive(pid, start, pidns)) {
  case MUSTER_SEGMENT_ALIVE: return SD_ALIVE;
  case MUSTER_SEGMENT_DEAD: return SD_DEAD;
  default: return SD_UNKNOWN;
  }
}

const char *sd_alive_name(int alive) {
  return alive == SD_ALIVE ? "alive" : alive == SD_DEAD ? "DEAD" : "unknown";
}

static void judge_valid(struct sd_seg *s, double now) {
  const muster_segment_view_t *h = s->view;
  int any_alive = s->nholders > 0, dead_seated = -1, stuck_rank = -1;
  double longest_wait = 0;
  s->creator_alive = liveness(s, h->creator_pid, h->creator_start, h->creator_pidns);
  any_alive |= s->creator_alive != SD_DEAD;
  for (int r = 0; r < h->nranks; r++) {
    const muster_segment_rank_t *sl = &h->ranks[r];
    s->alive[r] = sl->pid > 0 ? liveness(s, sl->pid, sl->start_time, sl->pidns) : SD_DEAD;
    any_alive |= s->alive[r] != SD_DEAD;
    if (seated(sl->phase) && sl->pid > 0 && s->alive[r] == SD_DEAD && dead_seated < 0)
      dead_seated = r;
    if (sl->phase == MUSTER_SEGMENT_PHASE_WAITING && sl->wait_start_ns) {
      double waited = now - (double)sl->wait_start_ns * 1e-9;
      if (waited > longest_wait) {
        longest_wait = waited;
        stuck_rank = r;
      }
    }
  }
  if (!any_alive) {
    set_state(s, SD_STALE, "creator pid %d and every member are dead; no process holds it%s",
              h->creator_pid, h->aborted ? " (it was aborted)" : "");
  } else if (h->aborted) {
    set_state(s, SD_POISONED, "aborted with %d (%s), blaming rank %d (pid %d): %.*s",
              h->abort_code, muster_strerror(h->abort_code), h->abort_rank, h->abort_pid,
              (int)sizeof h->abort_reason, h->abort_reason);
  } else if (dead_seated >= 0) {
    const muster_segment_rank_t *sl = &h->ranks[dead_seated];
    set_state(s, SD_DEAD_RANKS, "rank %d (pid %d) died while %s", dead_seated, sl->pid,
              sd_phase_name(sl->phase));
  } else if (stuck_rank >= 0 && longest_wait >= SD_STUCK_S) {
    set_state(s, SD_STUCK, "rank %d has waited %.1f s at the barrier of generation %u",
              stuck_rank, longest_wait, h->generation);
  } else if (!h->formed) {
    set_state(s, SD_FORMING, "%d of %d ranks have joined", __builtin_popcountll(h->seen_mask),
              h->nranks);
  } else {
    set_state(s, SD_LIVE, "%s", "");
  }
}

/* Judge the bytes read: invalid (as the runtime's validation says),
 * inconsistent with the file (size, owner, the name's pid namespace), or
 * valid, kept in s->view for printing. */
static void judge_snapshot(struct sd_seg *s, const unsigned char *snap, size_t len, double now) {
  muster_segment_verdict_t vd;
  s->view = malloc(sizeof *s->view);
  int rc = s->view ? muster_segment_view(snap, len, s->view, &vd) : MUSTER_ENOMEM;
  if (rc == MUSTER_EVERSION || rc == MUSTER_ECORRUPT) {
    set_state(s, rc == MUSTER_EVERSION ? SD_VERSION : vd.truncated ? SD_TRUNCATED : SD_CORRUPT,
              "%s%s", vd.why[0] ? vd.why : muster_strerror(rc),
              s->file_size == 0 ? " (its creator died before sizing it?)" : "");
  } else if (rc != 0) {
    set_state(s, SD_UNREADABLE, "cannot decode: %s", muster_strerror(rc));
  } else if ((size_t)s->file_size > len) {
    set_state(s, SD_CORRUPT, "%lld bytes, larger than any segment (%zu)",
              (long long)s->file_size, len);
  } else if (s->view->uid != (uint32_t)s->owner) {
    set_state(s, SD_CORRUPT, "header says uid %u, the file is owned by uid %u", s->view->uid,
              (unsigned)s->owner);
  } else if (s->name_ok && s->view->creator_pidns != s->parsed.pidns) {
    /* the runtime refuses it too (segment.c check_identity) */
    set_state(s, SD_CORRUPT, "header says pid namespace %llu, the name says %llu",
              (unsigned long long)s->view->creator_pidns,
              (unsigned long long)s->parsed.pidns);
  } else {
    judge_valid(s, now);
    return;
  }
  free(s->view); /* only a valid segment's contents are printed */
  s->view = NULL;
}

void sd_decode(struct sd_seg *s, double now_real_s) {
  if (s->state == SD_UNREADABLE) return; /* set by the scan */
  if (s->owner != getuid()) {
    set_state(s, SD_FOREIGN, "owned by uid %u, not by us (uid %u): not opened",
              (unsigned)s->owner, (unsigned)getuid());
    return;
  }
  int fd = open_checked(s);
  if (fd < 0) return;
  unsigned char *snap = NULL;
  size_t snap_len = 0;
  if (snapshot(s, fd, &snap, &snap_len) == 0) judge_snapshot(s, snap, snap_len, now_real_s);
  free(snap);
  close(fd);
}
