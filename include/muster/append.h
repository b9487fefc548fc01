/*
 * muster/append.h - adding to a message piece by piece: text appended to
 * a NUL-terminated string in a buffer of cap bytes, cut at the buffer's
 * end, never past it.  The runtime's cost-table notes
 * (runtime/registry/cost_lookup.c) and the providers' messages (what a
 * library search tried, cusolvermp/libs.c; a CUDA error's context,
 * cudacommon/err.c) are written with it.
 *
 * static inline, so a provider uses it without linking the runtime (as
 * muster/proc.h): a provider cannot call the runtime's hidden helpers.
 */
#ifndef MUSTER_APPEND_H
#define MUSTER_APPEND_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Append fmt's text to the string in s (cap bytes); nothing once s is
 * full (cap - 1 characters). */
static inline void muster__vappend(char *s, size_t cap, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static inline void muster__vappend(char *s, size_t cap, const char *fmt, va_list ap) {
  size_t used = strnlen(s, cap);
  if (used + 1 >= cap) return;
  vsnprintf(s + used, cap - used, fmt, ap);
}

static inline void muster__append(char *s, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void muster__append(char *s, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  muster__vappend(s, cap, fmt, ap);
  va_end(ap);
}

#endif
