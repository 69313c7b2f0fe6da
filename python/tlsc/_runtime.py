"""Contexts, modules and kernels over libtlsrt."""

import ctypes as C
import operator
import os
import sys
import threading

from . import _capi
from ._capi import ARG_F32, ARG_I32, ARG_I64, ARG_PTR, ARG_U32, ARG_U64, Arg
from ._errors import (ERR_ARG_COUNT, ERR_ARG_TYPE, ERR_ARG_VALUE, ERR_NO_DEVICE, ERR_NO_DRIVER,
                      ArgCountError, ArgTypeError, ArgValueError, Error, NotFoundError,
                      error_for)

# ------------------------------------------------------------------ dtypes

# Element types of `ptr DTYPE` parameters (docs/format.md) by the names
# torch and __cuda_array_interface__ give them.
_TORCH_DTYPES = {
    "torch.float16": "f16", "torch.half": "f16", "torch.bfloat16": "bf16",
    "torch.float32": "f32", "torch.float": "f32", "torch.float64": "f64",
    "torch.double": "f64", "torch.int8": "i8", "torch.uint8": "u8", "torch.int16": "i16",
    "torch.uint16": "u16", "torch.int32": "i32", "torch.uint32": "u32",
    "torch.int64": "i64", "torch.uint64": "u64", "torch.bool": "u8",
    "torch.float8_e4m3fn": "f8e4m3", "torch.float8_e5m2": "f8e5m2",
}
_TYPESTRS = {
    "f2": "f16", "f4": "f32", "f8": "f64", "i1": "i8", "u1": "u8", "b1": "u8",
    "i2": "i16", "u2": "u16", "i4": "i32", "u4": "u32", "i8": "i64", "u8": "u64",
}
_ITEMSIZE = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "u8": 1, "i16": 2, "u16": 2,
             "i32": 4, "u32": 4, "i64": 8, "u64": 8, "f8e4m3": 1, "f8e5m2": 1}
_DLPACK_CUDA = (2, 13)  # kDLCUDA, kDLCUDAManaged


def _typestr_dtype(typestr):
    """'<f2' -> 'f16'; None for types without a name here (bf16 and others
    that __cuda_array_interface__ cannot spell)."""
    if len(typestr) < 3 or typestr[0] == ">":
        return None
    return _TYPESTRS.get(typestr[1:])


def _torch():
    """torch when the program has imported it (never imported here: a
    tensor argument means it is)."""
    return sys.modules.get("torch")


def _dense_strides(shape, itemsize):
    out, acc = [], itemsize
    for dim in reversed(shape):
        out.append(acc)
        acc *= max(int(dim), 1)
    return tuple(reversed(out))


class _Pointer:
    """What a pointer argument carries: its address and the shape-free
    facts checked before libtlsrt sees it. ``what`` (how a message names
    the argument) is a string, or for a torch tensor the tensor itself,
    described only when a message needs it: formatting a dtype and a device
    costs more than the rest of a launch's checks."""
    __slots__ = ("ptr", "dtype", "cuda", "device", "contiguous", "nbytes", "keep", "_what",
                 "array", "stream")

    def __init__(self, ptr, dtype=None, cuda=True, device=None, contiguous=True, nbytes=0,
                 keep=None, what="", array=False):
        self.ptr, self.dtype, self.cuda, self.device = ptr, dtype, cuda, device
        self.contiguous, self.nbytes, self.keep, self._what = contiguous, nbytes, keep, what
        self.array = array  # a tensor or a CUDA array (it has an element type)
        self.stream = None  # the stream a __cuda_array_interface__ producer names

    @property
    def what(self):
        w = self._what
        if isinstance(w, str):
            return w
        return f"a tensor of {w.dtype} on {w.device}"


# torch.dtype -> the package's element-type name, filled as dtypes are met
# (a dict lookup by the dtype object instead of formatting it every launch)
_TORCH_DTYPE_OF = {}


def _torch_dtype(dtype):
    dt = _TORCH_DTYPE_OF.get(dtype, _MISSING_DT)
    if dt is _MISSING_DT:
        dt = _TORCH_DTYPE_OF[dtype] = _TORCH_DTYPES.get(str(dtype))
    return dt


_MISSING_DT = object()


