/* tools/shmdump/scan.c - find muster segments by name and through /proc. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "shmdump.h"

static const char deleted_suffix[] = " (deleted)";

/* --job: the job in the name (of any pid namespace); a name of another
 * format has none, so it is listed only without --job. */
static int job_matches(const struct sd_opts *o, const char *name) {
  if (!o->job) return 1;
  return muster_segment_name_match(name, 0, o->job);
}

static void set_name(struct sd_seg *s, const char *name) {
  snprintf(s->name, sizeof s->name, "%s", name);
  s->name_ok = muster_segment_name_parse(s->name, &s->parsed) == MUSTER_OK;
}

static struct sd_seg *find_inode(struct sd_list *l, dev_t dev, ino_t ino) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i].dev == dev && l->v[i].ino == ino) return &l->v[i];
  return NULL;
}

static struct sd_seg *add_seg(struct sd_list *l) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    struct sd_seg *v = realloc(l->v, (size_t)cap * sizeof *v);
    if (!v) return NULL;
    l->v = v;
    l->cap = cap;
  }
  struct sd_seg *s = &l->v[l->n++];
  memset(s, 0, sizeof *s);
  return s;
}

static void add_holder(struct sd_seg *s, pid_t pid) {
  for (int i = 0; i < s->nholders; i++)
    if (s->holders[i] == pid) return;
  if (s->nholders == s->cap_holders) {
    int cap = s->cap_holders ? 2 * s->cap_holders : 4;
    pid_t *v = realloc(s->holders, (size_t)cap * sizeof *v);
    if (!v) return; /* a shorter holder list is only less informative */
    s->holders = v;
    s->cap_holders = cap;
  }
  s->holders[s->nholders++] = pid;
}

static void fill_stat(struct sd_seg *s, const struct stat *st) {
  s->dev = st->st_dev;
  s->ino = st->st_ino;
  s->owner = st->st_uid;
  s->file_size = st->st_size;
  s->mtime = (double)st->st_mtim.tv_sec + (double)st->st_mtim.tv_nsec * 1e-9;
}

static int scan_dir(const struct sd_opts *o, struct sd_list *l) {
  DIR *d = opendir(o->dir);
  if (!d) {
    fprintf(stderr, "shmdump: cannot read %s: %s\n", o->dir, strerror(errno));
    return -1;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, MUSTER_SEGMENT_PREFIX, strlen(MUSTER_SEGMENT_PREFIX)) != 0) continue;
    if (!job_matches(o, e->d_name)) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue; /* gone */
    struct sd_seg *s = add_seg(l);
    if (!s) break;
    set_name(s, e->d_name);
    snprintf(s->path, sizeof s->path, "%s/%s", o->dir, e->d_name);
    snprintf(s->open_path, sizeof s->open_path, "%s", s->path);
    s->by_name = 1;
    fill_stat(s, &st);
    if (!S_ISREG(st.st_mode)) {
      s->state = SD_UNREADABLE;
      snprintf(s->reason, sizeof s->reason, "not a regular file (mode %o)",
               (unsigned)st.st_mode);
    }
  }
  closedir(d);
  return 0;
}

/* If `target` (a /proc/PID/fd link) names a segment file of o->dir, put its
 * basename into name and return 1. */
static int segment_target(const struct sd_opts *o, char *target, char *name, size_t cap) {
  size_t tl = strlen(target), sl = strlen(deleted_suffix), dl = strlen(o->dir);
  if (tl > sl && strcmp(target + tl - sl, deleted_suffix) == 0) target[tl - sl] = '\0';
  if (strncmp(target, o->dir, dl) != 0 || target[dl] != '/') return 0;
  const char *base = target + dl + 1;
  if (strchr(base, '/') || strncmp(base, MUSTER_SEGMENT_PREFIX, strlen(MUSTER_SEGMENT_PREFIX)) != 0)
    return 0;
  snprintf(name, cap, "%s", base);
  return 1;
}

