/*
 * tests/unit/test_segment_names.c - a segment's name
 * (runtime/shm/segment_name.c): the group and job rules, and
 * muster.<uid>.<pidns>.<job>.<group> built and taken apart, at its longest
 * and at every malformed edge (the public seam's side of names:
 * test_segment_seam.c).
 */
#include <sys/stat.h>
#include <unistd.h>

#include "muster.h"
#include "base/proc.h"
#include "shm/segment.h"
#include "task.h"

TEST_IMPL(segment_names) {
  ASSERT_EQ(muster__segment_check_group("potrs.17"), 0);
  ASSERT_EQ(muster__segment_check_group("a"), 0);
  ASSERT_EQ(muster__segment_check_group(""), MUSTER_EINVAL);
  ASSERT_EQ(muster__segment_check_group(NULL), MUSTER_EINVAL);
  ASSERT_EQ(muster__segment_check_group("a/b"), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "'/'");
  ASSERT_EQ(muster__segment_check_group("."), MUSTER_EINVAL);
  ASSERT_EQ(muster__segment_check_group(".."), MUSTER_EINVAL);
  ASSERT_EQ(muster__segment_check_group("a b"), MUSTER_EINVAL);
  ASSERT_EQ(muster__segment_check_group("a\nb"), MUSTER_EINVAL);
  ASSERT_EQ(muster__segment_check_group("caf\xc3\xa9"), MUSTER_EINVAL);
  char longname[MUSTER_MAX_NAME + 2];
  memset(longname, 'x', sizeof longname);
  longname[MUSTER_MAX_NAME] = '\0';
  ASSERT_EQ(muster__segment_check_group(longname), 0);
  longname[MUSTER_MAX_NAME] = 'x';
  longname[MUSTER_MAX_NAME + 1] = '\0';
  ASSERT_EQ(muster__segment_check_group(longname), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "longer than 96");
  ASSERT_EQ(muster_segment_check_job("t1_2"), 0);
  ASSERT_EQ(muster_segment_check_job("a.b"), MUSTER_EINVAL); /* '.' would make names ambiguous */
  ASSERT_EQ(muster_segment_check_job(".."), MUSTER_EINVAL);
  ASSERT_EQ(muster_segment_check_job(""), MUSTER_EINVAL);
  ASSERT_EQ(muster_segment_check_job("x/y"), MUSTER_EINVAL);
  char longjob[MUSTER_MAX_JOB + 2];
  memset(longjob, 'j', sizeof longjob);
  longjob[MUSTER_MAX_JOB] = '\0';
  ASSERT_EQ(muster_segment_check_job(longjob), 0);
  longjob[MUSTER_MAX_JOB] = 'j';
  longjob[MUSTER_MAX_JOB + 1] = '\0';
  ASSERT_EQ(muster_segment_check_job(longjob), MUSTER_EINVAL);
  return 0;
}

/* muster.<uid>.<pidns>.<job>.<group>: built, taken apart, and nothing else
 * taken for one. */
