/*
 * runtime/registry/provider_elf.c - a provider's memory kinds, read from its ELF
 * file without loading it (see provider_elf.h).
 *
 * The walk: ELF header -> section headers -> the dynamic symbol table
 * (SHT_DYNSYM) and its string table -> the provider symbol -> the section
 * holding it -> the struct's bytes at the symbol's file offset.  The
 * integer fields of a static struct are stored in the file as they are;
 * only its pointers are relocated at load.  Anything unexpected gives 0
 * ("load it to know"), never a guess.
 */
#include <elf.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "muster/provider.h"
#include "registry/provider_elf.h"

#if defined(__x86_64__)
#define NATIVE_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define NATIVE_MACHINE EM_AARCH64
#else
#define NATIVE_MACHINE EM_NONE /* not read: every provider is loaded to know */
#endif

#define MAX_TABLE (8u << 20) /* a provider's section headers, symbols or names */

/* len bytes at off into a fresh buffer (free it), or NULL */
static void *read_at(int fd, uint64_t off, uint64_t len) {
  if (len == 0 || len > MAX_TABLE) return NULL;
  char *buf = malloc(len);
  size_t got = 0;
  while (buf && got < len) {
    ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + got));
    if (n <= 0) break;
    got += (size_t)n;
  }
  if (buf && got == len) return buf;
  free(buf);
  return NULL;
}

static int header_ok(const Elf64_Ehdr *eh) {
  return memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
         eh->e_ident[EI_DATA] == (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB
                                                                             : ELFDATA2MSB) &&
         eh->e_type == ET_DYN && eh->e_machine == NATIVE_MACHINE && NATIVE_MACHINE != EM_NONE &&
         eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shnum > 0 && eh->e_shoff > 0;
}

/* The defined symbol `name` in the dynamic symbols, or NULL. */
static const Elf64_Sym *find_sym(const Elf64_Sym *syms, size_t nsyms, const char *strs,
                                 size_t strsize, const char *name) {
  for (size_t i = 0; i < nsyms; i++) {
    uint32_t at = syms[i].st_name;
    if (syms[i].st_shndx == SHN_UNDEF || at >= strsize) continue;
    if (strnlen(strs + at, strsize - at) < strsize - at && strcmp(strs + at, name) == 0)
      return &syms[i];
  }
  return NULL;
}

/* The bytes of symbol s (want of them at most) from the section holding
 * it; NULL when they are not in the file. */
static void *sym_bytes(int fd, const Elf64_Shdr *sh, unsigned nsh, const Elf64_Sym *s,
                       size_t want) {
  if (s->st_shndx >= nsh) return NULL;
  const Elf64_Shdr *in = &sh[s->st_shndx];
  if (in->sh_type == SHT_NOBITS || s->st_value < in->sh_addr ||
      s->st_value - in->sh_addr > in->sh_size || in->sh_size - (s->st_value - in->sh_addr) < want ||
      s->st_size < want)
    return NULL;
  return read_at(fd, in->sh_offset + (s->st_value - in->sh_addr), want);
}

/* mem_kinds of the struct at symbol s, of ABI version abi: 0 if unreadable */
#define STRUCT_MEM(type, ABI)                                                              \
  do {                                                                                     \
    type *v = sym_bytes(fd, sh, nsh, s, sizeof(type));                                     \
    if (v && v->abi_version == (ABI) && v->struct_size >= offsetof(type, mem_kinds) + 4u) \
      mem = v->mem_kinds;                                                                  \
    free(v);                                                                               \
  } while (0)

