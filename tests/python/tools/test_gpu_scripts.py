"""The GPU scripts' host side, on the CPU.  tests/gpu/run-mpi-gpu.sh:
one check before its cases that cusolvermp loads (2026-11-28: without
cuSOLVERMp's libraries all 26 cases failed one by one), MUSTER_MP_LIBDIR
never passed on empty, the two-namespace step naming what it lacks.
tools/gpu/batch.sh, its GPU scripts replaced by stubs that
print what they were given: the `mpi` step takes cuSOLVERMp 0.9.1 from
build/deps091 when build/deps holds no cuSOLVERMp wheel (2026-11-28: the
carry held jaxmg's wheel only, and every case of run-mpi-gpu.sh failed),
the 0.8 wheel when it does; the store steps' limits fit the budget left
(the 4-GPU solves test ran past 320 s, its job cut by a budget 100 s
under a limit the batch did not set)."""
import io
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
BATCH = REPO / "tools" / "gpu" / "batch.sh"
# `muster providers` of a build whose cusolvermp loads unless MUSTER_MP_LIBDIR is set but empty (the provider's rule)
MUSTER = """#!/bin/sh
[ "$1" = providers ] || exit 2
if [ "${MUSTER_MP_LIBDIR+set}" = set ] && [ -z "$MUSTER_MP_LIBDIR" ]; then
  s="unavailable: probe: cusolvermp: MUSTER_MP_LIBDIR is set but empty (unset it for the default)"
else
  s="available: cuSOLVERMp 0.8.0"
fi
echo "cusolvermp   70        potrs,syevd f64 cuda      $s"
echo "             /x/cusolvermp.so"
"""


def mpi_script(tmp, muster=MUSTER, env_extra=None):
    """run-mpi-gpu.sh from a build folder in tmp whose bin/muster is `muster`
    (a stub, or None: the build's own), NGPU=0, run with tmp as the repo
    root (no JAX test, no tests/mpi/hosts.sh there)."""
    gpu = tmp / "build" / "tests" / "gpu"
    gpu.mkdir(parents=True)
    for f in ("run-mpi-gpu.sh", "gpu-env.sh"):
        shutil.copy(REPO / "tests" / "gpu" / f, gpu / f)
    if muster is None:
        real = pathlib.Path(os.environ.get("MUSTER_BUILD", REPO / "build")).resolve()
        for d in ("bin", "lib"):
            (tmp / "build" / d).symlink_to(real / d)
    else:
        (tmp / "build" / "bin").mkdir()
        (tmp / "build" / "bin" / "muster").write_text(muster)
        (tmp / "build" / "bin" / "muster").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MUSTER_", "NCCL_"))}
    env.update(NGPU="0", **(env_extra or {}))
    return subprocess.run(["bash", str(gpu / "run-mpi-gpu.sh")], cwd=tmp, env=env, capture_output=True, text=True,
                          timeout=120)


def test_mpi_script_stops_at_once_where_cusolvermp_does_not_load(tmp_path):
    """Here (no GPU) the build's cusolvermp does not load: one line naming
    why and how to give it its libraries, exit 1, no case run."""
    p = mpi_script(tmp_path, muster=None)
    if re.search(r"^cusolvermp .* available", p.stdout, re.M):
        pytest.skip("cusolvermp loads here")
    assert p.returncode == 1, p.stdout + p.stderr
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("mpigpu: ")]
    assert len(lines) == 1 and lines[0].startswith("mpigpu: not run: cusolvermp does not load (probe: "), p.stdout
    assert "nvidia_cusolvermp_cu13-*.whl" in lines[0] and "MUSTER_MP_LIBDIR" in lines[0], lines[0]
    assert not re.search(r"^(not )?ok - |^skip - ", p.stdout, re.M), p.stdout