def _pointer(value):
    """A _Pointer for a tensor-like argument, or None when it is not one:
    a torch tensor, an object with __cuda_array_interface__, an object with
    __dlpack__ (through torch.from_dlpack), an int (a raw device address,
    unchecked) or None (a null pointer, which libtlsrt refuses)."""
    if value is None:
        return _Pointer(0, what="None")
    if isinstance(value, int) and not isinstance(value, bool):
        return _Pointer(value, what="an int address")
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        contiguous = value.is_contiguous()
        cuda = value.is_cuda
        return _Pointer(value.data_ptr(), _torch_dtype(value.dtype), cuda,
                        value.get_device() if cuda else None, contiguous,
                        value.nbytes if contiguous else 0, what=value, array=True)
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        ptr = int(cai["data"][0] or 0)
        typestr = cai.get("typestr", "")
        shape = tuple(int(d) for d in cai.get("shape", ()))
        dt = _typestr_dtype(typestr)
        itemsize = int(typestr[2:]) if typestr[2:].isdigit() else _ITEMSIZE.get(dt, 1)
        strides = cai.get("strides")
        dense = _dense_strides(shape, itemsize)
        contiguous = strides is None or all(
            s == d for s, d, n in zip(strides, dense, shape) if n > 1)
        numel = 1
        for d in shape:
            numel *= d
        p = _Pointer(ptr, dt, True, None, contiguous,
                     numel * itemsize if contiguous else 0, array=True,
                     what=f"a CUDA array of {typestr} {list(shape)}" +
                     ("" if strides is None else f" strides {list(strides)}"))
        # version 3: work on "stream" (an int handle; 1 and 2 the legacy and
        # per-thread default streams) may still be writing the array
        p.stream = cai.get("stream")
        return p
    if hasattr(value, "__dlpack__"):
        dev = getattr(value, "__dlpack_device__", None)
        if dev is not None and dev()[0] not in _DLPACK_CUDA:
            return _Pointer(0, cuda=False, what=f"a DLPack array on device type {dev()[0]}")
        try:
            import torch as torch_mod  # DLPack goes through torch
        except ImportError:
            raise ArgTypeError(
                "a DLPack-only argument needs torch (torch.from_dlpack) to be read; pass a "
                "torch tensor or an object with __cuda_array_interface__", ERR_ARG_TYPE) from None
        tensor = torch_mod.from_dlpack(value)
        p = _pointer(tensor)
        p.keep = tensor
        return p
    return None


def _ranged(value, lo, hi, name):
    v = operator.index(value)
    if not lo <= v <= hi:
        raise OverflowError(f"{v} is out of range for {name}")
    return v


# Scalar parameter types: (tls_arg_kind, the union member, a converter).
_SCALARS = {
    "i32": (ARG_I32, "i32", lambda v: _ranged(v, -(1 << 31), (1 << 31) - 1, "i32")),
    "u32": (ARG_U32, "u32", lambda v: _ranged(v, 0, (1 << 32) - 1, "u32")),
    "i64": (ARG_I64, "i64", lambda v: _ranged(v, -(1 << 63), (1 << 63) - 1, "i64")),
    "u64": (ARG_U64, "u64", lambda v: _ranged(v, 0, (1 << 64) - 1, "u64")),
    "f32": (ARG_F32, "f32", float),
}


# ------------------------------------------------------------------ context


def _default_device():
    torch = _torch()
    if torch is not None:
        try:
            if torch.cuda.is_available():
                return torch.cuda.current_device()
        except Exception:  # noqa: BLE001 - no usable CUDA in torch: device 0
            pass
    return 0


