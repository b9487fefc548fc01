/*
 * tests/integration/test_pidns_util.h - run test code as pid 1 of fresh pid
 * namespaces that share this machine's /dev/shm, the way two containers
 * do: each gets a new pid namespace and a new mount namespace with its own
 * /proc mounted (like `unshare -pf --mount-proc`), or keeps ours (like
 * `unshare -pf`: its /proc then shows our pids, not its own).  Needs
 * CAP_SYS_ADMIN (root; CI runs the tests as root): without it they fail,
 * saying so.
 */
#ifndef MUSTER_TEST_PIDNS_UTIL_H
#define MUSTER_TEST_PIDNS_UTIL_H

#include <sys/types.h>

#define PIDNS_MAX 4

/* What runs as pid 1 of namespace `index`; its return value is its exit
 * status (an ASSERT failing in it exits 3). */
typedef int (*pidns_fn)(int index, void *arg);

/* Start n (1..PIDNS_MAX) namespaces, each running fn(index, arg) as its
 * pid 1, with its own /proc if own_proc; they are released together (a
 * gate) so that they overlap.  pids[i] is the launcher of namespace i in
 * ours (it waits for its pid 1 and passes on its status).  Does not wait. */
void pidns_spawn(int n, int own_proc, pidns_fn fn, void *arg, pid_t *pids);

/* Wait for them; codes[i] is what fn returned (128 + signal if pid 1 was
 * killed, 90 if a namespace could not be made, 91 if /proc could not be
 * mounted).  Returns how many are non-zero, each printed. */
int pidns_wait(int n, const pid_t *pids, int *codes);

/* Both. */
int pidns_run(int n, int own_proc, pidns_fn fn, void *arg, int *codes);

#endif
