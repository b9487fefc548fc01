/* tools/muster/libs_found.c - where the providers' libraries were found
 * (libs_found.h).  An installed runtime wheel's GPU providers take the
 * CUDA libraries from NVIDIA's wheels (the [cuda13] extra) or a CUDA
 * toolkit, its lapack provider OpenBLAS from the copy the wheel bundles:
 * the path says which.  Read from ld.so's list of loaded objects after
 * the listing loaded every provider. */
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json_str.h"
#include "libs_found.h"

#define MAX_LIBS 32

/* file name prefixes of the engines' libraries (auditwheel renames a
 * bundled copy libopenblasp-r0-<hash>.so: the prefix still matches) */
static const char *const watched[] = {
    "libcudart.", "libcublas.", "libcublasLt.", "libcusolver.", "libcusolverMg.", "libcusparse.",
    "libnvJitLink.", "libnccl.", "libcusolverMp.", "libcublasmp.", "libcal.", "liblapacke",
    "libopenblas", "libgfortran", "libscalapack", "libmpi."};

struct found { int n; const char *path[MAX_LIBS]; };

static const char *base(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static int collect(struct dl_phdr_info *info, size_t size, void *arg) {
  struct found *f = arg;
  const char *name = info->dlpi_name ? base(info->dlpi_name) : "";
  for (size_t i = 0; i < sizeof watched / sizeof watched[0] && f->n < MAX_LIBS; i++)
    if (!strncmp(name, watched[i], strlen(watched[i]))) {
      f->path[f->n++] = info->dlpi_name;
      break;
    }
  return 0;
}

void libs_found_print(void) {
  struct found f = {0};
  dl_iterate_phdr(collect, &f);
  if (!f.n) return;
  printf("libraries:\n");
  for (int i = 0; i < f.n; i++) printf("  %-28s %s\n", base(f.path[i]), f.path[i]);
}

void libs_found_json(void) {
  struct found f = {0};
  dl_iterate_phdr(collect, &f);
  printf("[");
  for (int i = 0; i < f.n; i++) {
    printf("%s{\"name\":", i ? "," : "");
    json_put_str(stdout, base(f.path[i]), SIZE_MAX);
    printf(",\"path\":");
    json_put_str(stdout, f.path[i], SIZE_MAX);
    printf("}");
  }
  printf("]");
}