static void scan_process(const struct sd_opts *o, struct sd_list *l, pid_t pid) {
  char fddir[64];
  snprintf(fddir, sizeof fddir, "/proc/%d/fd", (int)pid);
  DIR *d = opendir(fddir);
  if (!d) return; /* gone, or not ours to look at */
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!isdigit((unsigned char)e->d_name[0])) continue;
    char link[SD_PATH], target[SD_PATH], name[256];
    snprintf(link, sizeof link, "%s/%s", fddir, e->d_name);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    int deleted = n > (ssize_t)strlen(deleted_suffix) &&
                  strcmp(target + n - strlen(deleted_suffix), deleted_suffix) == 0;
    if (!segment_target(o, target, name, sizeof name) || !job_matches(o, name)) continue;
    struct stat st;
    if (stat(link, &st) != 0) continue; /* closed meanwhile */
    struct sd_seg *s = find_inode(l, st.st_dev, st.st_ino);
    if (!s) {
      s = add_seg(l);
      if (!s) break;
      set_name(s, name);
      snprintf(s->path, sizeof s->path, "%s%s", target, deleted ? deleted_suffix : "");
      snprintf(s->open_path, sizeof s->open_path, "%s", link);
      fill_stat(s, &st);
      if (!S_ISREG(st.st_mode)) {
        s->state = SD_UNREADABLE;
        snprintf(s->reason, sizeof s->reason, "not a regular file");
      }
    }
    add_holder(s, pid);
  }
  closedir(d);
}

/* Mappings count as holders too: a process may map a segment without
 * keeping its fd (another runtime version could), and --clean must never
 * pull a segment from under a process that still uses it. */
static void scan_maps(const struct sd_opts *o, struct sd_list *l, pid_t pid) {
  char path[64], line[1024];
  snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return;
  size_t dl = strlen(o->dir);
  while (fgets(line, sizeof line, f)) {
    unsigned maj, min;
    unsigned long long ino;
    int pos = 0;
    if (sscanf(line, "%*s %*s %*s %x:%x %llu %n", &maj, &min, &ino, &pos) != 3 || pos <= 0)
      continue;
    const char *file = line + pos;
    if (strncmp(file, o->dir, dl) != 0 || file[dl] != '/' ||
        strncmp(file + dl + 1, MUSTER_SEGMENT_PREFIX, strlen(MUSTER_SEGMENT_PREFIX)) != 0)
      continue;
    struct sd_seg *s = find_inode(l, makedev(maj, min), (ino_t)ino);
    if (s) add_holder(s, pid);
  }
  fclose(f);
}

static int cmp_pid(const void *a, const void *b) {
  pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
  return (x > y) - (x < y);
}

static int cmp_seg(const void *a, const void *b) {
  const struct sd_seg *x = a, *y = b;
  if (x->by_name != y->by_name) return y->by_name - x->by_name; /* named first */
  return strcmp(x->path, y->path);
}

int sd_scan(const struct sd_opts *o, struct sd_list *l) {
  if (scan_dir(o, l) != 0) return -1;
  DIR *d = opendir("/proc");
  if (d) {
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      char *end;
      long pid = strtol(e->d_name, &end, 10);
      if (*end || pid <= 0 || pid == self) continue;
      scan_process(o, l, (pid_t)pid);
    }
    rewinddir(d);
    while ((e = readdir(d)) != NULL) {
      char *end;
      long pid = strtol(e->d_name, &end, 10);
      if (*end || pid <= 0 || pid == self) continue;
      scan_maps(o, l, (pid_t)pid);
    }
    closedir(d);
  }
  for (int i = 0; i < l->n; i++)
    if (l->v[i].nholders > 1)
      qsort(l->v[i].holders, (size_t)l->v[i].nholders, sizeof(pid_t), cmp_pid);
  if (l->n > 1) qsort(l->v, (size_t)l->n, sizeof *l->v, cmp_seg);
  return 0;
}

void sd_list_free(struct sd_list *l) {
  for (int i = 0; i < l->n; i++) {
    free(l->v[i].holders);
    free(l->v[i].view);
  }
  free(l->v);
  *l = (struct sd_list){0};
}
