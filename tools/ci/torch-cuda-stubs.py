#!/usr/bin/env python3
"""Stand-in CUDA libraries that let PyPI's torch import and run on the CPU.

PyPI's torch for Linux x86_64 is built against CUDA: its own libraries list
libcublas, libcudnn, libnccl, ... as DT_NEEDED, and pip would fetch them as
nvidia-* wheels (about 2.3 GB of the 2.8 GB a `pip install torch` downloads;
docs/testing.md has the measurements).  On a machine without a GPU nothing
in them is ever called, but the dynamic loader must still find each library,
and (Python loads extensions with RTLD_NOW) every symbol torch imports from
it.  This script writes, for each such library that cannot be found, a small
shared object with the same SONAME that defines those symbols: functions
return 999 (an error in every CUDA library's status enum), data symbols are
zeroed bytes.  libcudart, libcupti and libcufile are not stubbed: they are
small wheels, torch calls into them at import and in torch.cuda.is_available(),
and the real libcudart answers "no driver" properly.

Only the libraries loaded by `import torch` (libtorch_python.so,
libtorch_global_deps.so and what they need, transitively) are considered;
those torch opens later for CUDA work alone (libcaffe2_nvrtc,
libtorch_cuda_linalg, libcuda.so.1) are left alone.

usage: python tools/ci/torch-cuda-stubs.py        write the stubs (the venv's python)
       python tools/ci/torch-cuda-stubs.py --deps pip requirements of the three
                                                 real CUDA wheels, at the versions
                                                 torch's own metadata asks for
       python tools/ci/torch-cuda-stubs.py --remove  remove the stubs written before
Idempotent: removes the stubs it wrote before (listed in its marker file)
and writes what is missing now.  Needs gcc and binutils (readelf, nm).
"""
import importlib.util
import pathlib
import re
import subprocess
import sys
import tempfile

MARKER = "MUSTER_CUDA_STUBS.txt"
ROOTS = ("libtorch_python.so", "libtorch_global_deps.so")


