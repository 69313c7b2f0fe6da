"""The ctypes binding of libtlsrt (runtime/tlsrt.h) and how it is found."""

import ctypes as C
import ctypes.util
import os
import threading

from ._errors import LibraryNotFoundError

LIB_NAME = "libtlsrt.so"

# tls_arg_kind
ARG_I32, ARG_U32, ARG_I64, ARG_U64, ARG_F32, ARG_PTR = range(6)
MAX_RANK, MAX_TMAPS, MAX_PARAMS, MAX_WORKSPACES = 5, 8, 32, 8


class ArgValue(C.Union):
    _fields_ = [("i32", C.c_int32), ("u32", C.c_uint32), ("i64", C.c_int64),
                ("u64", C.c_uint64), ("f32", C.c_float), ("ptr", C.c_uint64)]


class Arg(C.Structure):
    """tls_arg."""
    _fields_ = [("kind", C.c_int), ("v", ArgValue)]


class TuneOptions(C.Structure):
    """tls_autotune_options."""
    _fields_ = [("reps", C.c_int), ("flush_bytes", C.c_size_t)]


class TmapParams(C.Structure):
    """tls_tmap_params."""
    _fields_ = [("dtype", C.c_int), ("elem_bytes", C.c_int), ("rank", C.c_int),
                ("address", C.c_uint64), ("dims", C.c_uint64 * MAX_RANK),
                ("strides", C.c_uint64 * (MAX_RANK - 1)), ("box", C.c_uint32 * MAX_RANK),
                ("swizzle", C.c_int)]


class WorkspacePlan(C.Structure):
    """tls_workspace_plan."""
    _fields_ = [("bytes", C.c_uint64), ("offset", C.c_uint64), ("clean", C.c_int)]


class LaunchPlanC(C.Structure):
    """tls_launch_plan."""
    _fields_ = [("grid", C.c_uint32 * 3), ("block", C.c_uint32), ("smem", C.c_uint32),
                ("num_tmaps", C.c_int), ("tmaps", TmapParams * MAX_TMAPS),
                ("cluster", C.c_uint32 * 3), ("num_workspaces", C.c_int),
                ("workspaces", WorkspacePlan * MAX_WORKSPACES),
                ("workspace_bytes", C.c_uint64), ("workspace_clean_bytes", C.c_uint64)]


_vp, _cp, _i, _u64, _sz = C.c_void_p, C.c_char_p, C.c_int, C.c_uint64, C.c_size_t
_SIGNATURES = {
    "tls_error_string": (_cp, [_i]),
    "tls_init": (_i, [_i, C.POINTER(_vp)]),
    "tls_init_offline": (_i, [C.POINTER(_vp)]),
    "tls_context_free": (None, [_vp]),
    "tls_last_error": (_cp, [_vp]),
    "tls_context_online": (_i, [_vp]),
    "tls_context_arch": (_cp, [_vp]),
    "tls_context_device_name": (_cp, [_vp]),
    "tls_synchronize": (_i, [_vp]),
    "tls_stream_wait": (_i, [_vp, _vp, _vp]),
    "tls_mem_register": (_i, [_vp, _u64, _sz]),
    "tls_mem_unregister": (None, [_vp, _u64]),
    "tls_module_load_file": (_i, [_vp, _cp, C.POINTER(_vp)]),
    "tls_module_load_string": (_i, [_vp, _cp, _cp, C.POINTER(_vp)]),
    "tls_module_free": (None, [_vp]),
    "tls_module_compiled_by": (_cp, [_vp]),
    "tls_module_num_kernels": (_i, [_vp]),
    "tls_module_kernel": (_vp, [_vp, _i]),
    "tls_kernel_find": (_vp, [_vp, _cp]),
    "tls_kernel_find_config": (_vp, [_vp, _cp, _cp]),
    "tls_kernel_name": (_cp, [_vp]),
    "tls_kernel_script": (_cp, [_vp]),
    "tls_kernel_config": (_cp, [_vp]),
    "tls_kernel_fixed": (_cp, [_vp]),
    "tls_kernel_block": (_i, [_vp]),
    "tls_kernel_smem": (_i, [_vp]),
    "tls_kernel_num_params": (_i, [_vp]),
    "tls_kernel_param_name": (_cp, [_vp, _i]),
    "tls_kernel_param_type": (_cp, [_vp, _i]),
    "tls_kernel_num_tmaps": (_i, [_vp]),
    "tls_kernel_param_tmap": (_i, [_vp, _i]),
    "tls_kernel_num_workspaces": (_i, [_vp]),
    "tls_kernel_workspace": (_cp, [_vp, _i]),
    "tls_kernel_resolve": (_vp, [_vp, C.POINTER(Arg), _i]),
    "tls_prepare_launch": (_i, [_vp, C.POINTER(Arg), _i, C.POINTER(LaunchPlanC)]),
    "tls_launch": (_i, [_vp, C.POINTER(Arg), _i, _vp]),
    "tls_autotune": (_i, [_vp, _cp, C.POINTER(Arg), _i, _vp, _i, C.POINTER(_vp),
                          C.POINTER(C.c_float), C.POINTER(C.c_float)]),
    "tls_autotune_ex": (_i, [_vp, _cp, C.POINTER(Arg), _i, _vp, C.POINTER(TuneOptions),
                             C.POINTER(_vp), C.POINTER(C.c_float), C.POINTER(C.c_float)]),
}


