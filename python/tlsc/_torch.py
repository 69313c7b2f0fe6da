"""tlsc.torch_op: a tlsc kernel as a torch custom operator (torch.library),
with a fake (meta) implementation so that torch.compile and shape
propagation see its outputs. torch is imported only when it is called."""

import inspect

_LIBRARIES = []  # torch.library.Library objects must outlive their ops


def _schema_from(output):
    names = list(inspect.signature(output).parameters)
    return "(" + ", ".join(f"Tensor {n}" for n in names) + ")"


def torch_op(qualname, kernel, output, args, schema=None):
    """Registers ``kernel`` as the custom op ``qualname`` (``"ns::name"``)
    and returns it (``torch.ops.ns.name``).

    ``kernel``: a :class:`tlsc.Kernel`, a :class:`tlsc.Autotuned` (from
    ``mod.autotuned(script)``), or any callable taking the kernel's arguments.
    ``output(*inputs)``: the output as ``(shape, dtype)``, or a list of
    them for several outputs; it serves the fake implementation and
    allocates the outputs (uninitialised, on the first input's device) in
    the real one. ``args(*inputs, *outputs)``: the kernel's arguments, in
    order. ``schema``: the inputs' part of the schema, ``"(Tensor a, Tensor
    b, float alpha)"``; default: one ``Tensor`` per parameter of ``output``.
    The kernel runs on torch's current stream.

        op = tlsc.torch_op("mylib::matmul", mod.MatmulWGMMAV5,
                           output=lambda a, b: ((a.shape[0], b.shape[0]), a.dtype),
                           args=lambda a, b, c: (a.shape[0], b.shape[0], a.shape[1], a, b, c))
        c = op(a, b)       # or torch.ops.mylib.matmul(a, b)
    """
    try:
        import torch
    except ImportError as err:
        raise ImportError("tlsc.torch_op needs torch") from err
    ns, sep, name = qualname.partition("::")
    if not sep or not ns or not name:
        raise ValueError(f"qualname must be 'namespace::name', got {qualname!r}")
    inputs = schema or _schema_from(output)

    def specs(*xs):
        out = output(*xs)
        multi = isinstance(out, list)
        return (out if multi else [out]), multi

    # The number of outputs is fixed by the schema: read it from a probe of
    # `output` on meta tensors when the inputs are all tensors, else assume one.
    multi = False
    n_out = 1
    try:
        probe_args = []
        for n in inspect.signature(output).parameters:
            probe_args.append(torch.empty(0, device="meta"))
        probe, multi = specs(*probe_args)
        n_out = len(probe)
    except Exception:  # noqa: BLE001 - output needs real shapes: one output
        pass
    returns = "(" + ", ".join(["Tensor"] * n_out) + ")" if multi else "Tensor"

    lib = torch.library.Library(ns, "FRAGMENT")
    lib.define(f"{name}{inputs} -> {returns}")
    _LIBRARIES.append(lib)

    def device_of(xs):
        for x in xs:
            if isinstance(x, torch.Tensor):
                return x.device
        return torch.device("cuda")

    def make(xs, device):
        out, multi_now = specs(*xs)
        return [torch.empty(tuple(shape), dtype=dtype, device=device) for shape, dtype in out]

    def real(*xs):
        outs = make(xs, device_of(xs))
        kernel(*args(*xs, *outs))
        return tuple(outs) if multi else outs[0]

    def fake(*xs):
        outs = make(xs, device_of(xs))
        return tuple(outs) if multi else outs[0]

    lib.impl(name, real, "CUDA")
    register_fake = getattr(torch.library, "register_fake", None)
    if register_fake is not None:
        register_fake(qualname, fake, lib=lib)
    elif hasattr(torch.library, "impl_abstract"):
        torch.library.impl_abstract(qualname, fake, lib=lib)
    else:
        lib.impl(name, fake, "Meta")
    return getattr(getattr(torch.ops, ns), name)