class Context:
    """A libtlsrt context (``tls_context``): the CUDA primary context of one
    GPU, or an offline one (no GPU: modules load and launches are checked by
    ``tls_prepare_launch``, but ``tls_launch`` answers TLS_ERR_NO_DEVICE).

    Shared per (library, device, offline) through :func:`context`. libtlsrt
    contexts are not thread-safe; calls through this object hold its lock.
    """

    def __init__(self, lib=None, device=None, offline=None):
        self.lib = _capi.open_library(lib)
        self.device = _default_device() if device is None else int(device)
        self.lock = threading.RLock()
        self.init_error = None
        handle = C.c_void_p()
        if offline:
            st = self.lib.tls_init_offline(C.byref(handle))
            if st:
                raise error_for(st, "tls_init_offline failed")
        else:
            st = self.lib.tls_init(self.device, C.byref(handle))
            if st:
                msg = (self.lib.tls_last_error(handle) or b"").decode(errors="replace")
                if handle.value:
                    self.lib.tls_context_free(handle)
                if offline is not None or st not in (ERR_NO_DRIVER, ERR_NO_DEVICE):
                    raise error_for(st, msg)
                # No GPU here: an offline context, which says why at launch.
                self.init_error = msg
                handle = C.c_void_p()
                st = self.lib.tls_init_offline(C.byref(handle))
                if st:
                    raise error_for(st, "tls_init_offline failed")
        self.handle = handle

    @property
    def online(self):
        """Whether launches run (a GPU and its driver were found)."""
        return bool(self.lib.tls_context_online(self.handle))

    @property
    def arch(self):
        """'sm_90a' for a 9.0 device, '' offline."""
        return self.lib.tls_context_arch(self.handle).decode()

    @property
    def device_name(self):
        return (self.lib.tls_context_device_name(self.handle) or b"").decode()

    def last_error(self):
        """libtlsrt's message for the last refusal (tls_last_error)."""
        return (self.lib.tls_last_error(self.handle) or b"").decode(errors="replace")

    def error(self, status):
        """The exception for a status returned by a call on this context."""
        msg = self.last_error()
        if status == ERR_NO_DEVICE and self.init_error:
            msg += f" (tls_init: {self.init_error})"
        return error_for(status, msg)

    def check(self, status):
        if status:
            raise self.error(status)

    def synchronize(self):
        """Waits for all work on the device (tls_synchronize)."""
        with self.lock:
            self.check(self.lib.tls_synchronize(self.handle))

    def __repr__(self):
        state = f"online {self.device_name} ({self.arch})" if self.online else "offline"
        return f"<tlsc.Context device={self.device} {state}>"


_CONTEXTS = {}
_CONTEXTS_LOCK = threading.Lock()


def context(device=None, offline=None, lib=None):
    """The shared :class:`Context` for a device.

    ``offline``: True for a context without a GPU, False to require one
    (raises NoDriverError / NoDeviceError), None (default) to use the GPU
    when there is one and fall back to an offline context otherwise
    (``TLSC_OFFLINE=1`` in the environment makes None mean True).
    ``device``: the GPU index (default: torch's current device when torch
    is imported, else 0). ``lib``: the libtlsrt.so path (find_library).
    """
    if offline is None and os.environ.get("TLSC_OFFLINE", "") not in ("", "0"):
        offline = True
    cdll = _capi.open_library(lib)
    dev = _default_device() if device is None else int(device)
    key = (cdll._tlsc_path, dev, offline)
    with _CONTEXTS_LOCK:
        ctx = _CONTEXTS.get(key)
        if ctx is None:
            ctx = _CONTEXTS[key] = Context(cdll._tlsc_path, dev, offline)
        return ctx


# ------------------------------------------------------------------ metadata


def _config_dict(text):
    out = {}
    depth, cur, items = 0, "", []
    for ch in text:  # split on spaces outside brackets
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == " " and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    for item in items:
        if "=" in item:
            k, v = item.split("=", 1)
            try:
                v = int(v)
            except ValueError:
                pass
            out[k] = v
    return out


class Param:
    """One user parameter of an entry: ``name``, ``type`` as libtlsrt reports
    it (``'i32'``, ``'f32'``, ``'ptr f16'``), ``dtype`` (the element type of a
    pointer, else None), ``is_pointer``, ``tmap`` (whether it feeds a tensor
    map: a tensor passed there must be contiguous)."""
    __slots__ = ("index", "name", "type", "dtype", "is_pointer", "tmap", "scalar")

    def __init__(self, index, name, type_, tmap):
        self.index, self.name, self.type, self.tmap = index, name, type_, tmap
        parts = type_.split()
        self.is_pointer = parts[0] == "ptr"
        self.dtype = parts[1] if self.is_pointer and len(parts) > 1 else None
        self.scalar = None if self.is_pointer else _SCALARS.get(parts[0])

    def __repr__(self):
        return f"Param({self.name!r}, {self.type!r})"


