/* tools/shmdump/print.c - shmdump's text and JSON output. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "json_str.h"
#include "shmdump.h"

#define SD_PREVIEW 16 /* payload bytes shown in hex */

static const muster_segment_rank_t *slot_of(const struct sd_seg *s, int r) {
  return &s->view->ranks[r];
}

static int at_open_barrier(const muster_segment_view_t *h, const muster_segment_rank_t *sl) {
  return sl->phase == MUSTER_SEGMENT_PHASE_WAITING && sl->barrier_gen == h->generation;
}

/* what a rank in `phase` is doing, for a MISSING line */
static const char *phase_story(uint32_t phase) {
  switch (phase) {
  case MUSTER_SEGMENT_PHASE_JOINED: return "it joined and has not come to a barrier yet";
  case MUSTER_SEGMENT_PHASE_PUBLISHED: return "it published and is about to arrive";
  case MUSTER_SEGMENT_PHASE_WAITING: return "it waits at an older barrier";
  case MUSTER_SEGMENT_PHASE_PASSED: return "it is past its last barrier (reading or computing)";
  default: return "?";
  }
}

/* Why rank r holds the group up, or NULL when it does not.  While someone
 * waits at the open barrier, everyone not waiting there is missing; before
 * the group formed, the ranks that never joined are. */
static const char *missing_why(const struct sd_seg *s, int r, char *buf, size_t cap) {
  const muster_segment_view_t *h = s->view;
  const muster_segment_rank_t *sl = slot_of(s, r);
  int waiting = 0;
  /* A busy healthy group always has someone "behind" at the instant of the
   * snapshot: only name ranks when the group is in trouble. */
  if (s->state == SD_LIVE) return NULL;
  for (int i = 0; i < h->nranks; i++) waiting |= at_open_barrier(h, slot_of(s, i));
  if (sl->pid > 0 && s->alive[r] == SD_DEAD && sl->phase != MUSTER_SEGMENT_PHASE_LEFT &&
      sl->phase != MUSTER_SEGMENT_PHASE_FREE) {
    snprintf(buf, cap, "dead: pid %d is gone, or reused by another process", sl->pid);
    return buf;
  }
  if (waiting && !at_open_barrier(h, sl)) {
    if (sl->phase == MUSTER_SEGMENT_PHASE_FREE) snprintf(buf, cap, "never joined");
    else if (sl->phase == MUSTER_SEGMENT_PHASE_LEFT) snprintf(buf, cap, "left the group (pid %d)", sl->pid);
    else snprintf(buf, cap, "pid %d has not reached the barrier of generation %u; %s", sl->pid,
                  h->generation, phase_story(sl->phase));
    return buf;
  }
  if (!waiting && !h->formed && sl->phase == MUSTER_SEGMENT_PHASE_FREE) {
    snprintf(buf, cap, "never joined");
    return buf;
  }
  return NULL;
}

