/*
 * tools/shmdump/shmdump.c - list, decode and clean muster segments.
 *
 *   shmdump [--json] [--clean] [--job JOB] [--dir DIR]
 *
 * Lists every muster segment: by name in /dev/shm (forming, stuck at join,
 * stale, foreign) and, through /proc/PID/fd, the formed groups whose name
 * the runtime has already removed.  For each: job, group, generation, ranks
 * expected/joined/arrived, and per rank pid, alive or dead (pid + start
 * time), device, phase, how long it has waited and a preview of what it
 * published; ranks that hold the group up are printed as MISSING.  Segments
 * of another pid namespace (in their name) are listed with liveness
 * unknown.  A
 * truncated, corrupt, foreign or other-version segment is reported with the
 * reason.  --clean unlinks by-name segments that no process holds (open or
 * mapped) and whose creator and members are all dead, or that cannot be
 * read as a group (corrupt, truncated, other layout version) and have not
 * changed for 2 s; never a live or foreign one.
 *
 * Exit status: 0 (whatever was found), 1 when the folder cannot be read,
 * 2 on bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "out_close.h"
#include "cli_args.h"
#include "shmdump.h"

static const char usage_text[] =
    "usage: shmdump [--json] [--clean] [--job JOB] [--dir DIR]\n"
    "\n"
    "List and decode every muster segment of this machine: by name in DIR (groups\n"
    "forming, stuck at join, stale) and through /proc/PID/fd (formed groups, whose\n"
    "name is already removed).  Ranks holding a group up are shown as MISSING.\n"
    "\n"
    "  --json     one JSON object: {\"uid\",\"dir\",\"job\",\"count\",\"segments\":[...],\"removed\":[...]}\n"
    "  --clean    unlink by-name segments that no process holds (open or mapped) and\n"
    "             whose creator and members are all dead, or that are corrupt,\n"
    "             truncated or of another layout version and unchanged for 2 s;\n"
    "             never a live or foreign one; prints what it removed\n"
    "  --job JOB  only segments of job JOB (the MUSTER_JOB of the processes), of\n"
    "             any pid namespace\n"
    "  --dir DIR  look in DIR instead of /dev/shm\n"
    "\n"
    "states: live, forming, stuck (a rank waited > 1 s), poisoned (aborted), stale\n"
    "(everyone dead), dead-ranks, truncated, corrupt, other-version, foreign, unreadable.\n"
    "Segments of another pid namespace (another container sharing /dev/shm) are listed\n"
    "with liveness \"unknown\": never stale, never cleaned from here.\n"
    "exit status: 0 ok (whatever was found); 1 DIR unreadable; 2 bad usage.\n"
    "docs: docs/troubleshooting.md\n";

static double now_real(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum { O_HELP, O_H, O_JSON, O_CLEAN, O_JOB, O_DIR };
static const cli_opt_t opts[] = {{"--help", 0},  {"-h", 0},    {"--json", 0},
                                 {"--clean", 0}, {"--job", 1}, {"--dir", 1}};

/* Option k with value v into the sd_opts arg (a cli_on_word): 0 or 2. */
static int option(int k, const char *v, void *arg) {
  struct sd_opts *o = arg;
  if ((k == O_JOB || k == O_DIR) && !v[0]) return cli_usage_error("shmdump", "option '%s' needs a value", opts[k].name);
  if (k == O_JSON) o->json = 1;
  else if (k == O_CLEAN) o->clean = 1;
  else if (k == O_JOB) o->job = v;
  else o->dir = v;
  return 0;
}

static int parse_args(int argc, char **argv, struct sd_opts *o) {
  *o = (struct sd_opts){.dir = "/dev/shm"};
  int rc = cli_args_each("shmdump", argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), 0, option, o);
  if (rc == CLI_HELP) {
    fputs(usage_text, stdout);
    return 1;
  }
  if (rc != 0) return 2;
  if (o->job && muster_segment_check_job(o->job) < 0) /* the runtime's rule for job keys */
    return cli_usage_error("shmdump", "--job: %s", muster_last_error());
  /* "/dev/shm/" and "/dev/shm" must match the same /proc link targets */
  static char dir[4096];
  snprintf(dir, sizeof dir, "%s", o->dir);
  for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--) dir[n - 1] = '\0';
  o->dir = dir;
  return 0;
}

/* May --clean remove s?  Only a by-name segment of ours that no process
 * holds (fd or mapping): a stale one (creator and members dead), or one that
 * cannot be read as a group (corrupt, truncated, another layout version)
 * and has not changed for SD_CLEAN_MIN_AGE_S (a creator is never without
 * its fd, so this is only a second belt).  Never a live or foreign one. */
static int removable(const struct sd_seg *s, double now) {
  if (!s->by_name || s->nholders > 0 || s->owner != getuid()) return 0;
  switch (s->state) {
  case SD_STALE: return 1;
  case SD_CORRUPT:
  case SD_TRUNCATED:
  case SD_VERSION: return now - s->mtime >= SD_CLEAN_MIN_AGE_S;
  default: return 0;
  }
}

/* Unlink it, provided its name still refers to the file we judged (a new
 * group of that name would be another inode). */
static void clean_one(struct sd_seg *s, double now) {
  if (!removable(s, now)) return;
  struct stat st;
  if (lstat(s->path, &st) != 0 || st.st_dev != s->dev || st.st_ino != s->ino) return;
  if (unlink(s->path) == 0) s->removed = 1;
  else fprintf(stderr, "shmdump: cannot remove %s: %s\n", s->path, strerror(errno));
}

int main(int argc, char **argv) {
  struct sd_opts o;
  struct sd_list l = {0};
  int rc = parse_args(argc, argv, &o);
  if (rc == 1) return 0; /* --help */
  if (rc != 0) return rc;
  if (sd_scan(&o, &l) != 0) return 1;
  double now = now_real();
  for (int i = 0; i < l.n; i++) sd_decode(&l.v[i], now);
  if (o.clean)
    for (int i = 0; i < l.n; i++) clean_one(&l.v[i], now);
  if (o.json) sd_print_json(&o, &l, now);
  else sd_print_text(&o, &l, now);
  sd_list_free(&l);
  return out_close("shmdump", 0);
}
