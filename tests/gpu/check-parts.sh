#!/usr/bin/env bash
# tests/gpu/check-parts.sh [BUILD] - gpu-test's --part and --smoke select
# what they say (no GPU needed: gpu-test --list runs none), for every
# provider and 1, 2 and 4 GPUs:
#   - for N = 1, 2, 3, 8: parts 1..N of the list, put together, are the
#     full list, each case exactly once (none lost between GPU commands);
#   - the same part twice is the same cases (the split is deterministic);
#   - the smoke's cases are cases of the full list, cover every dtype (or
#     as many as it has cases), and every routine of the full list on every
#     GPU count it has (1, 2, 4);
#   - the smoke holds exactly one kill of a leader where the list has kills.
# Run by tests/run-all.sh where the build has gpu-test (nvcc found).
# Prints one line per check and "N passed, M failed"; exits 1 on a failure.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
BUILD=$(cd "${1:-build}" && pwd)
gt="$BUILD/tests/gpu/gpu-test"
pass=0
fail=0
check() { # check NAME OK(0/1) [detail]
  if [ "$2" = 0 ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "not ok - $1"; [ -n "${3:-}" ] && printf '%s\n' "$3" | head -10 | sed 's/^/    /'; fi
}
# names PROVIDER GPUS OPTIONS...: the case names --list prints, estimates cut
names() {
  local p=$1 g=$2
  shift 2
  "$gt" --provider "$p" --max-gpus "$g" --list "$@" | grep -v '^#' | sed 's/ (~[0-9.]*s)$//'
}
if [ ! -x "$gt" ]; then
  echo "check-parts.sh: no $gt (built without nvcc)"
  echo "0 passed, 0 failed"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for p in cusolvermg cusolverdn cusolvermp; do
  for g in 1 2 4; do
    names "$p" "$g" | sort >"$tmp/all"
    dups=$(uniq -d "$tmp/all")
    check "$p $g GPU(s): case names unique" "$([ -z "$dups" ]; echo $?)" "$dups"
    for n in 1 2 3 8; do
      : >"$tmp/parts"
      for k in $(seq 1 "$n"); do names "$p" "$g" --part "$k/$n" >>"$tmp/parts"; done
      sort "$tmp/parts" -o "$tmp/parts"
      diff=$(diff "$tmp/all" "$tmp/parts")
      check "$p $g GPU(s): parts 1..$n are the list, each case once" "$([ -z "$diff" ]; echo $?)" "$diff"
    done
    a=$(names "$p" "$g" --part 2/3 | md5sum) b=$(names "$p" "$g" --part 2/3 | md5sum)
    check "$p $g GPU(s): part 2/3 twice, the same cases" "$([ "$a" = "$b" ]; echo $?)"
    names "$p" "$g" --smoke | sort >"$tmp/smoke"
    extra=$(comm -23 "$tmp/smoke" "$tmp/all")
    check "$p $g GPU(s): the smoke's cases are the list's" "$([ -s "$tmp/smoke" ] && [ -z "$extra" ]; echo $?)" "$extra"
    # dtypes: the word after the routine; gels specials name it after "gels"
    nd=$(grep -v '^kill' "$tmp/smoke" | awk '{print $2}' | sort -u | wc -l)
    ns=$(grep -vc '^kill' "$tmp/smoke")
    [ "$ns" -lt 4 ] || ns=4
    check "$p $g GPU(s): the smoke has every dtype ($nd of 4; as many as it has cases)" "$([ "$nd" = "$ns" ]; echo $?)"
    # every (routine, GPU count) of the list's successful cases is in the smoke
    key() { grep -v -e '^kill' -e 'NaN' -e 'singular' -e 'not-PD' -e 'zero-column' -e 'column=2x' -e 'rank-deficient' \
              -e '^memory' -e '^workspace' "$1" | sed 's/(.*) / /' |
            awk '{ g = 1; for (i = 1; i <= NF; i++) if ($i ~ /^gpus=/) { g = split(substr($i, 6), d, ","); delete u;
                     k = 0; for (j in d) if (!(d[j] in u)) { u[d[j]] = 1; k++ } g = k }
                   if ($0 ~ /^gels/ && $0 !~ /gpus=/) for (i = 1; i <= NF; i++) if ($i ~ /^R=/) g = substr($i, 3);
                   if (g == 1 || g == 2 || g == 4) print $1, g }' | sort -u; }
    missing=$(comm -23 <(key "$tmp/all") <(key "$tmp/smoke"))
    check "$p $g GPU(s): the smoke has every routine x GPU count" "$([ -z "$missing" ]; echo $?)" "$missing"
    kills=$(grep -c '^kill' "$tmp/all") skills=$(grep -c '^kill rank 0' "$tmp/smoke")
    want=$([ "$kills" -gt 0 ] && echo 1 || echo 0)
    check "$p $g GPU(s): the smoke has $want kill(s) of a leader" "$([ "$skills" = "$want" ]; echo $?)"
  done
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