static void hex_preview(const uint8_t *p, uint32_t len, char *out, size_t cap) {
  size_t o = 0;
  out[0] = '\0';
  for (uint32_t i = 0; i < len && i < SD_PREVIEW && o + 3 < cap; i++)
    o += (size_t)snprintf(out + o, cap - o, "%s%02x", i ? " " : "", p[i]);
  if (len > SD_PREVIEW && o + 4 < cap) o += (size_t)snprintf(out + o, cap - o, " ...");
  /* and as text, for the common case of names and handles */
  if (o + SD_PREVIEW + 4 < cap) {
    out[o++] = ' ';
    out[o++] = '|';
    for (uint32_t i = 0; i < len && i < SD_PREVIEW; i++)
      out[o++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '.';
    out[o++] = '|';
    out[o] = '\0';
  }
}

static double secs_since(double now, uint64_t ns) {
  return ns ? now - (double)ns * 1e-9 : -1;
}

/* ---- text ---------------------------------------------------------------- */

/* File names and abort reasons come from files anyone of our uid could have
 * written: never let them put a newline or a terminal escape into the text. */
static void put_safe(const char *str, size_t max) {
  for (size_t i = 0; i < max && str[i]; i++) {
    unsigned char c = (unsigned char)str[i];
    putchar(c >= 0x20 && c < 0x7f ? c : '?');
  }
}

static void print_holders(const struct sd_seg *s) {
  if (s->nholders == 0) {
    printf("nobody");
    return;
  }
  printf("pid%s ", s->nholders > 1 ? "s" : "");
  for (int i = 0; i < s->nholders; i++) printf("%s%d", i ? "," : "", (int)s->holders[i]);
}

static void print_ranks_text(const struct sd_seg *s, double now) {
  const muster_segment_view_t *h = s->view;
  char why[160], hex[SD_PREVIEW * 4 + 16];
  for (int r = 0; r < h->nranks; r++)
    if (missing_why(s, r, why, sizeof why)) printf("   MISSING: rank %d (%s)\n", r, why);
  printf("   %-4s %-8s %-6s %-6s %-13s %-7s %-9s %s\n", "rank", "pid", "alive", "device", "phase",
         "gen", "waited", "payload (latest round)");
  for (int r = 0; r < h->nranks; r++) {
    const muster_segment_rank_t *sl = slot_of(s, r);
    if (sl->phase == MUSTER_SEGMENT_PHASE_FREE) {
      printf("   %-4d %-8s %-6s %-6s %-13s %-7s %-9s %s\n", r, "-", "-", "-", "never joined", "-",
             "-", "-");
      continue;
    }
    uint32_t len = sl->payload_len, gen = sl->payload_round;
    const uint8_t *p = len ? sl->payload : NULL;
    double waited = sl->phase == MUSTER_SEGMENT_PHASE_WAITING ? secs_since(now, sl->wait_start_ns) : -1;
    char wbuf[32] = "-", pbuf[SD_PREVIEW * 4 + 64] = "-";
    if (waited >= 0) snprintf(wbuf, sizeof wbuf, "%.2f s", waited);
    if (p) {
      hex_preview(p, len, hex, sizeof hex);
      snprintf(pbuf, sizeof pbuf, "%u B (round %u): %s", len, gen, hex);
    }
    printf("   %-4d %-8d %-6s %-6d %-13s %-7u %-9s %s\n", r, sl->pid,
           sd_alive_name(s->alive[r]), sl->device, sd_phase_name(sl->phase), sl->barrier_gen,
           wbuf, pbuf);
  }
}

/* The pid namespace in the name: ours, or another (whose pids we cannot
 * judge); a name of another format (an older build's) says none. */
static void print_pidns_text(const struct sd_seg *s) {
  if (!s->name_ok)
    printf("name not of the form muster.<uid>.<pidns>.<job>.<group>");
  else
    printf("pid namespace %llu (%s)", (unsigned long long)s->parsed.pidns,
           sd_other_pidns(s) ? "another one: liveness unknown" : "ours");
}

static void print_seg_text(const struct sd_seg *s, double now) {
  printf("== ");
  put_safe(s->name, sizeof s->name);
  printf("  [%s]%s", sd_state_name(s->state), s->reason[0] ? " " : "");
  put_safe(s->reason, sizeof s->reason);
  printf("\n   path ");
  put_safe(s->path, sizeof s->path);
  printf(" (%s), %lld bytes, owner uid %u, ",
         s->by_name ? "by name" : "name removed: found through /proc",
         (long long)s->file_size, (unsigned)s->owner);
  print_pidns_text(s);
  printf(", held by ");
  print_holders(s);
  printf("\n");
  if (s->removed) printf("   REMOVED by --clean\n");
  const muster_segment_view_t *h = s->view;
  if (!h) return;
  printf("   job %.*s  group %.*s  layout v%u  ranks %d expected, %d joined, %u seated, "
         "%u arrived at the open barrier (generation %u)\n",
         (int)sizeof h->job, h->job, (int)sizeof h->group, h->group, h->version, h->nranks,
         __builtin_popcountll(h->seen_mask), h->seated, h->arrived,
         h->generation);
  printf("   creator pid %d (%s), created %.1f s ago; formed %s; generation %u\n",
         h->creator_pid, sd_alive_name(s->creator_alive), secs_since(now, h->created_ns),
         h->formed ? "yes" : "no", h->generation);
  if (h->status_valid)
    printf("   leader status %d (round %u, %u bytes)\n", h->status, h->status_round, h->status_len);
  if (h->aborted) {
    char ago[32] = "";
    if (h->abort_ns) snprintf(ago, sizeof ago, " %.1f s ago", secs_since(now, h->abort_ns));
    printf("   aborted%s with %d (%s), blaming rank %d (pid %d); error given to ranks", ago,
           h->abort_code, muster_strerror(h->abort_code), h->abort_rank, h->abort_pid);
    int any = 0;
    for (int r = 0; r < h->nranks; r++)
      if (slot_of(s, r)->abort_seen) printf("%s%d", any++ ? "," : " ", r);
    printf("%s\n", any ? "" : " (none yet)");
  }
  print_ranks_text(s, now);
}

void sd_print_text(const struct sd_opts *o, const struct sd_list *l, double now) {
  int removed = 0;
  printf("shmdump: %d muster segment%s (uid %u, %s and /proc/*/fd%s%s)\n", l->n,
         l->n == 1 ? "" : "s", (unsigned)getuid(), o->dir, o->job ? ", job " : "",
         o->job ? o->job : "");
  for (int i = 0; i < l->n; i++) {
    printf("\n");
    print_seg_text(&l->v[i], now);
    removed += l->v[i].removed;
  }
  if (o->clean) {
    printf("\nclean: removed %d segment%s", removed, removed == 1 ? "" : "s");
    for (int i = 0; i < l->n; i++)
      if (l->v[i].removed) {
        printf("\n  ");
        put_safe(l->v[i].path, sizeof l->v[i].path);
      }
    printf("\n");
  }
}

/* ---- JSON ---------------------------------------------------------------- */

/* true / false, or null when it cannot be told (another pid namespace) */
static const char *json_alive(int alive) {
  return alive == SD_ALIVE ? "true" : alive == SD_DEAD ? "false" : "null";
}

static void json_key_str(const char *key, const char *s, size_t max) {
  printf("\"%s\":", key);
  json_put_str(stdout, s, max);
}

static void json_num(const char *key, double v) {
  if (v < 0) printf("\"%s\":null", key);
  else printf("\"%s\":%.3f", key, v);
}

static void print_ranks_json(const struct sd_seg *s, double now) {
  const muster_segment_view_t *h = s->view;
  char why[160], hex[MUSTER_MAX_PAYLOAD * 2 + 1];
  printf(",\"missing\":[");
  for (int r = 0, first = 1; r < h->nranks; r++)
    if (missing_why(s, r, why, sizeof why)) {
      printf("%s{\"rank\":%d,", first ? "" : ",", r);
      json_key_str("why", why, sizeof why);
      printf("}");
      first = 0;
    }
  printf("],\"ranks\":[");
  for (int r = 0; r < h->nranks; r++) {
    const muster_segment_rank_t *sl = slot_of(s, r);
    uint32_t len = sl->payload_len, gen = sl->payload_round;
    const uint8_t *p = len ? sl->payload : NULL;
    for (uint32_t i = 0; i < len && p; i++) snprintf(hex + 2 * i, 3, "%02x", p[i]);
    if (!p) hex[0] = '\0';
    printf("%s{\"rank\":%d,\"pid\":%d,\"alive\":%s,\"pidns\":%llu,\"device\":%d,",
           r ? "," : "", r, sl->pid, json_alive(s->alive[r]), (unsigned long long)sl->pidns,
           sl->device);
    json_key_str("phase", sd_phase_name(sl->phase), 32);
    printf(",\"barrier_gen\":%u,\"sessions\":%llu,\"barriers\":%llu,", sl->barrier_gen,
           (unsigned long long)sl->sessions, (unsigned long long)sl->barriers);
    json_num("waited_s", sl->phase == MUSTER_SEGMENT_PHASE_WAITING ? secs_since(now, sl->wait_start_ns) : -1);
    printf(",\"abort_seen\":%s,\"payload_len\":%u,\"payload_round\":%u,",
           sl->abort_seen ? "true" : "false", len, gen);
    json_key_str("payload_hex", hex, sizeof hex);
    printf("}");
  }
  printf("]");
}

static void print_seg_json(const struct sd_seg *s, double now) {
  printf("{");
  json_key_str("name", s->name, sizeof s->name);
  printf(",");
  json_key_str("path", s->path, sizeof s->path);
  printf(",\"by_name\":%s,\"size\":%lld,\"owner_uid\":%u,", s->by_name ? "true" : "false",
         (long long)s->file_size, (unsigned)s->owner);
  /* the name's pid namespace (null: a name of another format) */
  if (s->name_ok)
    printf("\"pidns\":%llu,\"other_pidns\":%s,", (unsigned long long)s->parsed.pidns,
           sd_other_pidns(s) ? "true" : "false");
  else
    printf("\"pidns\":null,\"other_pidns\":null,");
  json_key_str("state", sd_state_name(s->state), 32);
  printf(",");
  json_key_str("reason", s->reason, sizeof s->reason);
  printf(",\"removed\":%s,\"holders\":[", s->removed ? "true" : "false");
  for (int i = 0; i < s->nholders; i++) printf("%s%d", i ? "," : "", (int)s->holders[i]);
  printf("]");
  const muster_segment_view_t *h = s->view;
  if (h) {
    printf(",");
    json_key_str("job", h->job, sizeof h->job);
    printf(",");
    json_key_str("group", h->group, sizeof h->group);
    printf(",\"version\":%u,\"nranks\":%d,\"joined\":%d,\"seated\":%u,\"arrived\":%u,"
           "\"generation\":%u,\"formed\":%s,\"creator\":{\"pid\":%d,\"alive\":%s,"
           "\"pidns\":%llu},",
           h->version, h->nranks, __builtin_popcountll(h->seen_mask),
           h->seated, h->arrived, h->generation, h->formed ? "true" : "false",
           h->creator_pid, json_alive(s->creator_alive), (unsigned long long)h->creator_pidns);
    json_num("age_s", secs_since(now, h->created_ns));
    if (h->aborted) {
      printf(",\"abort\":{\"code\":%d,\"rank\":%d,\"pid\":%d,", h->abort_code, h->abort_rank,
             h->abort_pid);
      json_key_str("reason", h->abort_reason, sizeof h->abort_reason);
      printf("}");
    } else {
      printf(",\"abort\":null");
    }
    print_ranks_json(s, now);
  }
  printf("}");
}

void sd_print_json(const struct sd_opts *o, const struct sd_list *l, double now) {
  uint64_t pidns = 0; /* 0: /proc unreadable, as the runtime reports it */
  muster_segment_self_pidns(&pidns);
  printf("{\"uid\":%u,\"pidns\":%llu,", (unsigned)getuid(), (unsigned long long)pidns);
  json_key_str("dir", o->dir, SD_PATH);
  printf(",\"job\":");
  if (o->job) json_put_str(stdout, o->job, 256);
  else printf("null");
  printf(",\"count\":%d,\"segments\":[", l->n);
  for (int i = 0; i < l->n; i++) {
    if (i) printf(",");
    print_seg_json(&l->v[i], now);
  }
  printf("],\"removed\":[");
  for (int i = 0, first = 1; i < l->n; i++)
    if (l->v[i].removed) {
      if (!first) printf(",");
      json_put_str(stdout, l->v[i].path, SD_PATH);
      first = 0;
    }
  printf("]}\n");
}
