/*
 * tests/unit/test_segment.c - header validation (every field corrupted,
 * every truncation), and the bad segments a join must refuse or reclaim:
 * other uid, other version, corrupt, truncated, stale, abandoned,
 * unwritable and full /dev/shm (names: test_segment_names.c).
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

#include "muster.h"
#include "base/proc.h"
#include "shm/segment.h"
#include "task.h"

/* A freshly created, valid segment image of group `group` of nranks
 * (copied to the heap). */
static void *make_image(const char *group, int nranks, size_t *size) {
  struct muster_segment seg;
  int created = 0;
  ASSERT_OK(muster__segment_open(&seg, test_job(), group, nranks, &created));
  ASSERT_EQ(created, 1);
  *size = seg.size;
  void *copy = malloc(seg.size);
  ASSERT(copy);
  memcpy(copy, seg.hdr, seg.size);
  muster__segment_unlink(&seg);
  muster__segment_close(&seg);
  return copy;
}

TEST_IMPL(segment_validate_fields) {
  size_t size;
  char why[256];
  struct muster_seg_header *good = make_image("img", 3, &size);
  ASSERT_EQ(size, muster__segment_size(3));
  ASSERT_EQ(muster__segment_validate(good, size, why, sizeof why), 0);
  ASSERT_EQ(good->nranks, 3);
  ASSERT_EQ(good->creator_pid, getpid());
  ASSERT_EQ(good->creator_start, muster__proc_start_time(getpid()));
  ASSERT(strcmp(good->group, "img") == 0 && strcmp(good->job, test_job()) == 0);
  struct muster_seg_header *h = malloc(size);
  ASSERT(h);
  /* one corruption per case; each must be refused with the right code */
  for (int c = 0; c < 24; c++) {
    memcpy(h, good, size);
    int want = MUSTER_ECORRUPT;
    struct muster_seg_slot *s1 = muster__segment_slot(h, 1);
    switch (c) {
    case 0: h->magic = 0; break;
    case 1: h->magic ^= 1; break;
    case 2: h->version = 2; want = MUSTER_EVERSION; break;
    case 3: h->header_size += 64; break;
    case 4: h->slot_size -= 64; break;
    case 5: h->max_payload = 4096; break;
    case 6: h->nranks = 0; break;
    case 7: h->nranks = 65; break;
    case 8: h->nranks = 2; break; /* size no longer matches */
    case 9: h->total_size += 1; break;
    case 10: memset(h->job, 'j', sizeof h->job); break; /* unterminated */
    case 11: h->job[0] = '\0'; break;
    case 12: strcpy(h->job, "a.b"); break;
    case 13: memset(h->group, 'g', sizeof h->group); break;
    case 14: strcpy(h->group, "a/b"); break;
    case 15: h->creator_pid = 0; break;
    case 16: h->seats = 7; break;
    case 17: h->seen_mask = 1u << 5; break;
    case 18: h->formed = 2; break;
    case 19: h->abort_state = 3; break;
    case 20: h->abort_state = MUSTER_ABORT_SET; h->abort_code = 5; break;
    case 21: s1->phase = 9; break;
    case 22: s1->payload_len[1] = MUSTER_MAX_PAYLOAD + 1; break;
    case 23: h->status[0].len = 100000; break;
    }
    int rc = muster__segment_validate(h, size, why, sizeof why);
    if (rc != want) fprintf(stderr, "case %d: rc %d why %s\n", c, rc, why);
    ASSERT_EQ(rc, want);
    ASSERT(why[0] != '\0');
  }
  /* a poisoned but well-formed segment is valid */
  memcpy(h, good, size);
  h->abort_state = MUSTER_ABORT_SET;
  h->abort_code = MUSTER_EPEERDEAD;
  strcpy(h->abort_reason, "x");
  ASSERT_EQ(muster__segment_validate(h, size, why, sizeof why), 0);
  /* every truncation, on an exactly sized heap block (ASan sees over-reads) */
  for (size_t n = 0; n < size; n += (n < 4096 ? 1 : 61)) {
    void *t = malloc(n ? n : 1);
    memcpy(t, good, n);
    ASSERT_EQ(muster__segment_validate(n ? t : NULL, n, why, sizeof why) < 0, 1);
    free(t);
  }
  /* padded */
  void *big = calloc(1, size + 4096);
  memcpy(big, good, size);
  ASSERT_EQ(muster__segment_validate(big, size + 4096, why, sizeof why), MUSTER_ECORRUPT);
  ASSERT_STR_CONTAINS(why, "header says");
  /* random garbage never crashes */
  srand(7);
  for (int i = 0; i < 2000; i++) {
    memcpy(h, good, size);
    for (int k = 0; k < 8; k++) ((uint8_t *)h)[rand() % size] = (uint8_t)rand();
    (void)muster__segment_validate(h, size, why, sizeof why);
  }
  ASSERT_EQ(muster__segment_validate(h, size, NULL, 0) <= 0, 1);
  free(big);
  free(h);
  free(good);
  return 0;
}