class LaunchPlan:
    """A launch checked by ``tls_prepare_launch`` (no GPU needed): ``entry``
    (the name of the entry that runs: a specialised sibling when the
    arguments match one), ``grid``, ``block``, ``smem``, ``cluster``,
    ``tmaps`` (one dict per tensor map: ``address``, ``dtype`` (the
    CUtensorMapDataType value), ``elem_bytes``, ``dims`` and ``box``
    innermost first, ``strides`` in bytes, ``swizzle``), ``workspaces``
    (``bytes``, ``offset``, ``clean``), ``workspace_bytes``."""

    def __init__(self, entry, c):
        self.entry = entry
        self.grid = tuple(c.grid)
        self.block = c.block
        self.smem = c.smem
        self.cluster = tuple(c.cluster)
        self.tmaps = []
        for t in c.tmaps[:c.num_tmaps]:
            self.tmaps.append(dict(
                address=t.address, dtype=t.dtype, elem_bytes=t.elem_bytes,
                dims=tuple(t.dims[:t.rank]), strides=tuple(t.strides[:max(t.rank - 1, 0)]),
                box=tuple(t.box[:t.rank]), swizzle=t.swizzle))
        self.workspaces = [dict(bytes=w.bytes, offset=w.offset, clean=bool(w.clean))
                           for w in c.workspaces[:c.num_workspaces]]
        self.workspace_bytes = c.workspace_bytes
        self.workspace_clean_bytes = c.workspace_clean_bytes

    def __repr__(self):
        return (f"<LaunchPlan {self.entry} grid={self.grid} block={self.block} "
                f"smem={self.smem} tmaps={len(self.tmaps)}>")


def _stream_handle(stream, device):
    """The CUstream for a launch: ``stream`` (an int handle, or an object
    with ``cuda_stream``, as torch.cuda.Stream has), else torch's current
    stream when torch is imported, else the default stream."""
    if stream is not None:
        return int(getattr(stream, "cuda_stream", stream)) or None
    torch = _torch()
    if torch is not None and device is not None:
        try:
            # the raw handle without building a torch.cuda.Stream object
            # (a few microseconds a launch); the public call where it is absent
            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
            if raw is not None:
                return raw(device) or None
            return torch.cuda.current_stream(device).cuda_stream or None
        except Exception:  # noqa: BLE001 - torch without CUDA: the default stream
            return None
    return None


def _order_after(ctx, stream, producers):
    """Makes the work next queued on ``stream`` wait for what is queued on
    each producer's stream (``__cuda_array_interface__``'s "stream"), on
    the device, without blocking the host. Under the context's lock:
    libtlsrt records and waits on one event per context, which another
    thread's record in between would replace."""
    with ctx.lock:
        for producer in producers:
            if producer != (stream or 0):
                ctx.check(ctx.lib.tls_stream_wait(ctx.handle, stream, producer))


# ------------------------------------------------------------------ kernels


