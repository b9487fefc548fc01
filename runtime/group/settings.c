/*
 * runtime/group/settings.c - muster_env_check (include/muster/parse.h): every
 * MUSTER_* variable checked at once.  Apart from env.c because MUSTER_JOB's
 * rule is the segment name's (segment_name.c), a layer above env.c.
 */
#include "base/env.h"
#include "shm/segment.h"

int muster_env_check(void) {
  double t;
  const char *s;
  char p[MUSTER_MAX_BACKEND + 1];
  int rc, on;
  if ((rc = muster__env_timeout(&t)) < 0 || (rc = muster__env_job(&s)) < 0 ||
      (rc = muster__env_mpi_abort(&on)) < 0 || (rc = muster__env_mpi_lib(&s)) < 0 ||
      (rc = muster__env_mpi_heartbeat(&on)) < 0 ||
      (rc = muster__env_check_log()) < 0 ||
      (rc = muster__env_provider_choice(NULL, p, sizeof p)) < 0 ||
      (rc = muster__env_provider_path(&s)) < 0 || (rc = muster__env_cost_path(&s)) < 0 ||
      (rc = muster__env_comm_test_fail_stage(&on)) < 0)
    return rc;
  return MUSTER_OK;
}
