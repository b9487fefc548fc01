/*
 * tools/common/json_str.h - one JSON string writer for the programs that
 * print JSON: the muster CLI (solve, providers), shmdump and the GPU
 * benchmark's report (tests/gpu/bench_json.c).
 *
 * What they quote comes from files and messages anyone of our uid could
 * have written (group names, provider paths and reasons, driver errors), so
 * the output must be valid JSON (RFC 8259: UTF-8) whatever the bytes:
 * '"', '\\' and the control bytes (< 0x20 and 0x7f) are escaped (\u00XX),
 * well-formed UTF-8 is written as it is (a path with "é" decodes to the
 * same path), and each byte that is not part of well-formed UTF-8 (a stray
 * continuation byte, an overlong form, a surrogate, a code point past
 * U+10FFFF, a sequence cut short) becomes U+FFFD, the replacement
 * character.
 */
#ifndef MUSTER_TOOLS_JSON_STR_H
#define MUSTER_TOOLS_JSON_STR_H

#include <stddef.h>
#include <stdio.h>

/* The length (2..4) of the well-formed UTF-8 sequence at s (at most avail
 * bytes, s[0] >= 0x80), or 0 when it is not one (Unicode Table 3-7). */
static inline size_t json_utf8_len(const unsigned char *s, size_t avail) {
  unsigned char c = s[0];
  size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (!len || len > avail) return 0;
  /* the second byte's range: no overlong form, no surrogate, <= U+10FFFF */
  unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
  unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
  if (s[1] < lo || s[1] > hi) return 0;
  for (size_t k = 2; k < len; k++)
    if (s[k] < 0x80 || s[k] > 0xbf) return 0;
  return len;
}

/* Write s (NULL: an empty string), at most max bytes of it, as a JSON
 * string to f. */
static inline void json_put_str(FILE *f, const char *s, size_t max) {
  fputc('"', f);
  size_t n = 0;
  while (s && n < max && s[n]) n++;
  for (size_t i = 0; i < n;) {
    const unsigned char *p = (const unsigned char *)s + i;
    if (*p < 0x80) {
      if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
      else if (*p < 0x20 || *p == 0x7f) fprintf(f, "\\u%04x", *p);
      else fputc(*p, f);
      i++;
      continue;
    }
    size_t len = json_utf8_len(p, n - i);
    if (len) fwrite(p, 1, len, f);
    else fputs("\xef\xbf\xbd", f); /* U+FFFD for this one byte */
    i += len ? len : 1;
  }
  fputc('"', f);
}

#endif