/* Write a file at the segment path of group `name`. */
static void path_of(const char *name, char *path, size_t cap) {
  char n[256];
  ASSERT_OK(muster__segment_name(n, sizeof n, test_job(), name));
  snprintf(path, cap, "%s/%s", muster__segment_dir(), n);
}

static void write_file(const char *path, const void *data, size_t len) {
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT(fd >= 0);
  ASSERT_EQ(write(fd, data, len), (ssize_t)len);
  close(fd);
}

static int exists(const char *path) { return access(path, F_OK) == 0; }

static int join_rc(const char *name, int nranks) {
  muster_group_t *g = NULL;
  int rc = muster_group_join(name, 0, nranks, NULL, &g);
  if (rc == 0) {
    muster_group_leave(g);
    muster_group_cache_flush();
  }
  return rc;
}

/* a pid that surely is dead: a reaped child */
static pid_t dead_pid(void) {
  pid_t p = fork();
  if (p == 0) _exit(0);
  waitpid(p, NULL, 0);
  return p;
}

TEST_IMPL(segment_refuse_bad) {
  size_t size;
  char path[512];
  struct muster_seg_header *img = make_image("bad", 2, &size);
  int fds = test_count_fds();

  /* other layout version, live creator: refused, left alone */
  path_of("bad", path, sizeof path);
  img->version = 99;
  write_file(path, img, size);
  ASSERT_EQ(join_rc("bad", 2), MUSTER_EVERSION);
  ASSERT_STR_CONTAINS(muster_last_error(), path);
  ASSERT(exists(path));
  img->version = MUSTER_SEG_VERSION;

  /* corrupt with a live creator (us): refused, named */
  img->total_size = 12345;
  write_file(path, img, size);
  ASSERT_EQ(join_rc("bad", 2), MUSTER_ECORRUPT);
  ASSERT_STR_CONTAINS(muster_last_error(), path);
  ASSERT(exists(path));
  img->total_size = size;

  /* truncated, live creator */
  write_file(path, img, 100);
  ASSERT_EQ(join_rc("bad", 2), MUSTER_ECORRUPT);
  ASSERT_STR_CONTAINS(muster_last_error(), "truncated");

  /* foreign magic: cannot decide, refused */
  struct muster_seg_header junk = {0};
  junk.magic = 0x1122334455667788ull;
  write_file(path, &junk, sizeof junk);
  ASSERT_EQ(join_rc("bad", 2), MUSTER_ECORRUPT);
  ASSERT_STR_CONTAINS(muster_last_error(), "bad magic");

  /* header claims another uid */
  img->uid = getuid() + 1;
  write_file(path, img, size);
  ASSERT_EQ(join_rc("bad", 2), MUSTER_EACCES);
  ASSERT_STR_CONTAINS(muster_last_error(), "uid");
  img->uid = getuid();

  /* named for our pid namespace, made in another (or in none known) */
  uint64_t ns = img->creator_pidns;
  ASSERT_EQ(ns, muster__proc_self_pidns());
  for (int k = 0; k < 2; k++) {
    img->creator_pidns = k ? 0 : ns + 1;
    write_file(path, img, size);
    ASSERT_EQ(join_rc("bad", 2), MUSTER_ECORRUPT);
    ASSERT_STR_CONTAINS(muster_last_error(), "pid namespace");
    ASSERT(exists(path));
  }
  img->creator_pidns = ns;

  /* file owned by another uid (only root can make one) */
  if (getuid() == 0) {
    write_file(path, img, size);
    ASSERT_EQ(chown(path, 65534, 65534), 0);
    ASSERT_EQ(join_rc("bad", 2), MUSTER_EACCES);
    ASSERT_STR_CONTAINS(muster_last_error(), "belongs to uid 65534");
  }

  /* a valid segment of another group or job at the name (a copy, or a
   * hard link to a live one): refused, left alone */
  unlink(path); /* ours again (the case above gave it to uid 65534) */
  snprintf(img->group, sizeof img->group, "other");
  write_file(path, img, size);
  ASSERT_EQ(join_rc("bad", 2), MUSTER_ECORRUPT);
  ASSERT_STR_CONTAINS(muster_last_error(), "holds group other of job ");
  ASSERT_STR_CONTAINS(muster_last_error(), "not group bad of job ");
  ASSERT(exists(path));
  snprintf(img->group, sizeof img->group, "bad");
  snprintf(img->job, sizeof img->job, "otherjob");
  write_file(path, img, size);
  ASSERT_EQ(join_rc("bad", 2), MUSTER_ECORRUPT);
  ASSERT_STR_CONTAINS(muster_last_error(), "holds group bad of job otherjob, not group bad of job ");
  snprintf(img->job, sizeof img->job, "%s", test_job());
  unlink(path);
  {
    muster_group_t *mine = NULL;
    char other_path[512];
    ASSERT_OK(muster_group_join("linked", 0, 2, NULL, &mine));
    path_of("linked", other_path, sizeof other_path);
    ASSERT_EQ(link(other_path, path), 0); /* group linked's live segment, named bad */
    ASSERT_EQ(join_rc("bad", 2), MUSTER_ECORRUPT);
    ASSERT_STR_CONTAINS(muster_last_error(), "holds group linked of job ");
    ASSERT(exists(path));
    unlink(path);
    ASSERT_OK(muster_group_leave(mine));
    muster_group_cache_flush();
  }

  /* a symlink planted at the name is refused, never followed */
  unlink(path);
  ASSERT_EQ(symlink("/etc/passwd", path), 0);
  ASSERT_EQ(join_rc("bad", 2), MUSTER_ECORRUPT);
  ASSERT_STR_CONTAINS(muster_last_error(), "symbolic link");
  unlink(path);

  /* disagreeing nranks with a live group: EMISMATCH, and it is poisoned */
  muster_group_t *g0 = NULL, *g1 = NULL;
  ASSERT_OK(muster_group_join("bad", 0, 2, NULL, &g0));
  ASSERT_EQ(muster_group_join("bad", 1, 3, NULL, &g1), MUSTER_EMISMATCH);
  ASSERT_STR_CONTAINS(muster_last_error(), "nranks 3");
  ASSERT_EQ(muster_group_barrier(g0), MUSTER_EMISMATCH);
  ASSERT_STR_CONTAINS(muster_last_error(), "disagree");
  ASSERT_EQ(muster_group_leave(g0), MUSTER_EMISMATCH);
  ASSERT(!exists(path));
  muster_group_cache_flush();

  ASSERT_EQ(test_count_fds(), fds);
  ASSERT_EQ(test_count_muster_maps(), 0);
  unlink(path);
  free(img);
  return 0;
}

