"""providers/cusolvermp/fetch_header.py - cusolverMp.h for the build, from
NVIDIA's PyPI wheel, never from the repository.

    python3 providers/cusolvermp/fetch_header.py [CACHE]   (default build/deps)

prints the folder holding cusolverMp.h, or says why there is none and exits
1.  providers/cusolvermp/SConscript calls fetch() the same way.

The wheel nvidia-cusolvermp-cu13==WHEEL_VERSION is downloaded once with
`pip download --no-deps` into CACHE/wheels (kept: tests/gpu/run-mp-tests.sh
installs it on the GPU machine), its header is checked against the
sha256 in the wheel's RECORD and extracted to
CACHE/cusolvermp-WHEEL_VERSION/include/cusolverMp.h.  Offline, the build
skips the provider with the reason; a failed download is not retried for
RETRY_S seconds (remove CACHE/cusolvermp-*.failed to retry now).
"""
import base64
import glob
import hashlib
import os
import subprocess
import sys
import time
import zipfile

PACKAGE = 'nvidia-cusolvermp-cu13'
WHEEL_VERSION = '0.8.0.3126'
MEMBER = 'nvidia/cu13/include/cusolverMp.h'
RETRY_S = 600


def header_dir(cache):
    return os.path.join(cache, 'cusolvermp-' + WHEEL_VERSION, 'include')


def wheels(cache):
    pat = os.path.join(cache, 'wheels', PACKAGE.replace('-', '_') + '-' + WHEEL_VERSION + '-*.whl')
    return sorted(glob.glob(pat))


def _pips():
    """pip commands to try: this Python's, then the ones on PATH."""
    yield [sys.executable, '-m', 'pip']
    yield ['python3', '-m', 'pip']
    yield ['pip3']


def _download(cache):
    dest = os.path.join(cache, 'wheels')
    os.makedirs(dest, exist_ok=True)
    last = 'no pip found'
    for pip in _pips():
        cmd = pip + ['download', '--no-deps', '--only-binary=:all:', '--disable-pip-version-check',
                     '--retries', '1', '--timeout', '20', '-d', dest, PACKAGE + '==' + WHEEL_VERSION]
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600,
                               universal_newlines=True)
        except (OSError, subprocess.SubprocessError) as e:
            last = '%s: %s' % (' '.join(pip), e)
            continue
        if r.returncode == 0 and wheels(cache):
            return None
        lines = [l for l in r.stdout.splitlines() if l.strip()]
        last = '%s download failed: %s' % (' '.join(pip), lines[-1] if lines else 'exit %d' % r.returncode)
        if 'No module named pip' not in r.stdout:
            break
    return last


def _extract(whl, out):
    with zipfile.ZipFile(whl) as z:
        data = z.read(MEMBER)
        record = z.read([n for n in z.namelist() if n.endswith('.dist-info/RECORD')][0]).decode()
    want = [l.split(',')[1] for l in record.splitlines() if l.startswith(MEMBER + ',')]
    got = 'sha256=' + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip('=')
    if not want or want[0] != got:
        return '%s: %s does not match the wheel\'s RECORD' % (whl, MEMBER)
    os.makedirs(out, exist_ok=True)
    tmp = os.path.join(out, '.cusolverMp.h.%d' % os.getpid())
    with open(tmp, 'wb') as f:
        f.write(data)
    os.replace(tmp, os.path.join(out, 'cusolverMp.h'))
    return None


def fetch(cache):
    """(folder holding cusolverMp.h, None) or (None, why)."""
    out = header_dir(cache)
    if os.path.exists(os.path.join(out, 'cusolverMp.h')):
        return out, None
    failed = os.path.join(cache, 'cusolvermp-%s.failed' % WHEEL_VERSION)
    if not wheels(cache) and os.path.exists(failed) and time.time() - os.path.getmtime(failed) < RETRY_S:
        with open(failed) as f:
            return None, '%s (not retried for %d s: remove %s to retry now)' % (f.read().strip(), RETRY_S, failed)
    why = None if wheels(cache) else _download(cache)
    if why is None:
        why = _extract(wheels(cache)[-1], out)
    if why is None:
        if os.path.exists(failed):
            os.remove(failed)
        return out, None
    os.makedirs(cache, exist_ok=True)
    with open(failed, 'w') as f:
        f.write('cannot get cusolverMp.h from %s==%s: %s\n' % (PACKAGE, WHEEL_VERSION, why))
    return None, 'cannot get cusolverMp.h from %s==%s: %s' % (PACKAGE, WHEEL_VERSION, why)


if __name__ == '__main__':
    d, why = fetch(sys.argv[1] if len(sys.argv) > 1 else os.path.join('build', 'deps'))
    if d is None:
        sys.stderr.write('cusolvermp: %s\n' % why)
        sys.exit(1)
    print(d)