def test_mpi_script_never_passes_an_empty_libdir(tmp_path):
    """MUSTER_MP_LIBDIR empty and no wheel in build/deps: unset, so the
    stub's cusolvermp loads and the script goes on (every case skipped:
    NGPU=0), the namespace step saying which of its needs are missing."""
    p = mpi_script(tmp_path, env_extra={"MUSTER_MP_LIBDIR": ""})
    assert "not run" not in p.stdout and "set but empty" not in p.stdout, p.stdout
    assert re.search(r"^mpigpu: [01] passed, [01] failed, [0-9]+ skipped", p.stdout, re.M), p.stdout
    # its last check compares /dev/shm before and after: other programs of this machine may have added to it
    assert not [ln for ln in p.stdout.splitlines() if ln.startswith("not ok - ") and "/dev/shm" not in ln], p.stdout
    info = next(ln for ln in p.stdout.splitlines() if "two-namespace form not tried" in ln)
    assert "only 0 GPU(s), needs 2" in info and f"no {tmp_path}/tests/mpi/hosts.sh" in info, info
    assert ("no ip command" in info) == (shutil.which("ip") is None), info
STUB = "#!/bin/sh\necho \"stub $0: $*\"; env | grep -E '^(MUSTER_MP_LIBDIR|LD_PRELOAD|STORE_[A-Z]*|MUSTER_TEST_BUDGET|BUDGET|MUSTER_LOG)=' | sort\n"


def tree(tmp, wheel: bool):
    """A repo root with the stubs, build/deps (the 0.8 wheel or jaxmg's
    only) and build/deps091/mp091.tar.xz."""
    for script in ("build/tests/gpu/run-mpi-gpu.sh", "tests/python/jax/run-store-gpu.sh"):
        (tmp / script).parent.mkdir(parents=True, exist_ok=True)
        (tmp / script).write_text(STUB)
    (tmp / "build/deps").mkdir()
    (tmp / "build/deps/jaxmg-1.4.1-py3-none-any.whl").write_text("")
    if wheel:
        (tmp / "build/deps/nvidia_cusolvermp_cu13-0.8.0.3126-py3-none-manylinux_2_27_x86_64.whl").write_text("")
    (tmp / "build/deps091").mkdir()
    with tarfile.open(tmp / "build/deps091/mp091.tar.xz", "w:xz") as t:
        info = tarfile.TarInfo("site/nvidia/nccl/lib/libnccl.so.2")
        t.addfile(info, io.BytesIO(b""))


