/*
 * tests/test-list.h - every test, by module.  Each list-*.h holds lines
 *     TEST_ENTRY(name, timeout_seconds)
 * for the tests of one module; add a test there and define it with
 * TEST_IMPL(name) in any .c file under tests/.
 */
#include "list-core.h"      /* segment, barrier, group, errors, shmdump, cli */
#include "list-solve.h"     /* layout, registry, solve, lapack provider       */