static unsigned read_mem(int fd, const Elf64_Ehdr *eh) {
  unsigned mem = 0, nsh = eh->e_shnum;
  Elf64_Shdr *sh = read_at(fd, eh->e_shoff, (uint64_t)nsh * sizeof *sh);
  Elf64_Sym *syms = NULL;
  char *strs = NULL;
  unsigned d = 0;
  while (sh && d < nsh && sh[d].sh_type != SHT_DYNSYM) d++;
  if (!sh || d == nsh || sh[d].sh_link >= nsh || sh[d].sh_entsize != sizeof(Elf64_Sym)) goto out;
  const Elf64_Shdr *st = &sh[sh[d].sh_link];
  syms = read_at(fd, sh[d].sh_offset, sh[d].sh_size);
  strs = read_at(fd, st->sh_offset, st->sh_size);
  if (!syms || !strs) goto out;
  size_t nsyms = sh[d].sh_size / sizeof *syms;
  const Elf64_Sym *s = find_sym(syms, nsyms, strs, st->sh_size, MUSTER_PROVIDER_SYMBOL_V2);
  if (s) STRUCT_MEM(muster_provider_v2_t, MUSTER_PROVIDER_V2_ABI);
  else if ((s = find_sym(syms, nsyms, strs, st->sh_size, MUSTER_PROVIDER_SYMBOL_V1)) != NULL)
    STRUCT_MEM(muster_provider_v1_t, MUSTER_PROVIDER_V1_ABI);
out:
  free(strs);
  free(syms);
  free(sh);
  return mem;
}

unsigned muster__provider_file_mem(const char *path) {
  /* O_NONBLOCK: a FIFO by that name must not hold the scan up */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return 0;
  Elf64_Ehdr eh;
  struct stat st;
  unsigned mem = 0;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
      header_ok(&eh))
    mem = read_mem(fd, &eh);
  close(fd);
  return mem;
}

/* ---- identity ------------------------------------------------------------ */

#define MAX_HASHED (256u << 20) /* a provider file hashed whole, at most */

/* The GNU build-id of the ELF file as hex into out, or 0: the notes of its
 * SHT_NOTE sections, owner "GNU", type NT_GNU_BUILD_ID. */
static int build_id(int fd, char *out, size_t cap) {
  Elf64_Ehdr eh;
  if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || !header_ok(&eh)) return 0;
  Elf64_Shdr *sh = read_at(fd, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof *sh);
  int found = 0;
  for (unsigned i = 0; sh && i < eh.e_shnum && !found; i++) {
    if (sh[i].sh_type != SHT_NOTE) continue;
    unsigned char *n = read_at(fd, sh[i].sh_offset, sh[i].sh_size);
    for (uint64_t at = 0; n && at + sizeof(Elf64_Nhdr) <= sh[i].sh_size && !found;) {
      Elf64_Nhdr h;
      memcpy(&h, n + at, sizeof h);
      uint64_t name = at + sizeof h, desc = name + ((h.n_namesz + 3u) & ~3u);
      if (desc + h.n_descsz > sh[i].sh_size) break;
      if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 && !memcmp(n + name, "GNU", 4) &&
          h.n_descsz > 0 && 9 + 2 * (size_t)h.n_descsz < cap) {
        size_t len = (size_t)snprintf(out, cap, "build-id:");
        for (uint32_t k = 0; k < h.n_descsz; k++) len += (size_t)snprintf(out + len, cap - len, "%02x", n[desc + k]);
        found = 1;
      }
      at = desc + ((h.n_descsz + 3u) & ~3u);
    }
    free(n);
  }
  free(sh);
  return found;
}

/* FNV-1a over the whole file, or 0 when it cannot be read */
static int content_hash(int fd, off_t size, char *out, size_t cap) {
  if (size < 0 || (uint64_t)size > MAX_HASHED) return 0;
  static const size_t chunk = 1u << 16;
  unsigned char *buf = malloc(chunk);
  uint64_t h = 1469598103934665603ull;
  off_t at = 0;
  while (buf && at < size) {
    ssize_t n = pread(fd, buf, chunk, at);
    if (n <= 0) break;
    for (ssize_t k = 0; k < n; k++) h = (h ^ buf[k]) * 1099511628211ull;
    at += n;
  }
  free(buf);
  if (at != size) return 0;
  snprintf(out, cap, "fnv1a:%016llx:%lld", (unsigned long long)h, (long long)size);
  return 1;
}

void muster__provider_file_id(const char *path, char *out, size_t cap) {
  out[0] = '\0';
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && !build_id(fd, out, cap) &&
      !content_hash(fd, st.st_size, out, cap))
    out[0] = '\0';
  close(fd);
}