TEST_IMPL(segment_reclaim_stale) {
  size_t size;
  char path[512];
  struct muster_seg_header *img = make_image("stale", 2, &size);
  path_of("stale", path, sizeof path);
  struct stat st0, st1;

  /* valid, creator dead, a seated member dead: reclaimed */
  img->creator_pid = dead_pid();
  struct muster_seg_slot *s = muster__segment_slot(img, 1);
  s->owner_tid = s->tid = s->pid = dead_pid();
  s->start_time = 1;
  img->seats = 1;
  write_file(path, img, size);
  ASSERT_EQ(stat(path, &st0), 0);
  ASSERT_EQ(join_rc("stale", 2), 0);
  ASSERT(!exists(path)); /* the new one was removed by its last one out */

  /* creator dead but a seated member alive (us): attached, not reclaimed */
  s->pid = getpid();
  s->start_time = muster__proc_start_time(getpid());
  s->owner_tid = s->tid = getpid();
  write_file(path, img, size);
  ASSERT_EQ(stat(path, &st0), 0);
  muster_group_t *g = NULL;
  ASSERT_OK(muster_group_join("stale", 0, 2, NULL, &g));
  ASSERT_EQ(stat(path, &st1), 0);
  ASSERT_EQ(st1.st_ino, st0.st_ino);
  /* a reused pid: alive pid, wrong start time -> dead, so now stale */
  ASSERT_EQ(muster_group_leave(g), 0);
  muster_group_cache_flush();
  s->start_time = muster__proc_start_time(getpid()) + 1;
  write_file(path, img, size);
  ASSERT_EQ(join_rc("stale", 2), 0);
  ASSERT(!exists(path));

  /* corrupt and its creator dead: reclaimed */
  img->total_size = 1;
  write_file(path, img, size);
  ASSERT_EQ(join_rc("stale", 2), 0);
  ASSERT(!exists(path));

  /* an empty file nobody finished creating, older than 2 s: reclaimed */
  write_file(path, "", 0);
  struct timeval old[2] = {{time(NULL) - 10, 0}, {time(NULL) - 10, 0}};
  ASSERT_EQ(utimes(path, old), 0);
  ASSERT_EQ(join_rc("stale", 2), 0);
  ASSERT(!exists(path));

  /* a young empty one is waited for (a creator may be filling it), then refused */
  write_file(path, "", 0);
  double t0 = test_now();
  ASSERT_EQ(join_rc("stale", 2), MUSTER_ECORRUPT);
  ASSERT_DBL_LT(0.5, test_now() - t0);
  unlink(path);
  free(img);
  return 0;
}

