"""Drop-in modules for code written against jaxmg: `v0` for jaxmg 0.0.x,
`v1` for jaxmg 1.4.x.  Change the import and nothing else:

    import muster_jax.jaxmg.v0 as jaxmg     # was: import jaxmg  (0.0.x)
    import muster_jax.jaxmg.v1 as jaxmg     # was: import jaxmg  (1.4.x)

docs/jax-jaxmg.md lists where muster differs on purpose (exceptions instead of
NaN, T_A a hint, no buffers donated).
"""