class Kernel:
    """One entry of a module (``tls_kernel``). Call it to launch:

        kernel(m, n, k, a, b, c)                  # positional
        kernel(m, n, k, a_ptr=a, b_ptr=b, c_ptr=c, stream=s)

    Pointer parameters take torch tensors, objects with
    ``__cuda_array_interface__`` or ``__dlpack__``, or ints (raw device
    addresses); scalars are converted by the parameter's type (``i32``,
    ``u32``, ``i64``, ``u64``: integers in range; ``f32``: numbers).
    Before libtlsrt checks the launch, each tensor's dtype is checked against
    the parameter's element type, its device must be CUDA (the context's
    GPU for a torch tensor), and a tensor feeding a tensor map must be
    contiguous; such a tensor's extent is also declared to libtlsrt for
    the launch (``tls_mem_register``) so that a map reaching past its end
    is refused (``check_bounds``, default True). Every refusal raises a
    :class:`tlsc.Error` subclass with libtlsrt's status and message.
    """

    def __init__(self, module, handle):
        lib = module.ctx.lib
        self.module = module
        self.handle = C.c_void_p(handle)
        self.name = lib.tls_kernel_name(handle).decode()
        self.script = lib.tls_kernel_script(handle).decode()
        self.config_text = lib.tls_kernel_config(handle).decode()
        self.config = _config_dict(self.config_text)
        self.fixed = _config_dict(lib.tls_kernel_fixed(handle).decode())
        self.block = lib.tls_kernel_block(handle)
        self.smem = lib.tls_kernel_smem(handle)
        self.num_tmaps = lib.tls_kernel_num_tmaps(handle)
        self.workspaces = [lib.tls_kernel_workspace(handle, i).decode()
                           for i in range(lib.tls_kernel_num_workspaces(handle))]
        self.params = []
        for i in range(lib.tls_kernel_num_params(handle)):
            name = lib.tls_kernel_param_name(handle, i).decode()
            type_ = lib.tls_kernel_param_type(handle, i).decode()
            self.params.append(Param(i, name, type_, lib.tls_kernel_param_tmap(handle, i) >= 0))
        self._index = {p.name: p.index for p in self.params}
        self.check_bounds = True

    @property
    def signature(self):
        """'m_size i32, n_size i32, ..., a_ptr ptr f16' (libtlsrt's spelling)."""
        return ", ".join(f"{p.name} {p.type}" for p in self.params)

    def __repr__(self):
        return f"<tlsc.Kernel {self.name}({self.signature})>"

    # -- arguments

    def _order(self, args, kwargs):
        """Positional and keyword arguments in parameter order. A wrong count
        with positional arguments only is left to libtlsrt, which refuses it
        with its own message."""
        if not kwargs:
            return list(args)
        nparams = len(self.params)
        if len(args) > nparams:
            raise ArgCountError(
                f"launch of '{self.name}' refused: it takes {nparams} arguments "
                f"({self.signature}), got {len(args) + len(kwargs)}", ERR_ARG_COUNT)
        values = list(args) + [_MISSING] * (nparams - len(args))
        for key, value in kwargs.items():
            i = self._index.get(key)
            if i is None:
                raise ArgCountError(
                    f"launch of '{self.name}' refused: no parameter named '{key}' "
                    f"({self.signature})", ERR_ARG_COUNT)
            if values[i] is not _MISSING:
                raise ArgCountError(
                    f"launch of '{self.name}' refused: argument {i} ({key}) given twice",
                    ERR_ARG_COUNT)
            values[i] = value
        missing = [p.name for p in self.params if values[p.index] is _MISSING]
        if missing:
            raise ArgCountError(
                f"launch of '{self.name}' refused: missing argument(s) {', '.join(missing)} "
                f"({self.signature})", ERR_ARG_COUNT)
        return values

    def _refuse(self, cls, status, i, name, why):
        raise cls(f"launch of '{self.name}' refused: argument {i} ({name}) {why}", status)

    def _convert(self, values):
        """(the tls_arg array, [(ptr, nbytes)] to declare for the launch,
        objects to keep alive, the streams a launch must wait for)."""
        n = len(values)
        arr = (Arg * n)()
        extents, keep, waits = [], [], []
        device = self.module.ctx.device if self.module.ctx.online else None
        for i, value in enumerate(values):
            # a wrong count: kinds by the values, and libtlsrt refuses the count
            param = self.params[i] if n == len(self.params) else None
            a = arr[i]
            if param is None:
                p = _pointer(value) if not isinstance(value, (int, float)) else None
                if p is not None:
                    a.kind, a.v.ptr = ARG_PTR, p.ptr
                elif isinstance(value, float):
                    a.kind, a.v.f32 = ARG_F32, value
                else:
                    a.kind, a.v.i64 = ARG_I64, int(value) if isinstance(value, int) else 0
                continue
            if param.is_pointer:
                p = _pointer(value)
                if p is None:
                    self._refuse(ArgTypeError, ERR_ARG_TYPE, i, param.name,
                                 f"must be {param.type} (a tensor, an object with "
                                 f"__cuda_array_interface__ or __dlpack__, or an int address), "
                                 f"got {type(value).__name__}")
                if not p.cuda:
                    self._refuse(ArgValueError, ERR_ARG_VALUE, i, param.name,
                                 f"is {p.what}, not on a CUDA device")
                if p.device is not None and device is not None and p.device != device:
                    self._refuse(ArgValueError, ERR_ARG_VALUE, i, param.name,
                                 f"is on cuda:{p.device} but the module is loaded on "
                                 f"cuda:{device}")
                # element types this package knows how to match; others pass
                known = param.dtype in _ITEMSIZE
                if known and p.dtype and p.dtype != param.dtype:
                    self._refuse(ArgTypeError, ERR_ARG_TYPE, i, param.name,
                                 f"must be {param.type}, got {p.what} (element type {p.dtype})")
                if known and p.dtype is None and p.array:
                    self._refuse(ArgTypeError, ERR_ARG_TYPE, i, param.name,
                                 f"must be {param.type}, got {p.what} (an element type this "
                                 f"package cannot match)")
                if param.tmap and not p.contiguous:
                    self._refuse(ArgValueError, ERR_ARG_VALUE, i, param.name,
                                 f"feeds a tensor map and must be contiguous, got {p.what}")
                if param.tmap and p.nbytes and p.ptr and self.check_bounds:
                    extents.append((p.ptr, p.nbytes))
                if p.keep is not None:
                    keep.append(p.keep)
                if p.stream is not None:
                    if p.stream == 0:  # the protocol forbids 0: it is ambiguous
                        self._refuse(ArgValueError, ERR_ARG_VALUE, i, param.name,
                                     f"is {p.what} whose __cuda_array_interface__ names "
                                     f"stream 0, which the protocol disallows")
                    waits.append(int(p.stream))
                a.kind, a.v.ptr = ARG_PTR, p.ptr
            elif param.scalar is not None:
                kind, member, conv = param.scalar
                if type(value) not in (int, float) and value is not None and \
                        _pointer(value) is not None:
                    self._refuse(ArgTypeError, ERR_ARG_TYPE, i, param.name,
                                 f"must be {param.type}, got a tensor-like "
                                 f"{type(value).__name__}")
                try:
                    v = conv(value)
                except OverflowError as err:
                    self._refuse(ArgValueError, ERR_ARG_VALUE, i, param.name, f"= {err}")
                except (TypeError, ValueError):
                    self._refuse(ArgTypeError, ERR_ARG_TYPE, i, param.name,
                                 f"must be {param.type}, got {type(value).__name__} {value!r}")
                a.kind = kind
                setattr(a.v, member, v)
            else:
                self._refuse(ArgTypeError, ERR_ARG_TYPE, i, param.name,
                             f"has type {param.type}, which this package cannot pass")
        return arr, extents, keep, waits

    def _with_extents(self, extents, fn):
        ctx = self.module.ctx
        lib = ctx.lib
        with ctx.lock:
            for ptr, nbytes in extents:
                lib.tls_mem_register(ctx.handle, ptr, nbytes)
            try:
                return fn()
            finally:
                for ptr, _ in extents:
                    lib.tls_mem_unregister(ctx.handle, ptr)

    def arguments(self, *args, **kwargs):
        """The tls_arg array these arguments make (ctypes), after the
        Python-side checks. For repeated launches: ``launch_raw``."""
        return self._convert(self._order(args, kwargs))[0]

    # -- launching

    def __call__(self, *args, stream=None, **kwargs):
        """Launches on ``stream`` (default: torch's current stream when torch
        is imported, else the default stream). Asynchronous."""
        arr, extents, keep, waits = self._convert(self._order(args, kwargs))
        ctx = self.module.ctx
        s = _stream_handle(stream, ctx.device if ctx.online else None)
        lib = ctx.lib
        _order_after(ctx, s, waits)
        if extents:
            def run():
                st = lib.tls_launch(self.handle, arr, len(arr), s)
                if st:
                    raise ctx.error(st)
            self._with_extents(extents, run)
        else:
            with ctx.lock:
                st = lib.tls_launch(self.handle, arr, len(arr), s)
                if st:
                    raise ctx.error(st)
        del keep

    launch = __call__

    def launch_raw(self, arr, stream=None):
        """Launches with a prepared ``arguments()`` array: no conversion, no
        Python-side checks (libtlsrt's still apply)."""
        ctx = self.module.ctx
        with ctx.lock:
            st = ctx.lib.tls_launch(self.handle, arr, len(arr),
                                    _stream_handle(stream, ctx.device if ctx.online else None))
            if st:
                raise ctx.error(st)

    def prepare(self, *args, **kwargs):
        """Checks a launch without running it (``tls_prepare_launch``; works
        offline) and returns its :class:`LaunchPlan`."""
        arr, extents, keep, _ = self._convert(self._order(args, kwargs))
        ctx = self.module.ctx
        plan = _capi.LaunchPlanC()

        def run():
            st = ctx.lib.tls_prepare_launch(self.handle, arr, len(arr), C.byref(plan))
            if st:
                raise ctx.error(st)
            ran = ctx.lib.tls_kernel_resolve(self.handle, arr, len(arr))
            return ctx.lib.tls_kernel_name(ran).decode() if ran else self.name

        entry = self._with_extents(extents, run)
        del keep
        return LaunchPlan(entry, plan)

    def resolve(self, *args, **kwargs):
        """The :class:`Kernel` a launch with these arguments runs
        (``tls_kernel_resolve``: this entry or a specialised sibling)."""
        arr, _, _, _ = self._convert(self._order(args, kwargs))
        ctx = self.module.ctx
        with ctx.lock:
            ran = ctx.lib.tls_kernel_resolve(self.handle, arr, len(arr))
            if not ran:
                raise ctx.error(ERR_ARG_VALUE)
        return self.module._wrap(ran)


