/*
 * tools/muster/cmd_providers.c - `muster providers [--json]`: every
 * provider file found on MUSTER_PROVIDER_PATH (or the default folders), its
 * routines, dtypes and memory kinds, priority, and whether it can run here
 * (or why not: the probe's reason, or why the file was refused), the ABI
 * version it was loaded through, its kind (leader or collective), the spans
 * it runs and its cost table (docs/choice.md).
 * Exit 0 when at least one provider is available, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_args.h"
#include "json_str.h"
#include "libs_found.h"
#include "muster.h"
#include "muster/provider.h"

static void bits(char *out, size_t cap, unsigned mask, int lo, int hi, const char *(*name)(int)) {
  size_t used = 0;
  out[0] = '\0';
  for (int i = lo; i <= hi; i++)
    if (mask & (1u << i)) used += snprintf(out + used, used < cap ? cap - used : 0, "%s%s", used ? "," : "", name(i));
  if (!used) snprintf(out, cap, "-");
}

static const char *routine_n(int i) { return muster_routine_name((muster_routine_t)i); }

/* The largest routine value: the bits a provider's routines mask may hold
 * (muster/types.h's map; MUSTER_CAP_* bits sit above them). */
static int routine_last(void) {
  static const int values[] = {
#define MUSTER__VALUE(NAME, value, ...) value,
      MUSTER_ROUTINE_MAP(MUSTER__VALUE)
#undef MUSTER__VALUE
  };
  int last = 0;
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
    if (values[i] > last) last = values[i];
  return last;
}

/* "potrs,getrs,...", potrs as "potrs+logdet" when the provider declares
 * MUSTER_CAP_LOGDET (muster.h) */
static void routines_text(char *out, size_t cap, unsigned mask) {
  bits(out, cap, mask, MUSTER_POTRS, routine_last(), routine_n);
  char *p = strstr(out, "potrs");
  if (p && (mask & MUSTER_CAP_LOGDET)) {
    char rest[128];
    snprintf(rest, sizeof rest, "%s", p + 5);
    snprintf(p, cap - (size_t)(p - out), "potrs+logdet%s", rest);
  }
}
static const char *dtype_n(int i) { return muster_dtype_name((muster_dtype_t)i); }
static const char *mem_n(int i) { return i == MUSTER_MEM_HOST ? "host" : i == MUSTER_MEM_CUDA ? "cuda" : "?"; }
/* span bit i (1 << i): threads, processes, nodes */
static const char *span_n(int i) { return i == 0 ? "threads" : i == 1 ? "processes" : i == 2 ? "nodes" : "?"; }
static const char *kind_n(unsigned k) {
  return k == MUSTER_PROVIDER_LEADER ? "leader" : k == MUSTER_PROVIDER_COLLECTIVE ? "collective" : "-";
}

static void json_list(unsigned mask, int lo, int hi, const char *(*name)(int)) {
  putchar('[');
  int first = 1;
  for (int i = lo; i <= hi; i++)
    if (mask & (1u << i)) {
      printf("%s\"%s\"", first ? "" : ",", name(i));
      first = 0;
    }
  putchar(']');
}

/* --json, the one option besides --help (a cli_on_word). */
static int json_flag(int k, const char *v, void *json) {
  *(int *)json = 1;
  return 0;
}

int cmd_providers(int argc, char **argv) {
  int json = 0;
  static const cli_opt_t opts[] = {{"--help", 0}, {"-h", 0}, {"--json", 0}};
  int rc = cli_args_each("muster providers", argc, argv, opts, 3, 0, json_flag, &json);
  if (rc == CLI_HELP) {
    printf("usage: muster providers [--json]\n"
           "  lists the providers on MUSTER_PROVIDER_PATH (default: <lib>/muster/providers),\n"
           "  loading each to ask whether it can run here.\n");
    return 0;
  }
  if (rc != 0) return 2;
  muster_provider_info_t info[64];
  int n = muster_providers_list(info, 64);
  if (n < 0) {
    fprintf(stderr, "muster providers: %s\n", muster_last_error());
    return 1;
  }
  if (n > 64) n = 64;
  int usable = 0;
  for (int i = 0; i < n; i++) usable += info[i].available;
  if (json) {
    printf("{\"providers\":[");
    for (int i = 0; i < n; i++) {
      const muster_provider_info_t *p = &info[i];
      printf("%s{\"name\":", i ? "," : "");
      json_put_str(stdout, p->name, SIZE_MAX);
      printf(",\"path\":");
      json_put_str(stdout, p->path, SIZE_MAX);
      printf(",\"routines\":");
      json_list(p->routines, MUSTER_POTRS, routine_last(), routine_n);
      printf(",\"logdet\":%s", p->routines & MUSTER_CAP_LOGDET ? "true" : "false");
      printf(",\"dtypes\":");
      json_list(p->dtypes, MUSTER_F32, MUSTER_C128, dtype_n);
      printf(",\"memory\":");
      json_list(p->mem_kinds, MUSTER_MEM_HOST, MUSTER_MEM_CUDA, mem_n);
      printf(",\"priority\":%d,\"available\":%s,\"why\":", p->priority, p->available ? "true" : "false");
      json_put_str(stdout, p->available ? "" : p->why, SIZE_MAX);
      printf(",\"note\":"); /* an available provider's probe: what it runs with */
      json_put_str(stdout, p->available ? p->why : "", SIZE_MAX);
      printf(",\"abi\":%u,\"kind\":\"%s\",\"spans\":", p->abi, kind_n(p->kind));
      json_list(p->spans, 0, 2, span_n);
      printf(",\"cost\":");
      json_put_str(stdout, p->cost, SIZE_MAX);
      printf("}");
    }
    printf("],\"libraries\":");
    libs_found_json();
    printf(",\"available\":%d}\n", usable);
    return usable ? 0 : 1;
  }
  if (n == 0) {
    printf("no providers found (MUSTER_PROVIDER_PATH=%s)\n",
           getenv("MUSTER_PROVIDER_PATH") ? getenv("MUSTER_PROVIDER_PATH") : "(default)");
    return 1;
  }
  printf("%-12s %-9s %-36s %-16s %-9s %s\n", "PROVIDER", "PRIORITY", "ROUTINES", "DTYPES", "MEMORY",
         "STATUS");
  for (int i = 0; i < n; i++) {
    const muster_provider_info_t *p = &info[i];
    char r[128], d[64], m[32];
    routines_text(r, sizeof r, p->routines);
    bits(d, sizeof d, p->dtypes, MUSTER_F32, MUSTER_C128, dtype_n);
    bits(m, sizeof m, p->mem_kinds, MUSTER_MEM_HOST, MUSTER_MEM_CUDA, mem_n);
    printf("%-12s %-9d %-36s %-16s %-9s %s%s%s\n", p->name, p->priority, r, d, m,
           p->available ? "available" : "unavailable: ", p->available && p->why[0] ? ": " : "", p->why);
    printf("%-12s %s\n", "", p->path);
    if (p->abi) {
      char sp[48];
      bits(sp, sizeof sp, p->spans, 0, 2, span_n);
      printf("%-12s ABI v%u, %s, spans %s; cost table: %s\n", "", p->abi, kind_n(p->kind), sp, p->cost);
    }
  }
  libs_found_print();
  return usable ? 0 : 1;
}
