#!/usr/bin/env bash
# tests/check-build-travels.sh [BUILD] - a build folder travels: its bin,
# lib and tests, copied to another machine (as to a GPU machine, where
# only build/{bin,lib,tests,deps} are carried: docs/gpu-testing.md), run
# their tests without the source tree or the rest of the build folder.
#   1. BUILD/{bin,lib,tests} copied (cp -rL: links become files, as on the
#      device machines) into a temporary folder;
#   2. no file of the copy holds an absolute path into the source tree
#      (what a compiled-in source path would leave);
#   3. from the copy, under strace -f (every file system call of every
#      process), the C tests of the GPU scripts' host side and those that
#      read data files or run the examples (TESTS) must pass and must touch
#      nothing under the source tree, which holds BUILD.
# Run by tests/run-all.sh.  Needs strace.  KEEP=1 keeps the copy and the
# trace (printed at the end).  Prints each check and "N passed,
# M failed"; exits 1 on a failure.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
BUILD=$(cd "${1:-build}" && pwd)
TESTS="devices cmg_ cuc_ dn_ tiled_ mp_plan mp_version mp_provider examples_ sl_model"
pass=0
fail=0
check() { # check NAME OK(0/1) [detail]
  if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "ok - $1"; else
    fail=$((fail + 1)); echo "not ok - $1"; [ -n "${3:-}" ] && printf '%s\n' "$3" | head -20 | sed 's/^/    /'; fi
}
if ! command -v strace >/dev/null; then
  echo "check-build-travels.sh: needs strace (apt-get install strace)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
mkdir "$tmp/build"
cp -rL "$BUILD/bin" "$BUILD/lib" "$BUILD/tests" "$tmp/build/"
case $tmp in "$ROOT"/*) echo "TMPDIR is inside the source tree ($tmp)" >&2; exit 1 ;; esac

# lib/libmuster_tf.so, built where TensorFlow is in the venv, links TF's
# framework library there by path (it needs that TF): it is not one of the
# files the GPU machines get, which have no TensorFlow
held=$(grep -rlF "$ROOT/" "$tmp/build" 2>/dev/null | grep -v '/build/lib/libmuster_tf\.so$')
check "no file of the copy names a path under $ROOT/" "$([ -z "$held" ]; echo $?)" "$held"

# shellcheck disable=SC2086 # TESTS: several names
# PATH without the source tree's folders (run-all.sh puts build/venv/bin
# first): the shell's lookups of cp, dirname there are not the tests'
path=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v "^$ROOT\(/\|$\)" | paste -sd: -)
out=$(cd "$tmp" && env -u MUSTER_BUILD -u MUSTER_COST_PATH PATH="$path" MUSTER_PROVIDER_PATH="$tmp/build/lib/muster/providers" \
      strace -f -qq -e trace=%file -o "$tmp/trace" build/tests/run-tests $TESTS 2>&1)
rc=$?
check "run-tests $TESTS from the copy" "$([ "$rc" = 0 ]; echo $?)" "$(printf '%s\n' "$out" | grep -v '^ok ' | tail -20)"
printf '%s\n' "$out" | tail -1
touched=$(grep -F "\"$ROOT" "$tmp/trace" | grep -E "\"$ROOT(/|\")" | sed 's/^[0-9]* *//' | sort -u)
check "the tests touched nothing under $ROOT (strace: $(wc -l <"$tmp/trace") calls)" \
  "$([ -z "$touched" ]; echo $?)" "$touched"
[ -z "${KEEP:-}" ] || echo "kept: $tmp (the copy in build/, strace's log in trace)"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
