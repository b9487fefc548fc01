/*
 * providers/common/err.h - the one writer of a provider's message: "WHO:
 * what", WHO the provider and where it ran (lapack: "lapack (host, potrs
 * f64 n=4)"; scalapack: its rank, pid and host; the GPU providers: their
 * name), what the failure or, for an info > 0 verdict, only the detail
 * (muster/provider.h: the runtime words the verdict).  Every provider's
 * error helper (lp_err, sl_err, cuc_fail) ends here, so the form is one.
 * Static inline: providers link nothing of the runtime.
 */
#ifndef MUSTER_PROVIDERS_ERR_H
#define MUSTER_PROVIDERS_ERR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* buf[len] = "who: " + fmt's text (cut to fit, always terminated); returns
 * code, so a caller writes `return muster__prov_verr(...)`.  A NULL or
 * empty buffer writes nothing. */
static inline int muster__prov_verr(char *buf, size_t len, int code, const char *who, const char *fmt,
                                    va_list ap) {
  if (!buf || !len) return code;
  int k = snprintf(buf, len, "%s: ", who && *who ? who : "provider");
  if (k >= 0 && (size_t)k < len) vsnprintf(buf + k, len - (size_t)k, fmt, ap);
  return code;
}

#endif
