/* tests/providers/tpdep.c - libtpdep.so, the library testprov_origin.so
 * links and finds through RPATH $ORIGIN/../deps (registry_origin_rpath). */
__attribute__((visibility("default"))) int tp_dep_value(void) { return 1; }
