#!/usr/bin/env bash
# tests/mpi/hosts.sh - sourced, not run: two "hosts" on one machine for the
# multi-host tests (run-multihost.sh: the driver; cli-multihost.sh: the
# CLI).  Needs root (ip netns, mounts).  The caller defines fail MESSAGE
# (prints and exits) before sourcing it.
#
# Each host is its own network namespace (hostA, hostB: a veth pair between
# them, 10.213.<pid-derived>.1 and .2/24), its own mount namespace with a
# private tmpfs on /dev/shm, and its own hostname (UTS namespace).  mpirun
# runs inside hostA and starts hostA's ranks itself; it reaches hostB
# through a launch agent (plm_rsh_agent, in place of ssh) that enters
# hostB's namespaces and runs the orted command there.  Open MPI is held to
# TCP over the veth subnet (pml ob1, btl tcp,self, oob and btl_tcp on the
# subnet only), so the only path between the hosts is the veth pair.
#
# Gives: $WORK (removed at exit, with both namespaces), "$WORK/host" hostA
# "$NSA" "COMMAND LINE" (runs it on hostA), $HOSTS_MPIRUN (mpirun over
# both hosts, HOSTS_SLOTS ranks each (default 2: -np 4), and its options:
# append the program), and $WORK/shm.log ("NAME: /dev/shm after the job:
# [...]" per host and job).
tag=$(( $$ % 250 + 1 ))
NSA=muster-hostA-$$ NSB=muster-hostB-$$ VA=mva$$ VB=mvb$$
NET=10.213.$tag
WORK=$(mktemp -d /tmp/muster-multihost.XXXXXX)

cleanup() {
  ip netns del "$NSA" 2>/dev/null
  ip netns del "$NSB" 2>/dev/null # deleting a namespace deletes its veth end
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM # through the EXIT trap
[ "$(id -u)" = 0 ] || fail "needs root (network and mount namespaces)"

ip netns add "$NSA" && ip netns add "$NSB" || fail "ip netns add"
ip link add "$VA" type veth peer name "$VB" || fail "ip link add veth"
ip link set "$VA" netns "$NSA" && ip link set "$VB" netns "$NSB" || fail "moving the veth ends"
ip -n "$NSA" addr add "$NET.1/24" dev "$VA" && ip -n "$NSB" addr add "$NET.2/24" dev "$VB" ||
  fail "addresses"
for ns in "$NSA" "$NSB"; do ip -n "$ns" link set lo up; done
ip -n "$NSA" link set "$VA" up && ip -n "$NSB" link set "$VB" up || fail "links up"

# The "host" wrapper: enter NS's network namespace, a new mount namespace
# with a private /dev/shm, and a UTS namespace named NAME; run the command
# (a shell command line, as ssh would get it); then record what is left in
# that /dev/shm.
cat >"$WORK/host" <<EOF
#!/bin/bash
name=\$1 ns=\$2; shift 2
exec ip netns exec "\$ns" unshare -m -u bash -c '
  mount -t tmpfs -o size=256m,mode=1777 "muster-\$0" /dev/shm || exit 90
  hostname "\$0"
  bash -c "\$1"; rc=\$?
  echo "\$0: /dev/shm after the job: [\$(ls -A /dev/shm)]" >>"$WORK/shm.log"
  exit \$rc' "\$name" "\$*"
EOF
# The launch agent mpirun calls instead of ssh: "agent HOST COMMAND...".
cat >"$WORK/agent" <<EOF
#!/bin/bash
host=\$1; shift
case "\$host" in
  $NET.2) exec "$WORK/host" hostB "$NSB" "\$@" ;;
  *) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
EOF
chmod +x "$WORK/host" "$WORK/agent"
slots=${HOSTS_SLOTS:-2}
printf '%s slots=%d\n%s slots=%d\n' "$NET.1" "$slots" "$NET.2" "$slots" >"$WORK/hosts"

HOSTS_MPIRUN="mpirun --allow-run-as-root --oversubscribe -np $((2 * slots)) --hostfile $WORK/hosts \
  --mca plm_rsh_agent $WORK/agent --mca pml ob1 --mca btl tcp,self --mca mpi_yield_when_idle 1 \
  --mca btl_tcp_if_include $NET.0/24 --mca oob_tcp_if_include $NET.0/24 \
  -x OPENBLAS_NUM_THREADS=1 -x PATH"
