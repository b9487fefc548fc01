# tests/mpi/tap.sh - sourced by the MPI CLI scripts (cli.sh, deadline.sh):
# one "ok - ..." / "not ok - ..." line per check, counted in $pass and
# $fail; a failure also shows the check's stdout and stderr, which the
# script keeps in the files named by $out and $err.
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() {
  fail=$((fail + 1))
  echo "not ok - $*"
  sed 's/^/  | out: /' "$out"
  sed 's/^/  | err: /' "$err"
}
