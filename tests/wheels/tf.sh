# tests/wheels/tf.sh: the muster_tf wheel, sourced by tests/wheels/run.sh
# (its check/ok/bad, $ROOT, $PY, $ver, $rt, $tmp, $vpy, clean_env).
#
# build/venv's python ($TF_PYTHON) has tensorflow-cpu: the runtime and
# muster_tf wheels go to a --target folder on its PYTHONPATH, so TensorFlow
# is not installed twice.  From a folder with no build tree and no MUSTER_*
# variables: the metadata (version, the TensorFlow pin, nothing of
# TensorFlow bundled), the import errors (no runtime wheel, a TensorFlow of
# another version, no TensorFlow), how libmuster_tf.so finds libmuster.so
# (RUNPATH: the runtime wheel beside it; else the copy muster_tf loaded
# first), and docs/tensorflow.md's MirroredStrategy example (4 logical CPU
# devices, residuals checked) with muster_tf and the runtime in two folders.
TF_PY=${TF_PYTHON:-$PY}
tfw=$(ls "$ROOT"/dist/muster_tf-"$ver"-py3-none-*.whl 2>/dev/null)
if ! "$TF_PY" -c 'import importlib.util as u, sys; sys.exit(u.find_spec("tensorflow") is None)'; then
  echo "skip: muster_tf (no tensorflow in $TF_PY)"
  return 0
fi
if [ -z "$tfw" ]; then
  bad "dist/muster_tf-$ver-*.whl was not built, though $TF_PY has tensorflow"
  return 0
fi
t2=$SECONDS
"$vpy" -m pip install -q --disable-pip-version-check --no-deps --no-compile --target "$tmp/tfsite" \
  "$ROOT/$rt" "$tfw" >"$tmp/tfpip.log" 2>&1
tfenv=("${clean_env[@]}" PYTHONPATH="$tmp/tfsite" TF_CPP_MIN_LOG_LEVEL=3)

# the wheel: its tag, what it holds, what it requires, its version
check "auditwheel show: $(basename "$tfw") is manylinux" "$PY" "$ROOT/tools/wheels/pkgmeta.py" check-tag "$tfw"
out=$("${tfenv[@]}" "$TF_PY" - "$tfw" <<'PYEOF' 2>&1 | tail -1
import importlib.metadata as m, sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
libs = sorted(n for n in names if ".so" in n)
assert libs == ["muster_tf/lib/libmuster_tf.so"], libs   # no TensorFlow, no libmuster.so
tf_version = m.version(m.packages_distributions()["tensorflow"][0])  # without importing it
mm = ".".join(tf_version.split(".")[:2])
req = m.requires("muster_tf")
assert not [r for r in req if r.startswith("tensorflow") and "extra ==" not in r], req  # no hard pin
for d in ("tensorflow-cpu", "tensorflow"):
    assert any(r.startswith(f"{d}=={mm}.*") and f'extra == "{d}"' in r for r in req), (d, req)
print("pins", mm, "version", m.version("muster_tf"))
PYEOF
)
check "muster_tf wheel: only libmuster_tf.so in it, [tensorflow-cpu]/[tensorflow] pin this TF ($out)" \
  grep -qxE "pins [0-9]+\.[0-9]+ version $ver" <<<"$out"

# the import errors (none imports the real TensorFlow: they come first)
tf_error() {  # PYTHON PYTHONPATH: the last line of `import muster_tf`
  "${clean_env[@]}" PYTHONPATH="$2" "$1" -c 'import muster_tf' 2>&1 | tail -1
}
"$vpy" -m pip install -q --disable-pip-version-check --no-deps --target "$tmp/tfalone" "$tfw" >/dev/null 2>&1
msg=$(tf_error "$TF_PY" "$tmp/tfalone")
echo "   $msg"
check "muster_tf without muster-runtime fails at import, naming it" \
  grep -q "ImportError: muster_tf cannot find the muster libraries: libmuster.so .*pip install muster-runtime==$ver" <<<"$msg"
mkdir -p "$tmp/oldtf/tensorflow"
echo '__version__ = "2.0.0"  # a TensorFlow of another version' >"$tmp/oldtf/tensorflow/__init__.py"
msg=$(tf_error "$TF_PY" "$tmp/oldtf:$tmp/tfsite")
echo "   $msg"
check "muster_tf with TensorFlow 2.0.0 fails at import, naming the one it needs" \
  grep -qE "ImportError: muster_tf needs TensorFlow [0-9]+\.[0-9]+ \(it was built against tensorflow-cpu .*has TensorFlow 2\.0\.0 .*pip install 'tensorflow-cpu==" <<<"$msg"
msg=$(tf_error "$vpy" "$tmp/tfsite")  # the JAX venv: no TensorFlow
echo "   $msg"
check "muster_tf without TensorFlow fails at import, saying how to get it" \
  grep -qE "ImportError: muster_tf needs TensorFlow .*has none\. Install TensorFlow" <<<"$msg"
# installed together: libmuster_tf.so's RUNPATH finds the runtime wheel's
# libmuster.so beside it (TensorFlow's library from TensorFlow's folder)
tfdir=$("$TF_PY" -c 'import importlib.util as u, os; print(os.path.dirname(u.find_spec("tensorflow").origin))')
out=$(LD_LIBRARY_PATH="$tfdir" ldd "$tmp/tfsite/muster_tf/lib/libmuster_tf.so" | grep 'libmuster.so')
check "libmuster_tf.so's RUNPATH finds the runtime wheel's libmuster.so ($(xargs <<<"$out"))" \
  grep -q "=> $tmp/tfsite/muster_tf/lib/../../muster_runtime/lib/libmuster.so" <<<"$out"

# docs/tensorflow.md's first example, muster_tf and the runtime in two
# folders: libmuster_tf.so's RUNPATH (the runtime beside it) finds nothing,
# the libmuster.so muster_tf loads first (by path) meets its need (soname)
"$TF_PY" - "$ROOT/docs/tensorflow.md" "$tmp/tf_example.py" <<'PYEOF'
import re, sys
blocks = re.findall(r"```python\n(.*?)```", open(sys.argv[1]).read(), re.S)
open(sys.argv[2], "w").write(blocks[0] + "print('tf example ok from', muster_tf.lib_path(), muster_tf._lib.runtime_dir(), muster_tf.__version__)\n")
PYEOF
t3=$SECONDS
"${tfenv[@]}" PYTHONPATH="$tmp/tfalone:$tmp/tfsite" "$TF_PY" "$tmp/tf_example.py" >"$tmp/tf.log" 2>&1
check "docs/tensorflow.md's example on 4 CPU devices from the wheels, muster_tf.__version__ $ver ($((SECONDS - t3)) s: $(grep -E '^potrs residual' "$tmp/tf.log"))" \
  grep -qx "tf example ok from $tmp/tfalone/muster_tf/lib/libmuster_tf.so $tmp/tfsite/muster_runtime/lib $ver" "$tmp/tf.log"
grep -q "tf example ok" "$tmp/tf.log" || tail -20 "$tmp/tf.log"

echo "muster_tf checks: $((SECONDS - t2)) s"
