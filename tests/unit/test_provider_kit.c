/* The provider kit's shared helpers (providers/common): the per-key cache
 * of collective providers (keyed.h), the gathering half of their verdict
 * agreement (agree.h) and the one error writer (err.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task.h"
#include "muster.h"
#include "common/agree.h"
#include "common/err.h"
#include "common/keyed.h"

typedef struct entry {
  muster__keyed_t link;
  int id;
} entry_t;

static int count(muster__keyed_t *head, uint64_t key) {
  int k = 0;
  for (muster__keyed_t *e = head; e; e = e->next) k += key == 0 || e->key == key;
  return k;
}

/* release_comms(key) frees that key's entries only; 0 frees all */
TEST_IMPL(provider_kit_keyed_cache) {
  entry_t e[5];
  muster__keyed_t *head = NULL;
  const uint64_t keys[5] = {7, 9, 7, 3, 7};
  for (int i = 0; i < 5; i++) {
    e[i] = (entry_t){.link.key = keys[i], .id = i};
    muster__keyed_push(&head, &e[i].link);
  }
  ASSERT_EQ(count(head, 0), 5);
  muster__keyed_unlink(&head, &e[1].link); /* the only key 9 */
  ASSERT_EQ(count(head, 9), 0);
  int taken = 0;
  for (muster__keyed_t *x; (x = muster__keyed_take(&head, 7));) {
    ASSERT_EQ(x->key, 7u);
    ASSERT_EQ(((entry_t *)x)->id % 2, 0); /* entries 0, 2, 4 */
    taken++;
  }
  ASSERT_EQ(taken, 3);
  ASSERT_EQ(count(head, 3), 1);
  ASSERT(muster__keyed_take(&head, 7) == NULL);
  ASSERT(muster__keyed_take(&head, 0) == &e[3].link);
  ASSERT(head == NULL && muster__keyed_take(&head, 0) == NULL);
  return 0;
}

static int write_err(char *buf, size_t len, int code, const char *who, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = muster__prov_verr(buf, len, code, who, fmt, ap);
  va_end(ap);
  return rc;
}

/* "WHO: what", cut to fit and terminated; the code comes back */
TEST_IMPL(provider_kit_error_writer) {
  char buf[64];
  ASSERT_EQ(write_err(buf, sizeof buf, MUSTER_ENOTPD, "lapack (host, potrs f64 n=4)", "LAPACKE_%cpotrf", 'd'),
            MUSTER_ENOTPD);
  ASSERT(strcmp(buf, "lapack (host, potrs f64 n=4): LAPACKE_dpotrf") == 0);
  ASSERT_EQ(write_err(buf, 12, MUSTER_EINVAL, "scalapack", "%s", "a long message"), MUSTER_EINVAL);
  ASSERT(strcmp(buf, "scalapack: ") == 0);
  ASSERT_EQ(write_err(buf, sizeof buf, MUSTER_EINVAL, NULL, "x"), MUSTER_EINVAL);
  ASSERT(strcmp(buf, "provider: x") == 0);
  ASSERT_EQ(write_err(NULL, 0, MUSTER_ECUDA, "cuda", "x"), MUSTER_ECUDA); /* no buffer: nothing written */
  return 0;
}

/* A bootstrap of 3 ranks seen from rank 1: the others' messages are
 * 10 + r; `fail` makes the allgather fail as a dead peer would. */
static int fake_allgather(void *ctx, const void *mine, void *all, size_t len, char *err, size_t errlen) {
  if (*(int *)ctx) {
    snprintf(err, errlen, "rank 2 died");
    return MUSTER_EPEERDEAD;
  }
  for (int r = 0; r < 3; r++) {
    int v = r == 1 ? *(const int *)mine : 10 + r;
    memcpy((char *)all + (size_t)r * len, &v, sizeof v);
  }
  return 0;
}

/* every rank's message in rank order; a failing bootstrap is named */
TEST_IMPL(provider_kit_agree_gather) {
  int fail = 0, mine = 42, *all = NULL;
  muster_bootstrap_t b = {.rank = 1, .size = 3, .kind = "group", .key = 5, .ctx = &fail,
                          .allgather = fake_allgather};
  char why[200] = "";
  ASSERT_OK(muster__agree_gather(&b, &mine, sizeof mine, (void **)&all, "testing", why, sizeof why));
  ASSERT(all && all[0] == 10 && all[1] == 42 && all[2] == 12);
  free(all);
  fail = 1;
  ASSERT_EQ(muster__agree_gather(&b, &mine, sizeof mine, (void **)&all, "testing", why, sizeof why),
            MUSTER_EPEERDEAD);
  ASSERT(all == NULL);
  ASSERT(strcmp(why, "rank 1: the bootstrap (group) failed while testing: rank 2 died") == 0);
  return 0;
}
