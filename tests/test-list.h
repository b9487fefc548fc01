/*
 * tests/test-list.h - every test, by module.  Each list-*.h holds lines
 *     TEST_ENTRY(name, timeout_seconds)
 * for the tests of one module; add a test there and define it with
 * TEST_IMPL(name) in any .c file under tests/unit, tests/integration or
 * tests/fault.
 */
#include "list-core.h"      /* errors, segment, barrier, group, faults, soak */
#include "list-tools.h"     /* shmdump, muster rendezvous                    */
#include "list-layout.h"    /* block-cyclic layout, lapack provider          */
#include "list-solve.h"     /* registry, collective solve, muster solve      */
#include "list-devices.h"   /* run_on_devices, cusolvermg host-side logic     */
#include "list-mp.h"        /* cusolvermp host-side logic                     */
#include "list-examples.h"  /* the compiled examples of docs/examples         */
