"""Rules that have one home stay there: a second definition of the default
tile, of the gels rank threshold (or getrs's singularity threshold), of a
provider's dtype mask, of a monotonic clock in seconds or of a message
appender in the product's C code fails here, naming the file
and line.  Cheap (reads the sources); the pytest stage of tests/run-all.sh
runs it.  The homes: muster_layout_default_tile (include/muster/layout.h),
muster__rank_floor (providers/common/rank.h), muster__lu_floor
(providers/common/singular.h), MUSTER_ALL_DTYPES (include/muster/types.h),
muster_clock_s (include/muster/clock.h), muster__append
(include/muster/append.h)."""
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[3]
PRODUCT = ("include", "runtime", "providers", "tools", "adapters")


def code_lines():
    """(path, line number, line) of the product's C/CUDA code, comments and
    string literals out."""
    for folder in PRODUCT:
        for p in sorted((REPO / folder).rglob("*")):
            if p.suffix not in (".c", ".h", ".cu", ".cc") or "/test" in str(p.relative_to(REPO)):
                continue
            text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), p.read_text(errors="replace"),
                          flags=re.S)
            for i, line in enumerate(text.splitlines(), 1):
                line = re.sub(r'"(?:\\.|[^"\\])*"', '""', re.sub(r"//.*", "", line))  # words, not code
                yield p.relative_to(REPO).as_posix(), i, line


def offenders(pattern, home, window=0):
    """Lines matching pattern outside home; with window, pattern is two
    regexes that must both match within window lines of each other."""
    found, lines = [], list(code_lines())
    for k, (path, i, line) in enumerate(lines):
        if path in home:
            continue
        if window:
            near = [l for p, _, l in lines[max(0, k - window):k + window + 1] if p == path]
            if re.search(pattern[0], line) and any(re.search(pattern[1], l) for l in near):
                found.append(f"{path}:{i}: {line.strip()}")
        elif re.search(pattern, line):
            found.append(f"{path}:{i}: {line.strip()}")
    return found


def test_default_tile_has_one_home():
    """No loop of its own over tiles up to 256: the runtime and the lapack
    provider call muster_layout_default_tile."""
    bad = offenders((r"\b256\b|DEFAULT_TILE_MAX", r"muster_layout_tile_(valid|below|above)"),
                    {"include/muster/layout.h"}, window=3)
    assert not bad, "a second default-tile rule:\n" + "\n".join(bad)
    for caller in ("runtime/solve/leader.c", "providers/lapack/lapack.c"):
        assert "muster_layout_default_tile(" in (REPO / caller).read_text(), caller


def test_rank_and_pivot_thresholds_have_one_home():
    """'... * eps * ...' (m eps max|R(i,i)|, 2 n eps max|U(i,k)|) is computed
    in providers/common only; every gels provider calls muster__rank_floor
    or muster__rank_deficient."""
    home = {"providers/common/rank.h", "providers/common/singular.h"}
    bad = offenders(r"\*\s*(eps|[A-Z]+_EPSILON)\s*\*", home)
    assert not bad, "a second threshold:\n" + "\n".join(bad)
    for prov in ("lapack", "scalapack", "cusolverdn", "cusolvermp"):
        text = "".join(p.read_text() for p in (REPO / "providers" / prov).glob("*.c"))
        assert re.search(r"muster__rank_(floor|deficient)\(", text), f"{prov} judges gels's R without rank.h"


def test_element_magnitude_has_one_home():
    """|x| of a complex element (hypot of its parts) is muster__abs_at's."""
    bad = [o for o in offenders(r"\bhypot\(", {"providers/common/rank.h"}) if not o.split(":")[0].endswith(".cu")]
    assert not bad, "a second element magnitude:\n" + "\n".join(bad)


def test_dtype_masks_are_generated():
    """No provider spells out the dtype list: MUSTER_ALL_DTYPES."""
    bad = offenders(r"1u?\s*<<\s*MUSTER_F32\)?\s*\|\s*\(?1u?\s*<<\s*MUSTER_F64", set())
    assert not bad, "a dtype mask written by hand:\n" + "\n".join(bad)


def test_monotonic_seconds_have_one_home():
    """Seconds as a double from CLOCK_MONOTONIC are muster_clock_s's
    (include/muster/clock.h): no file writes its own now_s.  (The runtime's
    deadlines and nanosecond stamps read the clock as timespecs.)"""
    bad = offenders((r"clock_gettime\(CLOCK_MONOTONIC", r"1e-9|1\.0e-9|/\s*1e9"), {"include/muster/clock.h"},
                    window=2)
    assert not bad, "a second monotonic clock in seconds:\n" + "\n".join(bad)


def test_message_append_has_one_home():
    """Text added to a message in a bounded buffer (strlen, then
    vsnprintf after it unless full) is muster__append's
    (include/muster/append.h): the runtime and the providers call it."""
    bad = offenders(r"\bif\s*\(\s*\w+\s*\+\s*1\s*>=\s*[\w>.-]+\s*\)\s*return\b", {"include/muster/append.h"})
    assert not bad, "a second message appender:\n" + "\n".join(bad)
    for caller in ("runtime/registry/cost_lookup.c", "providers/cusolvermp/libs.c", "providers/cudacommon/err.c"):
        assert re.search(r"muster__v?append\(", (REPO / caller).read_text()), caller


def test_the_scan_sees_code():
    """The scans above read what they should (a broken glob passes nothing)."""
    lines = list(code_lines())
    assert any(p == "providers/common/rank.h" and "eps" in l for p, _, l in lines)
    assert offenders(r"muster_layout_default_tile\(", set())  # its callers