class _Missing:
    def __repr__(self):
        return "<missing>"


_MISSING = _Missing()


def _shape_key(value):
    """What an autotuning choice depends on, for one argument: a tensor's
    shape, dtype and strides; a scalar's value."""
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), str(value.dtype), tuple(value.stride()))
    cai = getattr(value, "__cuda_array_interface__", None)
    if cai is not None:
        return ("cai", tuple(cai.get("shape", ())), cai.get("typestr"),
                tuple(cai["strides"]) if cai.get("strides") else None)
    if isinstance(value, (int, float, str)) or value is None:
        return value
    return (type(value).__name__, id(value))


class Autotuned:
    """A script's entries behind one callable: the first call for a shape
    key (tensor shapes, dtypes and strides, scalar values) times every
    entry with ``tls_autotune_ex`` (``reps`` runs each; with
    ``flush_bytes``, each run after a memset of that many bytes that
    flushes the L2, as a benchmark times) and launches the fastest; later
    calls with the same key launch the chosen entry directly. ``choices``
    maps keys to the chosen :class:`Kernel`."""

    def __init__(self, module, script, reps=20, flush_bytes=0):
        self.module, self.script, self.reps = module, script, reps
        self.flush_bytes = flush_bytes
        self.kernel = module.kernel(script)
        self.choices = {}

    def __repr__(self):
        return f"<tlsc.Autotuned {self.script}: {len(self.choices)} choices>"

    def key(self, args, kwargs):
        values = self.kernel._order(args, kwargs)
        return tuple(_shape_key(v) for v in values)

    def choose(self, *args, stream=None, **kwargs):
        """The fastest entry for these arguments (tuned now if the key is
        new: the entries run on these arguments, outputs included)."""
        key = self.key(args, kwargs)
        best = self.choices.get(key)
        if best is None:
            best = self.module._autotune(self.script, self.kernel, args, kwargs, stream,
                                         self.reps, self.flush_bytes)
            self.choices[key] = best
        return best

    def __call__(self, *args, stream=None, **kwargs):
        best = self.choose(*args, stream=stream, **kwargs)
        best(*args, stream=stream, **kwargs)
        return best