def sh(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def dynamic(path):
    """(NEEDED sonames, RPATH/RUNPATH folders) of an ELF file."""
    d = sh("readelf", "-dW", str(path))
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", d)
    m = re.search(r"\((?:RPATH|RUNPATH)\)\s+Library r(?:un)?path: \[(.+?)\]", d)
    dirs = [pathlib.Path(x.replace("$ORIGIN", str(path.parent))).resolve()
            for x in (m.group(1).split(":") if m else [])]
    return needed, dirs


def system_libs():
    """soname -> path of the libraries the loader's cache knows and that exist."""
    out = {}
    for line in sh("/sbin/ldconfig", "-p").splitlines():
        m = re.match(r"\s+(\S+) \(libc6,x86-64.*\) => (\S+)$", line)
        if m and pathlib.Path(m.group(2)).exists():
            out.setdefault(m.group(1), pathlib.Path(m.group(2)))
    return out


def version_files(path):
    """version name -> the soname it is required from (readelf -V's needs)."""
    out, cur = {}, None
    for line in sh("readelf", "-VW", str(path)).splitlines():
        m = re.search(r"File: (\S+)", line)
        if m:
            cur = m.group(1)
        m = re.search(r"Name: (\S+)", line)
        if m and cur:
            out[m.group(1)] = cur
    return out


def symbols(path, defined):
    """Defined names, or undefined non-weak (name, version, type) of an ELF file."""
    rows = []
    for line in sh("readelf", "--dyn-syms", "-W", str(path)).splitlines():
        f = line.split()
        if len(f) < 8 or not f[0].endswith(":"):
            continue
        name, _, ver = f[7].partition("@")
        ver = ver.lstrip("@").split(" ")[0]
        if defined and f[6] != "UND":
            rows.append(name)
        elif not defined and f[6] == "UND" and f[4] != "WEAK":
            rows.append((name, ver, f[3]))
    return rows


REAL = ("cudart", "cupti", "cufile")


def real_deps():
    """torch's requirements for the CUDA runtime wheels it calls at import.

    torch >= 2.10 asks for `cuda-toolkit[cudart,cublas,...]==V`: keep that
    pin with the three extras only; older ones list nvidia-cuda-runtime-cuXX,
    nvidia-cuda-cupti-cuXX, nvidia-cufile-cuXX one by one."""
    import importlib.metadata as md
    out = []
    for req in md.requires("torch") or []:
        spec, _, marker = req.partition(";")
        if "platform_system" in marker and "Linux" not in marker:
            continue
        m = re.match(r"\s*cuda-toolkit\[[^\]]*\]\s*(.*)$", spec)
        if m:
            out.append("cuda-toolkit[%s]%s" % (",".join(REAL), m.group(1).strip()))
        elif re.match(r"\s*nvidia-(cuda-runtime|cuda-cupti|cufile)\b", spec):
            out.append(spec.strip())
    return out


def main():
    if sys.argv[1:] == ["--deps"]:
        print("\n".join(real_deps()))
        return
    spec = importlib.util.find_spec("torch")
    if spec is None:
        sys.exit("torch-cuda-stubs: torch is not installed in this environment")
    tlib = pathlib.Path(list(spec.submodule_search_locations)[0]) / "lib"
    _, rpath = dynamic(tlib / "libtorch_cuda.so")
    dest = next((d for d in rpath if d != tlib and d.is_dir()), None)
    if dest is None:
        sys.exit("torch-cuda-stubs: no folder of torch's RPATH exists "
                 "(install nvidia-cuda-runtime first)")
    marker = dest / MARKER
    if marker.exists():  # start from the real libraries only
        for name in marker.read_text().split():
            (dest / name).unlink(missing_ok=True)
        marker.unlink()
    if sys.argv[1:] == ["--remove"]:
        return
    sysl = system_libs()

    def find(soname):
        for d in [tlib] + rpath:
            if (d / soname).exists():
                return d / soname
        return sysl.get(soname)

    # the libraries `import torch` loads, and the missing sonames they need
    seen, todo, present, missing = set(), [tlib / r for r in ROOTS], set(), {}
    while todo:
        lib = todo.pop()
        if lib in seen:
            continue
        seen.add(lib)
        needed, _ = dynamic(lib)
        for so in needed:
            p = find(so)
            if p is None:
                missing.setdefault(so, lib)
            else:
                present.add(p)
                if p.parent == tlib:
                    todo.append(p)
    if not missing:
        print("torch-cuda-stubs: nothing missing")
        return
    have = set()
    for p in present | seen:
        have.update(symbols(p, defined=True))
    per_stub = {so: {} for so in missing}
    for lib in seen:
        if lib.parent != tlib:
            continue
        needed, _ = dynamic(lib)
        own = [so for so in needed if so in missing]
        vfile = version_files(lib)
        for name, ver, typ in symbols(lib, defined=False):
            if name in have:
                continue
            so = vfile.get(ver) if ver else (own[0] if own else None)
            if so not in missing:
                so = None
            if so is None:
                sys.exit(f"torch-cuda-stubs: {lib.name} needs {name}@{ver}, found nowhere")
            per_stub[so][name] = (ver, typ)
    with tempfile.TemporaryDirectory() as tmp:
        for so, syms in sorted(per_stub.items()):
            src, vs = pathlib.Path(tmp, "stub.c"), pathlib.Path(tmp, "stub.map")
            body = ["/* stand-in for %s, written by tools/ci/torch-cuda-stubs.py */" % so]
            for name, (_, typ) in sorted(syms.items()):
                body.append(f"int {name}(void) {{ return 999; }}" if typ == "FUNC"
                            else f"char {name}[64];")
            src.write_text("\n".join(body) + "\n")
            nodes = {}
            for name, (ver, _) in syms.items():
                if ver:
                    nodes.setdefault(ver, []).append(name)
            script = "".join("%s { global: %s };\n" % (v, " ".join(x + ";" for x in sorted(n)))
                             for v, n in sorted(nodes.items()))
            vs.write_text(script or "%s { global: *; };\n" % so)
            sh("gcc", "-shared", "-fPIC", "-O0", "-w", "-o", str(dest / so), str(src),
               f"-Wl,-soname,{so}", f"-Wl,--version-script={vs}")
            print(f"torch-cuda-stubs: {dest / so}: {len(syms)} symbols")
    marker.write_text("\n".join(sorted(per_stub)) + "\n")


if __name__ == "__main__":
    main()
