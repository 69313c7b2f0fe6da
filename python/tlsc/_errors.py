"""Exceptions of the tlsc package.

Every refusal is a :class:`Error` that carries libtlsrt's status code
(``tls_status`` in runtime/tlsrt.h) and message (``tls_last_error``). The
subclass follows the status, and each also derives from the closest
built-in exception (a wrong argument count is a ``TypeError``, a null
pointer a ``ValueError``), so ordinary ``except`` clauses work.
"""

# tls_status values (runtime/tlsrt.h).
OK = 0
ERR_INVALID = 1
ERR_NO_DRIVER = 2
ERR_NO_DEVICE = 3
ERR_CUDA = 4
ERR_IO = 5
ERR_FORMAT = 6
ERR_COMPILE = 7
ERR_NOT_FOUND = 8
ERR_ARG_COUNT = 9
ERR_ARG_TYPE = 10
ERR_ARG_VALUE = 11
ERR_EXPR = 12
ERR_TMAP = 13
ERR_NOMEM = 14

STATUS_NAMES = {
    OK: "TLS_OK", ERR_INVALID: "TLS_ERR_INVALID", ERR_NO_DRIVER: "TLS_ERR_NO_DRIVER",
    ERR_NO_DEVICE: "TLS_ERR_NO_DEVICE", ERR_CUDA: "TLS_ERR_CUDA", ERR_IO: "TLS_ERR_IO",
    ERR_FORMAT: "TLS_ERR_FORMAT", ERR_COMPILE: "TLS_ERR_COMPILE",
    ERR_NOT_FOUND: "TLS_ERR_NOT_FOUND", ERR_ARG_COUNT: "TLS_ERR_ARG_COUNT",
    ERR_ARG_TYPE: "TLS_ERR_ARG_TYPE", ERR_ARG_VALUE: "TLS_ERR_ARG_VALUE",
    ERR_EXPR: "TLS_ERR_EXPR", ERR_TMAP: "TLS_ERR_TMAP", ERR_NOMEM: "TLS_ERR_NOMEM",
}


class Error(Exception):
    """A refusal by libtlsrt (or by this package, before libtlsrt is asked).

    Attributes:
        status: the ``tls_status`` code (an int; ``status_name`` spells it).
        message: libtlsrt's message (``tls_last_error``) or ours.
    """

    default_status = ERR_INVALID

    def __init__(self, message, status=None):
        super().__init__(message)
        self.message = message
        self.status = self.default_status if status is None else status

    @property
    def status_name(self):
        return STATUS_NAMES.get(self.status, f"status {self.status}")


class LibraryNotFoundError(Error, OSError):
    """libtlsrt.so could not be found or opened (see tlsc.find_library)."""
    default_status = ERR_IO


class InvalidError(Error):
    """TLS_ERR_INVALID: API misuse (a NULL handle, a bad option)."""
    default_status = ERR_INVALID


class NoDriverError(Error, RuntimeError):
    """TLS_ERR_NO_DRIVER: libcuda.so.1 is missing or incomplete."""
    default_status = ERR_NO_DRIVER


class NoDeviceError(Error, RuntimeError):
    """TLS_ERR_NO_DEVICE: no such GPU, or the context is offline."""
    default_status = ERR_NO_DEVICE


class CudaError(Error, RuntimeError):
    """TLS_ERR_CUDA: a driver call failed."""
    default_status = ERR_CUDA


class FileError(Error, OSError):
    """TLS_ERR_IO: a file could not be read."""
    default_status = ERR_IO


class FormatError(Error, ValueError):
    """TLS_ERR_FORMAT: the PTX file or its metadata block is broken."""
    default_status = ERR_FORMAT


class CompileError(Error):
    """TLS_ERR_COMPILE: tlsc refused a script (``diagnostics`` holds its
    messages, ``returncode`` its exit status), or ptxas / the driver JIT
    refused the PTX of a module."""
    default_status = ERR_COMPILE

    def __init__(self, message, status=None, diagnostics=None, returncode=None):
        super().__init__(message, status)
        self.diagnostics = message if diagnostics is None else diagnostics
        self.returncode = returncode


class NotFoundError(Error, LookupError, AttributeError):
    """TLS_ERR_NOT_FOUND: no entry of that name or configuration."""
    default_status = ERR_NOT_FOUND


class ArgumentError(Error):
    """A launch refused for its arguments (the subclasses below)."""
    default_status = ERR_ARG_VALUE


class ArgCountError(ArgumentError, TypeError):
    """TLS_ERR_ARG_COUNT: wrong number of arguments (or unknown keywords)."""
    default_status = ERR_ARG_COUNT


class ArgTypeError(ArgumentError, TypeError):
    """TLS_ERR_ARG_TYPE: an argument of the wrong kind or element type."""
    default_status = ERR_ARG_TYPE


class ArgValueError(ArgumentError, ValueError):
    """TLS_ERR_ARG_VALUE: a null or misaligned pointer, a size out of range,
    a tensor on the wrong device or not contiguous, a failed requirement."""
    default_status = ERR_ARG_VALUE


class ExprError(ArgumentError, ArithmeticError):
    """TLS_ERR_EXPR: a grid or tensor-map expression overflowed or divided
    by zero for these arguments."""
    default_status = ERR_EXPR


class TensorMapError(ArgumentError, ValueError):
    """TLS_ERR_TMAP: a tensor map breaks the TMA rules for these arguments."""
    default_status = ERR_TMAP


class OutOfMemoryError(Error, MemoryError):
    """TLS_ERR_NOMEM: an allocation failed."""
    default_status = ERR_NOMEM


_BY_STATUS = {
    ERR_INVALID: InvalidError, ERR_NO_DRIVER: NoDriverError, ERR_NO_DEVICE: NoDeviceError,
    ERR_CUDA: CudaError, ERR_IO: FileError, ERR_FORMAT: FormatError,
    ERR_COMPILE: CompileError, ERR_NOT_FOUND: NotFoundError, ERR_ARG_COUNT: ArgCountError,
    ERR_ARG_TYPE: ArgTypeError, ERR_ARG_VALUE: ArgValueError, ERR_EXPR: ExprError,
    ERR_TMAP: TensorMapError, ERR_NOMEM: OutOfMemoryError,
}


def error_for(status, message):
    """The exception for a ``tls_status`` and its message."""
    cls = _BY_STATUS.get(status, Error)
    return cls(message, status)
