/*
 * tools/common/json_str.h - one JSON string writer for the programs that
 * print JSON: the muster CLI (solve, providers), shmdump and the GPU
 * benchmark's report (tests/gpu/bench_json.c).
 *
 * What they quote comes from files and messages anyone of our uid could
 * have written (group names, provider paths and reasons, driver errors), so
 * everything that is not printable ASCII is escaped: the output is valid
 * JSON whatever the bytes, at the price of showing a UTF-8 sequence byte by
 * byte (\u00c3\u00a9 for "é").
 */
#ifndef MUSTER_TOOLS_JSON_STR_H
#define MUSTER_TOOLS_JSON_STR_H

#include <stddef.h>
#include <stdio.h>

/* Write s (NULL: an empty string), at most max bytes of it, as a JSON
 * string to f. */
static inline void json_put_str(FILE *f, const char *s, size_t max) {
  fputc('"', f);
  for (size_t i = 0; s && i < max && s[i]; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20 || c >= 0x7f) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

#endif