# ------------------------------------------------------------------ modules


class Module:
    """A loaded PTX file (``tls_module``). Entries are attributes or items:
    ``mod.MatmulWGMMAV5`` is the entry of that name, or, when none has it,
    the first entry of the script of that name (``mod.Add`` for ``Add__256``
    and ``Add__1024``). ``mod.kernels`` lists them all."""

    def __init__(self, ctx, text, name):
        self.ctx = ctx
        self.name = name
        self._wrapped = {}
        self._tuners = {}
        self._handle = None
        handle = C.c_void_p()
        with ctx.lock:
            st = ctx.lib.tls_module_load_string(ctx.handle, text.encode(), name.encode(),
                                                C.byref(handle))
            if st:
                raise ctx.error(st)
        self._handle = handle
        lib = ctx.lib
        self.kernels = [self._wrap(lib.tls_module_kernel(handle, i))
                        for i in range(lib.tls_module_num_kernels(handle))]

    def __del__(self):
        h = getattr(self, "_handle", None)
        if h and h.value and not sys.is_finalizing():
            try:
                self.ctx.lib.tls_module_free(h)
            except Exception:  # noqa: BLE001 - interpreter teardown
                pass
            self._handle = None

    def __repr__(self):
        return f"<tlsc.Module {self.name}: {', '.join(k.name for k in self.kernels)}>"

    @property
    def compiled_by(self):
        """'jit', 'ptxas' or 'cache' online; '' offline."""
        return (self.ctx.lib.tls_module_compiled_by(self._handle) or b"").decode()

    def _wrap(self, handle):
        handle = handle.value if isinstance(handle, C.c_void_p) else handle
        k = self._wrapped.get(handle)
        if k is None:
            k = self._wrapped[handle] = Kernel(self, handle)
        return k

    def kernel(self, name, config=None):
        """An entry by name, or by script name and a config subset
        (``tls_kernel_find_config``: ``"num_stages=4,block_k=64"``, or a dict).
        Raises NotFoundError."""
        lib, ctx = self.ctx.lib, self.ctx
        if isinstance(config, dict):
            config = ",".join(f"{k}={v}" for k, v in config.items())
        with ctx.lock:
            if config is None:
                h = lib.tls_kernel_find(self._handle, name.encode())
                if h:
                    return self._wrap(h)
                config = ""
            h = lib.tls_kernel_find_config(self._handle, name.encode(), config.encode())
            if not h:
                raise NotFoundError(ctx.last_error())
        return self._wrap(h)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.kernel(name)

    def __getitem__(self, name):
        return self.kernel(name)

    def __dir__(self):
        names = {k.name for k in self.kernels} | {k.script for k in self.kernels}
        return sorted(set(super().__dir__()) | names)

    def scripts(self):
        """The script names, in module order."""
        out = []
        for k in self.kernels:
            if k.script not in out:
                out.append(k.script)
        return out

    def _autotune(self, script, kernel, args, kwargs, stream, reps, flush_bytes=0):
        arr, extents, keep, waits = kernel._convert(kernel._order(args, kwargs))
        ctx = self.ctx
        best, ms = C.c_void_p(), C.c_float()
        s = _stream_handle(stream, ctx.device if ctx.online else None)
        _order_after(ctx, s, waits)
        opts = _capi.TuneOptions(reps, flush_bytes)

        def run():
            st = ctx.lib.tls_autotune_ex(self._handle, script.encode(), arr, len(arr), s,
                                         C.byref(opts), C.byref(best), C.byref(ms), None)
            if st:
                raise ctx.error(st)

        kernel._with_extents(extents, run)
        del keep
        chosen = self._wrap(best.value)
        chosen.tuned_ms = ms.value
        return chosen

    def autotuned(self, script, reps=20, flush_bytes=0):
        """The :class:`Autotuned` callable of a script (one per script and
        module, so its choices persist)."""
        tuner = self._tuners.get(script)
        if tuner is None:
            tuner = self._tuners[script] = Autotuned(self, script, reps, flush_bytes)
        return tuner

    def autotune(self, script, *args, stream=None, reps=None, flush_bytes=None, **kwargs):
        """Launches the fastest entry of ``script`` for these arguments,
        tuning with ``tls_autotune_ex`` the first time their shape key is
        seen (see :class:`Autotuned`; ``flush_bytes``, say ``256 << 20``,
        flushes the L2 before each timed run), and returns the chosen
        :class:`Kernel` (its ``tuned_ms``: the median time measured)."""
        tuner = self.autotuned(script)
        if reps is not None:
            tuner.reps = reps
        if flush_bytes is not None:
            tuner.flush_bytes = flush_bytes
        return tuner(*args, stream=stream, **kwargs)


