/*
 * runtime/base/atomics.h - the one set of atomic shorthands for words other
 * threads or processes read (the segment's header, slots and status, the
 * launcher's fields): relaxed and acquire loads, relaxed and release stores.
 * One home, as libuv keeps one: a second set drifts (which order is meant).
 */
#ifndef MUSTER_ATOMICS_H
#define MUSTER_ATOMICS_H

#define LD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define LDA(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define STR(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

#endif