/* /dev/shm unwritable: a folder we may not write in. */
TEST_IMPL(segment_unwritable_dir) {
  char dir[PATH_MAX];
  test_tmp_dir(dir, sizeof dir);
  ASSERT_EQ(chmod(dir, 0555), 0);
  pid_t p = fork();
  if (p == 0) {
    /* root ignores modes: drop to nobody first */
    if (getuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0)) _exit(5);
    muster__segment_test_set_dir(dir);
    muster_group_t *g = NULL;
    int rc = muster_group_join("ro", 0, 2, NULL, &g);
    if (rc != MUSTER_EACCES || !strstr(muster_last_error(), dir)) {
      fprintf(stderr, "rc %d: %s\n", rc, muster_last_error());
      _exit(4);
    }
    _exit(0);
  }
  int st = 0;
  ASSERT_EQ(waitpid(p, &st, 0), p);
  ASSERT(WIFEXITED(st));
  ASSERT_EQ(WEXITSTATUS(st), 0);
  ASSERT_EQ(rmdir(dir), 0); /* nothing was created in it */
  return 0;
}

static int count_dir(const char *dir) {
  DIR *d = opendir(dir);
  ASSERT(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

/* /dev/shm full: ENOSPC at join (never a SIGBUS later), nothing left. */
TEST_IMPL(segment_full) {
  /* 1: fault injection, works anywhere */
  muster__segment_test_fail_alloc(ENOSPC);
  muster_group_t *g = NULL;
  ASSERT_EQ(muster_group_join("full", 0, 8, NULL, &g), MUSTER_ENOSPC);
  ASSERT_STR_CONTAINS(muster_last_error(), "no space");
  muster__segment_test_fail_alloc(0);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  /* 2: a real 8 KiB tmpfs in a private mount namespace, when we may mount */
  pid_t p = fork();
  if (p == 0) {
    char dir[PATH_MAX];
    test_tmp_path(dir, sizeof dir, "muster-full-XXXXXX");
    if (unshare(CLONE_NEWNS) < 0) _exit(77); /* not allowed here: case 1 covers it */
    /* type and source are ignored for a propagation change; valgrind wants them set */
    if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 || !mkdtemp(dir)) _exit(6);
    if (mount("tmpfs", dir, "tmpfs", 0, "size=8k") < 0) {
      rmdir(dir);
      _exit(77);
    }
    muster__segment_test_set_dir(dir);
    int rc = muster_group_join("full", 0, 8, NULL, &g); /* 8 ranks: 20 KiB */
    int left = count_dir(dir);
    int rc2 = muster_group_join("small", 0, 1, NULL, &g); /* 5.4 KiB fits */
    if (rc2 == 0) rc2 = muster_group_leave(g);
    muster_group_cache_flush();
    int left2 = count_dir(dir);
    umount(dir);
    rmdir(dir);
    if (rc != MUSTER_ENOSPC || left != 0 || rc2 != 0 || left2 != 0) {
      fprintf(stderr, "rc %d left %d rc2 %d left2 %d: %s\n", rc, left, rc2, left2,
              muster_last_error());
      _exit(4);
    }
    _exit(0);
  }
  int st = 0;
  ASSERT_EQ(waitpid(p, &st, 0), p);
  ASSERT(WIFEXITED(st));
  if (WEXITSTATUS(st) == 77) fprintf(stderr, "(no mount namespace here: tmpfs case not run)\n");
  else ASSERT_EQ(WEXITSTATUS(st), 0);
  return 0;
}

TEST_IMPL(segment_bad_join_args) {
  muster_group_t *g = (void *)1;
  ASSERT_EQ(muster_group_join("x", 0, 0, NULL, &g), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "nranks 0");
  ASSERT_EQ(muster_group_join("x", 0, -3, NULL, &g), MUSTER_EINVAL);
  ASSERT_EQ(muster_group_join("x", 0, MUSTER_MAX_RANKS + 1, NULL, &g), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "1..64");
  ASSERT_EQ(muster_group_join("x", 2, 2, NULL, &g), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "rank 2 out of range 0..1");
  ASSERT_EQ(muster_group_join("x", -1, 2, NULL, &g), MUSTER_EINVAL);
  ASSERT_EQ(muster_group_join("", 0, 2, NULL, &g), MUSTER_EINVAL);
  ASSERT_EQ(muster_group_join("a/b", 0, 2, NULL, &g), MUSTER_EINVAL);
  ASSERT_EQ(muster_group_join(NULL, 0, 2, NULL, &g), MUSTER_EINVAL);
  ASSERT_EQ(muster_group_join("x", 0, 2, NULL, NULL), MUSTER_EINVAL);
  muster_group_opts_t o = {"bad.job", 0, -1};
  ASSERT_EQ(muster_group_join("x", 0, 2, &o, &g), MUSTER_EINVAL);
  o.job = NULL;
  o.device = -2;
  ASSERT_EQ(muster_group_join("x", 0, 2, &o, &g), MUSTER_EINVAL);
  setenv("MUSTER_JOB", "a/b", 1);
  ASSERT_EQ(muster_group_join("x", 0, 2, NULL, &g), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "job name");
  ASSERT_EQ(test_count_muster_maps(), 0);
  ASSERT_EQ(muster_group_leave(NULL), MUSTER_EINVAL);
  ASSERT_EQ(muster_group_exchange(NULL, NULL, 0), MUSTER_EINVAL);
  ASSERT_EQ(muster_group_barrier(NULL), MUSTER_EINVAL);
  return 0;
}

/* Without /proc the pid namespace, part of every name, is unknown: a join
 * is refused (never a name that could meet another namespace's), and
 * liveness falls back to kill(). */
TEST_IMPL(segment_name_needs_proc) {
  pid_t p = fork();
  ASSERT(p >= 0);
  if (p == 0) {
    ASSERT_EQ(unshare(CLONE_NEWNS), 0); /* needs CAP_SYS_ADMIN: run as root */
    ASSERT_EQ(mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL), 0);
    ASSERT_EQ(mount("tmpfs", "/proc", "tmpfs", 0, "size=4k"), 0); /* an empty /proc */
    ASSERT_EQ(muster__proc_self_pidns(), 0);
    ASSERT_EQ(muster__proc_is_ours(), 0);
    ASSERT_EQ(muster__proc_alive(getppid(), 12345), 1); /* exists: all kill() can tell */
    ASSERT_EQ(muster__proc_alive(dead_pid(), 0), 0);
    muster_group_t *g = NULL;
    ASSERT_EQ(muster_group_join("noproc", 0, 1, NULL, &g), MUSTER_ESYS);
    ASSERT_STR_CONTAINS(muster_last_error(), "/proc/self/ns/pid");
    char name[MUSTER_SEG_NAME_MAX + 1];
    ASSERT_EQ(muster__segment_name(name, sizeof name, "j", "g"), MUSTER_ESYS);
    _exit(0);
  }
  int st = 0;
  ASSERT_EQ(waitpid(p, &st, 0), p);
  ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}
