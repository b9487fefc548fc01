/*
 * runtime/registry/provider_elf.h - what a provider file declares, read from the
 * file without loading it (private to runtime/registry/registry.c).
 *
 * Loading a provider runs its libraries' initialisers: a GPU provider
 * pulls in the CUDA runtime, cuBLAS and cuSOLVER (some 200 MB, and exit
 * handlers of their own) even where no GPU is.  A call on host memory has
 * no use for a provider that takes only device memory, and the memory
 * kinds are a constant in the provider's struct, which is static data in
 * the file: the registry reads them there first and loads only the
 * providers that take the call's memory kind (docs/providers.md).
 */
#ifndef MUSTER_PROVIDER_ELF_H
#define MUSTER_PROVIDER_ELF_H

#include <stddef.h>

#include "base/error.h"

/* The mem_kinds bits of the provider struct in the ELF file at path, as
 * the loader would resolve it: symbol muster_provider_v2, else
 * muster_provider_v1 (newest first, as provider_abi.c), its abi_version
 * and struct_size checked.  0 when that cannot be told from the file (not
 * an ELF shared object of this machine, no section headers or dynamic
 * symbols, no such symbol, a struct too small or of another version, or
 * mem_kinds 0 in the file, e.g. set by a constructor): then the provider
 * must be loaded to know.  Never fails otherwise; reads at most a few MB. */
MUSTER_HIDDEN unsigned muster__provider_file_mem(const char *path);

/* What the file is, whatever path or copy names it, into out (cap >= 64):
 * "build-id:<hex>" from its GNU build-id note (the linker's hash of the
 * output, kept by patchelf, so copies that `auditwheel repair` gave
 * different RPATHs keep it), else "fnv1a:<hex>:<size>" of its bytes; ""
 * when the file cannot be read (or is over 256 MB).  A wheel holds no
 * links, so each routine folder holds a copy of its providers: the
 * registry shares one loaded provider among the files of one identity
 * (provider_file.h).  Never fails otherwise. */
MUSTER_HIDDEN void muster__provider_file_id(const char *path, char *out, size_t cap);

#endif