def load(path, lib=None, device=None, offline=None, defines=None, name=None):
    """Loads a PTX file written by tlsc and returns its :class:`Module`.

    ``path``: a ``.ptx`` file, or a ``.tls`` script (compiled first by
    :func:`tlsc.compile` with ``defines``, through its cache). ``lib``: the
    libtlsrt.so to use (else ``$TLSC_LIB``, the bundled copy, the build
    folder: :func:`tlsc.find_library`). ``device`` and ``offline``: as for
    :func:`tlsc.context`; with ``offline=None`` a machine without a GPU
    gives an offline module whose launches are checked and then refused
    with NoDeviceError.
    """
    path = os.fspath(path)
    if path.endswith(".tls"):
        from ._compile import compile as compile_script
        path = compile_script(path, defines=defines)
    elif defines:
        raise InvalidArgument("defines= applies to a .tls script, not to PTX")
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    except OSError as err:
        from ._errors import FileError
        raise FileError(f"{path}: {err.strerror or err}") from err
    ctx = context(device=device, offline=offline, lib=lib)
    return Module(ctx, text, name or path)


def load_string(ptx, name="<string>", lib=None, device=None, offline=None):
    """A :class:`Module` from PTX text (``tls_module_load_string``)."""
    return Module(context(device=device, offline=offline, lib=lib), ptx, name)


class InvalidArgument(Error, ValueError):
    """A bad argument to a function of this package (TLS_ERR_INVALID)."""