TEST_IMPL(segment_name_format) {
  char name[MUSTER_SEG_NAME_MAX + 1], want[128];
  uint64_t ns = muster__proc_self_pidns();
  struct stat st;
  ASSERT_EQ(stat("/proc/self/ns/pid", &st), 0);
  ASSERT_EQ(ns, (uint64_t)st.st_ino);
  ASSERT_OK(muster__segment_name(name, sizeof name, "j1", "potrs.17"));
  snprintf(want, sizeof want, "muster.%u.%llu.j1.potrs.17", (unsigned)getuid(),
           (unsigned long long)ns);
  ASSERT_STR_CONTAINS(name, want);
  ASSERT_EQ(strlen(name), strlen(want));
  muster_segment_name_t n;
  ASSERT_OK(muster_segment_name_parse(name, &n));
  ASSERT_EQ(n.uid, getuid());
  ASSERT_EQ(n.pidns, ns);
  ASSERT(!strcmp(n.job, "j1") && !strcmp(n.group, "potrs.17") && !strcmp(n.file, name));

  /* the longest name fits NAME_MAX and the declared maximum, and parses */
  char job[MUSTER_MAX_JOB + 1], group[MUSTER_MAX_NAME + 1];
  memset(job, 'j', MUSTER_MAX_JOB);
  job[MUSTER_MAX_JOB] = '\0';
  memset(group, '.', MUSTER_MAX_NAME);
  group[MUSTER_MAX_NAME - 1] = 'g';
  group[MUSTER_MAX_NAME] = '\0';
  ASSERT_OK(muster__segment_name_in(name, sizeof name, UINT64_MAX, job, group));
  ASSERT_LE(strlen(name), MUSTER_SEG_NAME_MAX);
  ASSERT_OK(muster_segment_name_parse(name, &n));
  ASSERT_EQ(n.pidns, UINT64_MAX);
  ASSERT(!strcmp(n.job, job) && !strcmp(n.group, group));
  ASSERT_OK(muster__segment_check_group(n.group));
  ASSERT_EQ(muster__segment_name_in(name, 40, ns, job, group), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "too long");
  ASSERT_EQ(muster__segment_name_in(name, sizeof name, 0, "j", "g"), MUSTER_EINVAL);

  /* another namespace is another name: the same job and group never meet */
  char other[MUSTER_SEG_NAME_MAX + 1];
  ASSERT_OK(muster__segment_name_in(other, sizeof other, ns + 1, "j1", "potrs.17"));
  ASSERT_OK(muster__segment_name(name, sizeof name, "j1", "potrs.17"));
  ASSERT(strcmp(name, other) != 0);

  const char *bad[] = {
      "", "muster", "muster.", "muster..", "muster.0", "muster.0.", "muster.0.1", "muster.0.1.",
      "muster.0.1.j", "muster.0.1.j.", "muster.0.1..g", "Muster.0.1.j.g", "muster.-1.1.j.g",
      "muster.+0.1.j.g", "muster.00.1.j.g", "muster.0.01.j.g", "muster.0.0.j.g",
      "muster.4294967296.1.j.g", "muster.0.18446744073709551616.j.g",
      "muster.0.99999999999999999999999.j.g", "muster.0.1 .j.g", "muster.0.1.j\x01.g",
      "muster.0.1.j k.g", "muster.0.1.j\xc3\xa9.g",
      "muster.0.job.grp",            /* the name of builds up to 5b153d5 */
      "muster.0.job.grp.1",          /* one of them with a dotted group */
      "muster.0.x1.j.g", "muster.0.1x.j.g", "muster.0.1.j/k.g", " muster.0.1.j.g"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(&n, 0x5a, sizeof n);
    if (muster_segment_name_parse(bad[i], &n) != MUSTER_EINVAL) {
      fprintf(stderr, "parsed \"%s\"\n", bad[i]);
      ASSERT(0);
    }
    ASSERT(n.uid == 0 && n.pidns == 0 && n.job[0] == '\0' && n.group[0] == '\0');
  }
  ASSERT_EQ(muster_segment_name_parse(NULL, &n), MUSTER_EINVAL);
  snprintf(name, sizeof name, "muster.0.1.%sj.g", job); /* a job too long */
  ASSERT_EQ(muster_segment_name_parse(name, &n), MUSTER_EINVAL);
  /* the edges that are fine */
  ASSERT_OK(muster_segment_name_parse("muster.0.1.j.g", &n));
  ASSERT_OK(muster_segment_name_parse("muster.4294967295.18446744073709551615.j.g..", &n));
  ASSERT(n.uid == UINT32_MAX && n.pidns == UINT64_MAX && !strcmp(n.group, "g.."));
  /* the group is the caller's to judge: a file of job j whatever its group */
  const char *odd[] = {"muster.0.1.j.g h", "muster.0.1.j.g\n== x\033[2J", "muster.0.1.j...",
                       "muster.0.1.j.caf\xc3\xa9", "muster.0.1.j.g/h"};
  for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
    ASSERT_OK(muster_segment_name_parse(odd[i], &n));
    ASSERT(!strcmp(n.job, "j") && !strcmp(n.group, odd[i] + strlen("muster.0.1.j.")));
    ASSERT_EQ(muster__segment_check_group(n.group), MUSTER_EINVAL);
  }
  return 0;
}
