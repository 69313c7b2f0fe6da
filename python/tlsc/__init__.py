"""tlsc from Python: load PTX written by the tlsc compiler and launch its
kernels on torch tensors (or any ``__cuda_array_interface__`` object)
through libtlsrt, the tlsc runtime, by ctypes.

    import tlsc
    mod = tlsc.load("matmul.ptx")                 # or tlsc.load("matmul_v5.tls")
    mod.MatmulWGMMAV5(m, n, k, a, b, c)           # on torch's current stream
    mod.MatmulWGMMAV5.prepare(m, n, k, a, b, c)   # checked only (works offline)
    mod.autotune("MatmulWGMMAV5", m, n, k, a, b, c)
    ptx = tlsc.compile("kernel.tls", defines={"num_stages": 3})

Pure Python, standard library only; torch is optional and never imported by
this package unless a function needs it (DLPack arguments, torch_op). The
shared library is found by :func:`find_library`; the compiler by
:func:`find_tlsc`. Every refusal raises an :class:`Error` subclass carrying
libtlsrt's status code and message.
"""

from ._capi import find_library, library_candidates
from ._compile import cache_dir, compile, find_tlsc
from ._errors import (ArgCountError, ArgTypeError, ArgumentError, ArgValueError, CompileError,
                      CudaError, Error, ExprError, FileError, FormatError, InvalidError,
                      LibraryNotFoundError, NoDeviceError, NoDriverError, NotFoundError,
                      OutOfMemoryError, TensorMapError)
from ._runtime import (Autotuned, Context, InvalidArgument, Kernel, LaunchPlan, Module, Param,
                       context, load, load_string)
from ._torch import torch_op

__version__ = "0.1.0"

__all__ = [
    "load", "load_string", "compile", "context", "torch_op", "find_library", "find_tlsc",
    "library_candidates", "cache_dir", "Context", "Module", "Kernel", "Param", "LaunchPlan",
    "Autotuned", "Error", "ArgumentError", "ArgCountError", "ArgTypeError", "ArgValueError",
    "CompileError", "CudaError", "ExprError", "FileError", "FormatError", "InvalidError",
    "InvalidArgument", "LibraryNotFoundError", "NoDeviceError", "NoDriverError",
    "NotFoundError", "OutOfMemoryError", "TensorMapError",
]