def _package_dir():
    return os.path.dirname(os.path.abspath(__file__))


def _build_roots():
    """Folders whose build/ may hold a CMake build of tlsc: the source tree
    this package sits in (python/tlsc/ -> the repository), then the working
    directory."""
    roots = []
    repo = os.path.dirname(os.path.dirname(_package_dir()))
    if os.path.isfile(os.path.join(repo, "runtime", "tlsrt.h")):
        roots.append(repo)
    cwd = os.getcwd()
    if cwd not in roots:
        roots.append(cwd)
    return roots


def library_candidates(lib=None):
    """Where libtlsrt.so is looked for, in order: ``lib`` (an explicit path),
    ``$TLSC_LIB``, the copy bundled in the package (``tlsc/_lib``), the CMake
    build folder (``build/runtime/libtlsrt.so`` of the source tree, then of
    the working directory), then the system's (an installed tlsc: ``ldconfig``
    or ``LD_LIBRARY_PATH``)."""
    if lib:
        return [os.fspath(lib)]
    out = []
    env = os.environ.get("TLSC_LIB")
    if env:
        return [env]
    out.append(os.path.join(_package_dir(), "_lib", LIB_NAME))
    for root in _build_roots():
        out.append(os.path.join(root, "build", "runtime", LIB_NAME))
    return out


def find_library(lib=None):
    """The path of the libtlsrt.so that :func:`load` uses (see
    :func:`library_candidates`); raises LibraryNotFoundError if none exists."""
    cands = library_candidates(lib)
    for path in cands:
        if os.path.isfile(path):
            return os.path.abspath(path)
    if not lib and not os.environ.get("TLSC_LIB"):
        system = ctypes.util.find_library("tlsrt")
        if system:
            return system
    raise LibraryNotFoundError(
        "libtlsrt.so not found; looked at " + ", ".join(cands) +
        (" and the system's" if not lib and not os.environ.get("TLSC_LIB") else "") +
        " (build it: cmake --build build --target tlsrt_shared; or set TLSC_LIB,"
        " or pass lib=PATH, or copy it into the package's tlsc/_lib/)")


_LIBS = {}
_LIBS_LOCK = threading.Lock()


def open_library(lib=None):
    """The loaded libtlsrt (a ctypes.CDLL with its signatures set), one per
    path per process."""
    path = find_library(lib)
    key = os.path.realpath(path) if os.path.sep in path else path
    with _LIBS_LOCK:
        cdll = _LIBS.get(key)
        if cdll is not None:
            return cdll
        try:
            cdll = C.CDLL(path)
        except OSError as err:
            raise LibraryNotFoundError(f"cannot open {path}: {err}") from err
        missing = []
        for name, (res, args) in _SIGNATURES.items():
            try:
                fn = getattr(cdll, name)
            except AttributeError:
                missing.append(name)
                continue
            fn.restype, fn.argtypes = res, args
        if missing:
            raise LibraryNotFoundError(
                f"{path} is not a libtlsrt this package knows: it lacks {', '.join(missing)}")
        cdll._tlsc_path = path
        _LIBS[key] = cdll
        return cdll
