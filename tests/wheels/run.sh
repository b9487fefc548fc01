#!/usr/bin/env bash
# tests/wheels/run.sh: the wheels, built from this checkout and installed as
# a user would (docs/install.md), each check one "ok:" or "FAIL:" line and
# a closing "N passed, N failed" (tests/run-all.sh counts it).
#
#   1. tools/wheels/build.sh builds dist/*.whl; auditwheel show: manylinux
#   2. a fresh venv (in $TMPDIR, no build tree, no MUSTER_* variables, run
#      from another folder) gets dist/muster_runtime + muster_jax with pip;
#      `muster --version`, muster_jax.__version__ and the metadata agree;
#      `muster solve potrs --n 512` and a potrs on 4 JAX host devices run
#   3. muster_jax without the runtime wheel fails at import, saying what
#      is missing and how to get it
#   4. muster_torch in build/venv-torch's python ($TORCH_PYTHON; made by
#      tools/ci/install-torch.sh;
#      the wheels go to a --target folder on PYTHONPATH, so torch's 5 GB are
#      not installed twice); skipped when that venv is missing
#   5. muster_tf (tests/wheels/tf.sh) in build/venv's python, which has
#      tensorflow-cpu, the same way: the wheel's pin and contents,
#      docs/tensorflow.md's example, its import errors (no runtime wheel,
#      another TensorFlow, none)
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
pass=0; fail=0
ok() { echo "ok: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
finish() { echo "wheels: $pass passed, $fail failed"; [ "$fail" = 0 ]; exit $?; }

LOG=${LOG:-build/test-logs}
mkdir -p "$LOG"
t0=$SECONDS
if ! bash tools/wheels/build.sh >"$LOG/wheels-build.log" 2>&1; then
  tail -30 "$LOG/wheels-build.log"; bad "tools/wheels/build.sh"; finish
fi
ok "tools/wheels/build.sh ($((SECONDS - t0)) s)"
PY=${PYTHON:-$ROOT/build/venv/bin/python}
ver=$("$PY" tools/wheels/pkgmeta.py)
rt=$(ls dist/muster_runtime-"$ver"-py3-none-*.whl)
check "auditwheel show: $(basename "$rt") is manylinux" "$PY" tools/wheels/pkgmeta.py check-tag "$rt"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/muster-wheels.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
clean_env=(env -u MUSTER_BUILD -u MUSTER_LIB_DIR -u MUSTER_PROVIDER_PATH -u MUSTER_COST_PATH
           -u MUSTER_PROVIDER -u PYTHONPATH)
t1=$SECONDS
python3 -m venv "$tmp/venv" && "$tmp/venv/bin/python" -m pip install -q --disable-pip-version-check --no-compile \
  "$ROOT/$rt" "$ROOT/dist/muster_jax-$ver-py3-none-any.whl" >"$tmp/pip.log" 2>&1
check "pip install muster_runtime + muster_jax into a fresh venv ($((SECONDS - t1)) s)" test -x "$tmp/venv/bin/muster"
mkdir -p "$tmp/elsewhere"
cd "$tmp/elsewhere"
vpy="$tmp/venv/bin/python"

out=$("${clean_env[@]}" "$tmp/venv/bin/muster" --version 2>&1)
meta=$("${clean_env[@]}" "$vpy" -c 'import importlib.metadata as m, muster_jax; print(m.version("muster-runtime"), m.version("muster_jax"), muster_jax.__version__)' 2>&1)
check "versions agree: '$out' / $meta" test "$out $meta" = "muster $ver $ver $ver $ver"

"${clean_env[@]}" "$tmp/venv/bin/muster" solve potrs --n 512 >"$tmp/solve.log" 2>&1
rc=$?
solved() { [ "$rc" = 0 ] && grep -qE '^ +check +ok' "$tmp/solve.log"; }
check "muster solve potrs --n 512 (exit $rc, $(grep -E '^ +check' "$tmp/solve.log" | xargs))" solved
solved || cat "$tmp/solve.log"

cat >"$tmp/jax_potrs.py" <<'PYEOF'
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp, numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
import muster_jax as mj
assert len(jax.devices()) == 4, jax.devices()
mesh = jax.make_mesh((4,), ("x",))
N = 64
A = jax.device_put(jnp.diag(jnp.arange(N, dtype=jnp.float64) + 1), NamedSharding(mesh, P(None, "x")))
x = mj.potrs(A, jnp.ones((N, 1)), mesh=mesh, in_specs=(P(None, "x"), P(None, None)))
assert np.allclose(x.ravel(), 1.0 / (np.arange(N) + 1)), x
print("jax potrs ok from", mj.lib_dir())
PYEOF
"${clean_env[@]}" XLA_FLAGS=--xla_force_host_platform_device_count=4 "$vpy" "$tmp/jax_potrs.py" >"$tmp/jax.log" 2>&1
check "muster_jax potrs on 4 host devices ($(tail -1 "$tmp/jax.log"))" grep -q "jax potrs ok from $tmp/venv/" "$tmp/jax.log"

# muster_jax alone (its dependency left out): the error comes at import
"$vpy" -m pip install -q --disable-pip-version-check --no-deps --target "$tmp/alone" \
  "$ROOT/dist/muster_jax-$ver-py3-none-any.whl" >/dev/null 2>&1
python_alone() {  # the venv's jax, but no muster_runtime: a venv whose site-packages links the first's, less muster's
  "${clean_env[@]}" PYTHONPATH="$tmp/alone" "$tmp/venv-noruntime/bin/python" -c 'import muster_jax' 2>&1 | tail -1
}
python3 -m venv --without-pip "$tmp/venv-noruntime"
sp=$("$vpy" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
sp2=$("$tmp/venv-noruntime/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
for d in "$sp"/*; do case $(basename "$d") in muster_runtime*|muster_jax*) ;; *) ln -s "$d" "$sp2/";; esac; done
msg=$(python_alone)
echo "   $msg"
check "muster_jax without muster-runtime fails at import, naming it" \
  grep -q "ImportError: muster_jax cannot find the muster libraries: .*pip install muster-runtime==$ver" <<<"$msg"

TORCH_PY=${TORCH_PYTHON:-$ROOT/build/venv-torch/bin/python}
if [ -x "$TORCH_PY" ]; then
  "$vpy" -m pip install -q --disable-pip-version-check --no-deps --target "$tmp/torchsite" \
    "$ROOT/$rt" "$ROOT/dist/muster_torch-$ver-py3-none-any.whl" >/dev/null 2>&1
  out=$("${clean_env[@]}" PYTHONPATH="$tmp/torchsite" "$TORCH_PY" -c '
import torch, muster_torch as mt
A = torch.eye(6, dtype=torch.float64) * 2
x = mt.potrs(mt.split_columns(A, 2), torch.ones(6, dtype=torch.float64))
print(mt.__version__, bool(torch.allclose(x, torch.full((6,), 0.5, dtype=x.dtype))), mt.lib_dir())' 2>&1 | tail -1)
  check "muster_torch potrs from the wheels ($out)" test "${out% *}" = "$ver True"
else
  echo "skip: muster_torch (no build/venv-torch: tools/ci/install-torch.sh makes it)"
fi
# shellcheck source=tests/wheels/tf.sh
source "$ROOT/tests/wheels/tf.sh"
cd "$ROOT"
echo "wheels stage: $((SECONDS - t0)) s"
finish
