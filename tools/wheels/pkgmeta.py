"""What every muster wheel's setup.py asks: the version (one source:
MUSTER_VERSION_MAJOR/MINOR/PATCH of include/muster.h, the number
`muster --version` prints), the pin on the runtime wheel, and the
platform tag of a wheel that carries ELF files.

Build time only (tools/wheels/build.sh runs each package's setup.py
through `pip wheel`); an installed package reads its version from its
metadata (adapters/common/runtime.py: package_version).
"""
import pathlib
import re
import sysconfig

RUNTIME_DIST = "muster-runtime"
# the [cuda13] extra of the runtime wheel: NVIDIA's CUDA 13 libraries the GPU
# providers link (cudart, cuBLAS, cuSOLVER + cuSolverMg; NCCL for
# cusolvermp), for a machine with a driver but no CUDA toolkit
# (docs/install.md: what it weighs; the runtime finds them in site-packages)
CUDA13 = ["nvidia-cuda-runtime>=13,<14", "nvidia-cublas>=13,<14", "nvidia-cusolver>=12,<13",
          "nvidia-nccl-cu13"]
ROOT = pathlib.Path(__file__).resolve().parents[2]


def version() -> str:
    """The runtime's version from include/muster.h ("0.1.0")."""
    text = (ROOT / "include" / "muster.h").read_text()
    parts = [re.search(r"#define MUSTER_VERSION_%s (\d+)" % k, text) for k in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        raise RuntimeError("include/muster.h: MUSTER_VERSION_MAJOR/MINOR/PATCH not found")
    return ".".join(m.group(1) for m in parts)


def adapter(requires, **kw) -> dict:
    """setup() arguments of an adapter package: its framework's requirements
    plus the runtime wheel of the same version (which holds the libraries)."""
    return dict(version=version(), install_requires=list(requires) + [f"{RUNTIME_DIST}=={version()}"], **kw)


def platform_wheel() -> dict:
    """setup() arguments that make a wheel tagged py3-none-<this
    interpreter's platform> (linux_x86_64, linux_aarch64...: never assumed;
    `auditwheel repair` then renames it manylinux_*), its files in platlib:
    it holds ELF files but no Python extension, so it fits every Python 3
    of the platform."""
    from setuptools import Distribution
    try:
        from setuptools.command.bdist_wheel import bdist_wheel
    except ImportError:  # setuptools < 70.1
        from wheel.bdist_wheel import bdist_wheel

    class BinaryDistribution(Distribution):
        def has_ext_modules(self):  # platlib, not purelib
            return True

    class PlatformWheel(bdist_wheel):
        def get_tag(self):
            plat = sysconfig.get_platform()
            return "py3", "none", re.sub(r"[-.]", "_", plat)

    return dict(distclass=BinaryDistribution, cmdclass={"bdist_wheel": PlatformWheel})



# sonames `auditwheel repair` leaves out of the runtime wheel: the CUDA
# libraries (a toolkit's, or NVIDIA's wheels: the [cuda13] extra) and Open
# MPI + ScaLAPACK (they must be those of the machine's mpirun)
EXCLUDE = ["libcuda.so.*", "libcudart.so.*", "libcublas*.so.*", "libcusolver*.so.*",
           "libcusparse.so.*", "libnvJitLink.so.*", "libnccl.so.*", "libcal.so.*",
           "libmpi.so.*", "libscalapack*.so.*"]


# what `auditwheel repair` leaves out of the muster_tf wheel: TensorFlow's
# own libraries (the TensorFlow installed beside it has them, loaded before
# libmuster_tf.so) and libmuster.so (the runtime wheel's)
TF_EXCLUDE = ["libtensorflow_framework.so.*", "libtensorflow_cc.so.*", "libmuster.so"]
# the distributions that install the `tensorflow` package; muster_tf's
# extras of the same names pin the version it was built against
TF_DISTS = ("tensorflow-cpu", "tensorflow")


def tensorflow_built():
    """(distribution, version) of the TensorFlow this Python has, e.g.
    ("tensorflow-cpu", "2.21.0"); None without one.  It is the one scons
    built libmuster_tf.so against: adapters/tensorflow/SConscript asks the
    same Python (first on PATH in tools/wheels/build.sh).  Found from the
    metadata, without importing TensorFlow (seconds)."""
    from importlib import metadata
    dists = metadata.packages_distributions().get("tensorflow") or []
    if not dists:
        return None
    name = re.sub(r"[-_.]+", "-", dists[0]).lower()
    return name, metadata.version(dists[0])


def major_minor(v: str) -> str:
    """"2.21" of "2.21.0" (or of "2.21.0rc1")."""
    return ".".join(v.split(".")[:2])


def tensorflow_extras(version: str) -> dict:
    """muster_tf's extras: [tensorflow-cpu] and [tensorflow], each pinning
    the minor version libmuster_tf.so was built against.  No hard
    dependency: either distribution provides `tensorflow`, and one that
    names the other would make pip install a second TensorFlow (~500 MB);
    muster_tf checks the version at import (muster_tf/_lib.py)."""
    return {d: [f"{d}=={major_minor(version)}.*"] for d in TF_DISTS}


def tensorflow_built_module() -> str:
    """muster_tf/_built_for.py of the wheel: the TensorFlow it was built
    against (its setup.py pins it, its import checks it)."""
    dist, ver = tensorflow_built()
    return (f'"""The TensorFlow libmuster_tf.so was built against (written by\n'
            f'tools/wheels/build.sh; muster_tf checks it at import)."""\n'
            f'DIST = "{dist}"\nVERSION = "{ver}"\n')


def check_tag(wheel: str) -> int:
    """`auditwheel show` of a repaired runtime wheel: print the tag repair
    gave it (its name) and the one show finds from its symbol versions;
    0 when both are manylinux, else 1.  show's overall tag also counts the
    libraries of EXCLUDE, left to the machine on purpose, and theirs
    (Open MPI's, CUDA's): where they are installed it says linux_x86_64."""
    import json
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "auditwheel", "show", "--json", wheel],
                         capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stdout, out.stderr)
        return 1
    d = json.loads(out.stdout)
    tag = d["wheel"].rsplit("-", 1)[-1].removesuffix(".whl")
    print(f"{d['wheel']}: tag {tag}; auditwheel show: symbols {d['sym_tag']}, overall "
          f"{d['overall_tag']} (counting the libraries left to the machine: "
          f"{', '.join(sorted(d.get('external_libs', {}))) or 'none'})")
    return 0 if tag.startswith("manylinux") and d["sym_tag"].startswith("manylinux") else 1


if __name__ == "__main__":
    import sys
    cmd = sys.argv[1] if len(sys.argv) > 1 else "version"
    if cmd == "version":
        print(version())
    elif cmd == "excludes":  # auditwheel repair's arguments (runtime wheel, or tf)
        print(" ".join(f"--exclude={p}" for p in (TF_EXCLUDE if sys.argv[2:] == ["tf"] else EXCLUDE)))
    elif cmd == "tf-built-for":  # muster_tf/_built_for.py; exit 1 without TensorFlow
        if tensorflow_built() is None:
            sys.exit(1)
        print(tensorflow_built_module(), end="")
    elif cmd == "check-tag":
        sys.exit(check_tag(sys.argv[2]))
    else:
        sys.exit(f"usage: {sys.argv[0]} [version | excludes [tf] | tf-built-for | check-tag WHEEL]")
