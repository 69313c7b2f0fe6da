"""tlsc.compile: .tls scripts to PTX through the tlsc binary, cached."""

import hashlib
import os
import shutil
import subprocess
import tempfile
import threading

from ._errors import CompileError, ERR_COMPILE, FileError, LibraryNotFoundError

_BINARY_IDS = {}
_BINARY_LOCK = threading.Lock()


def find_tlsc(tlsc=None):
    """The tlsc compiler: ``tlsc`` (an explicit path), ``$TLSC``, ``tlsc`` on
    PATH, then a CMake build folder: the one ``$TLSC_LIB`` (libtlsrt) comes
    from, then ``build/driver/tlsc`` of the source tree this package sits
    in and of the working directory."""
    if tlsc:
        return os.fspath(tlsc)
    env = os.environ.get("TLSC")
    if env:
        return env
    found = shutil.which("tlsc")
    if found:
        return found
    from ._capi import _build_roots
    tried = []
    candidates = [os.path.join(root, "build", "driver", "tlsc") for root in _build_roots()]
    lib = os.environ.get("TLSC_LIB")
    if lib:  # the compiler of the build folder that libtlsrt comes from
        build = os.path.dirname(os.path.dirname(os.path.abspath(lib)))
        candidates.insert(0, os.path.join(build, "driver", "tlsc"))
    for path in candidates:
        tried.append(path)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise LibraryNotFoundError(
        "the tlsc compiler was not found: set TLSC, put it on PATH, or build it "
        f"(cmake --build build --target tlsc); looked at {', '.join(tried)}")


def _binary_id(path):
    """The identity of a compiler binary: a hash of its bytes (cached by
    path, size and modification time)."""
    st = os.stat(path)
    key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
    with _BINARY_LOCK:
        ident = _BINARY_IDS.get(key)
        if ident is None:
            h = hashlib.sha256()
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            ident = _BINARY_IDS[key] = h.hexdigest()
    return ident


def cache_dir():
    """Where compiled PTX is kept: ``$TLSC_CACHE``, else ``~/.cache/tlsc/ptx``
    (``$XDG_CACHE_HOME/tlsc/ptx`` when that is set)."""
    env = os.environ.get("TLSC_CACHE")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tlsc", "ptx")


def _pairs(option, values):
    if not values:
        return []
    out = []
    for key, value in sorted(values.items()):
        if isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        out += [option, f"{key}={value}"]
    return out


def compile(source, defines=None, out=None, specialize=None, options=(), tlsc=None,
            cache=True):
    """Compiles a ``.tls`` script to PTX with the tlsc binary and returns the
    PTX path.

    ``defines``: ``{name: value}`` for ``-D`` (an autotune name or an ``int``
    parameter fixed at compile time). ``specialize``: ``{name: value or
    [values]}`` for ``--specialize``. ``options``: more command-line words.
    ``out``: where to write the PTX (also kept in the cache); default: the
    cached file itself. The cache key is a hash of the script's text, the
    options and the compiler binary's bytes, so a changed script or a
    rebuilt tlsc compiles again; ``cache=False`` always compiles. Raises
    CompileError with tlsc's diagnostics when it refuses the script.
    """
    source = os.fspath(source)
    try:
        with open(source, "rb") as f:
            text = f.read()
    except OSError as err:
        raise FileError(f"{source}: {err.strerror or err}") from err
    binary = find_tlsc(tlsc)
    args = _pairs("-D", defines) + _pairs("--specialize", specialize) + list(options)
    h = hashlib.sha256()
    for part in (text, "\0".join(args).encode(), _binary_id(binary).encode()):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    digest = h.hexdigest()[:32]
    stem = os.path.splitext(os.path.basename(source))[0]
    folder = cache_dir()
    cached = os.path.join(folder, f"{stem}-{digest}.ptx")
    if not (cache and os.path.isfile(cached)):
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{stem}-", suffix=".ptx", dir=folder)
        os.close(fd)
        try:
            proc = subprocess.run([binary, *args, source, "-o", tmp], capture_output=True,
                                  text=True, errors="replace")
            if proc.returncode != 0:
                diag = (proc.stderr or proc.stdout).strip()
                how = (f"{binary} was killed by signal {-proc.returncode}"
                       if proc.returncode < 0 else f"{binary} exited with status "
                       f"{proc.returncode}")
                raise CompileError(diag or how,
                                   ERR_COMPILE, diagnostics=proc.stderr,
                                   returncode=proc.returncode)
            os.replace(tmp, cached)  # atomic: readers never see a partial file
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    if out is None:
        return cached
    out = os.fspath(out)
    shutil.copyfile(cached, out)
    return out