def batch(tmp, *steps, budget=560):
    env = {k: v for k, v in os.environ.items() if k not in ("MUSTER_MP_LIBDIR", "LD_PRELOAD", "STORE_TESTS",
                                                            "STORE_TIMEOUT", "MUSTER_TEST_BUDGET", "T0")}
    env.update(BUDGET=str(budget), OUT=str(tmp / "out"), MP091_DIR=str(tmp / "mp091"), TAIL="50")
    p = subprocess.run(["bash", str(BATCH), *steps], cwd=tmp, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def values(out):
    return dict(re.findall(r"^([A-Z_0-9]+)=(.*)$", out, re.M))


def test_mpi_step_takes_091_without_the_wheel(tmp_path):
    tree(tmp_path, wheel=False)
    out = batch(tmp_path, "mpi")
    assert "stub build/tests/gpu/run-mpi-gpu.sh" in out and "=== mpi: exit 0" in out, out
    v = values(out)
    assert v["MUSTER_MP_LIBDIR"].startswith(f"{tmp_path}/mp091/site/nvidia/nccl/lib:"), out
    assert v["LD_PRELOAD"] == f"{tmp_path}/mp091/site/nvidia/nccl/lib/libnccl.so.2", out
    assert (tmp_path / "mp091/site/nvidia/nccl/lib/libnccl.so.2").exists()


def test_mpi_step_takes_the_wheel_when_there(tmp_path):
    tree(tmp_path, wheel=True)
    out = batch(tmp_path, "mpi")
    assert "=== mpi: exit 0" in out and "MUSTER_MP_LIBDIR" not in out and "LD_PRELOAD" not in out, out


def test_store_steps_fit_the_budget(tmp_path):
    """Each store script's limit is under the step's cut (the budget left
    less 5 s); the solves step's job budget under that limit with room for
    pytest's start and the stacks (and near the whole budget); a step
    whose need exceeds what is left is skipped, said so."""
    tree(tmp_path, wheel=False)
    out = batch(tmp_path, "jax4-091-solves")
    v = values(out)
    assert v["STORE_TESTS"] == "solves_on_gpus", out
    limit, job = int(v["STORE_TIMEOUT"]), int(v["MUSTER_TEST_BUDGET"])
    assert 560 - 20 <= limit < 560 - 5 and limit - 30 <= job <= limit - 15, out
    out = batch(tmp_path, "jax4-091")
    v = values(out)
    assert "MUSTER_TEST_BUDGET" not in v and 560 - 20 <= int(v["STORE_TIMEOUT"]) < 560 - 5, out
    out = batch(tmp_path, "jax4-091", budget=400)
    assert re.search(r"=== jax4-091: skipped \([0-9]+ s left, needs [0-9]+\)", out), out


def test_store_selections_pick_what_they_say():
    """The -k expressions of the scripts select, in the JAX store test file:
    run-mpi-gpu.sh's sockets case exactly the narrow bootstrap test (its
    -k gpu took the whole GPU suite, past its 120 s limit, on 2026-11-28);
    run-store-gpu.sh's default the three GPU tests, not that one; batch.sh's
    solves step the solves test alone."""
    mpi = re.search(r'"\$jaxtest" -k (\S+)', (REPO / "tests/gpu/run-mpi-gpu.sh").read_text()).group(1)
    store = re.search(r'-k "\$\{STORE_TESTS:-(\w+)\}"', (REPO / "tests/python/run-store-gpu.sh").read_text()).group(1)
    solves = re.search(r"jax4-091-solves\) .*STORE_TESTS=(\S+)", BATCH.read_text()).group(1)

    def chosen(expr):
        p = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider", "-k", expr,
                            str(REPO / "tests/python/jax/test_store_distributed.py")], capture_output=True, text=True,
                           timeout=120, cwd=REPO)
        return sorted(ln.split("::", 1)[1] for ln in p.stdout.splitlines() if "::" in ln)
    assert chosen(mpi) == ["test_store_bootstrap_over_nccl"]
    assert chosen(store) == ["test_engine_faults_on_gpus[kill]", "test_engine_faults_on_gpus[stop]",
                             "test_store_solves_on_gpus"]
    assert chosen(solves) == ["test_store_solves_on_gpus"]


def test_every_listed_step_has_a_case_and_a_need():
    """Each step batch.sh's header lists is a case of step(): a listed step
    that is not one fails only on the GPU machine, its device time spent."""
    text = BATCH.read_text()
    header = text.split("\nset -u", 1)[0]
    listed = set()
    for m in re.finditer(r"^#   ([a-z0-9][a-z0-9, -]*?)(?:  |$)", header, re.M):
        listed.update(s.strip() for s in m.group(1).split(",") if s.strip())
    body = text.split("step() {", 1)[1].split("\n}", 1)[0]
    cases = set()
    for m in re.finditer(r"^    ([a-z0-9|* -]+)\)", body, re.M):
        cases.update(s.strip() for s in m.group(1).split("|"))
    assert listed and listed <= cases, sorted(listed - cases)


def test_bench_steps_pass_their_rows(tmp_path):
    """The benchmark steps added for the next GPU session reach
    run-bench-mp-gpu.sh with their GPU count, rows and columns."""
    tree(tmp_path, wheel=False)
    bench = tmp_path / "tests/python/jax/run-bench-mp-gpu.sh"
    bench.write_text(STUB)
    want = {"gap2": ("--gpus 2", "--rows potrs:16384,potrs:32768 --columns onenode,default"),
            "gap4": ("--gpus 4", "--rows potrs:16384,potrs:32768,potrs:65536 --columns onenode,default"),
            "factors4-default": ("--gpus 4", "--set factors --columns default"),
            "factors1-gesvd": ("--gpus 1", "--set factors --rows gesvd"),
            "factors1-polar": ("--gpus 1", "--set factors --rows polar")}
    for step, (gpus, rest) in want.items():
        out = batch(tmp_path, step)
        line = next(ln for ln in out.splitlines() if ln.startswith("stub "))
        assert f"build {gpus} " in line and line.endswith(rest) and f"=== {step}: exit 0" in out, out
        assert (values(out).get("MUSTER_LOG") == "debug") == step.startswith("gap"), out  # the route's phases
