#!/usr/bin/env python3
"""Checks and times tlsc-compiled register-tensor kernels (softmax, layer
norm, vector add) on the GPU against torch, and against Tilus compiling the
same file when its location is given.

    python3 scripts/kernels_check.py --lib build/runtime/libtlsrt.so \
        --case softmax:ptx/softmax.ptx:FusedSoftmax \
        [--tilus softmax:path/to/softmax.py:FusedSoftmax] [--bench]

Every autotune entry of the script is run on fresh random data at each
size (ragged ones included), with the output poisoned (NaN) first, and
compared with a float64 torch reference by relative error. --bench then
times the fastest entry (libtlsrt's tls_autotune_ex, tuned as timed: each
run after an L2 flush), torch and Tilus in
interleaved rounds, CUDA events, an L2 flush before each call, medians;
it prints the achieved bandwidth too (bytes read + written / time).
Needs torch; Tilus only for --tilus (its wheels on PYTHONPATH). Exits 3
when torch or a GPU is missing (tests/gpu's run_or_skip.sh makes that a
skip), 1 when a check fails.
"""
import argparse
import ast
import ctypes as C
import importlib.abc
import importlib.machinery
import importlib.util
import statistics
import sys
import types

try:
    import torch
except ImportError:
    print("kernels_check: no torch here", file=sys.stderr)
    sys.exit(3)

# ---------------------------------------------------------------- libtlsrt


class ArgValue(C.Union):
    _fields_ = [("i32", C.c_int32), ("u32", C.c_uint32), ("i64", C.c_int64),
                ("u64", C.c_uint64), ("f32", C.c_float), ("ptr", C.c_uint64)]


class Arg(C.Structure):
    _fields_ = [("kind", C.c_int), ("v", ArgValue)]


class TuneOptions(C.Structure):  # tls_autotune_options
    _fields_ = [("reps", C.c_int), ("flush_bytes", C.c_size_t)]


FLUSH_BYTES = 256 << 20  # the L2 flush before each timed run (the H200's L2 is 60 MB)


ARG_I32, ARG_U32, ARG_I64, ARG_U64, ARG_F32, ARG_PTR = range(6)


class Runtime:
    def __init__(self, path):
        lib = C.CDLL(path)
        vp, cp = C.c_void_p, C.c_char_p
        sig = {
            "tls_init": (C.c_int, [C.c_int, C.POINTER(vp)]),
            "tls_last_error": (cp, [vp]),
            "tls_module_load_file": (C.c_int, [vp, cp, C.POINTER(vp)]),
            "tls_module_num_kernels": (C.c_int, [vp]),
            "tls_module_kernel": (vp, [vp, C.c_int]),
            "tls_kernel_name": (cp, [vp]),
            "tls_kernel_script": (cp, [vp]),
            "tls_kernel_config": (cp, [vp]),
            "tls_kernel_fixed": (cp, [vp]),
            "tls_kernel_num_params": (C.c_int, [vp]),
            "tls_kernel_resolve": (vp, [vp, C.POINTER(Arg), C.c_int]),
            "tls_kernel_param_type": (cp, [vp, C.c_int]),
            "tls_launch": (C.c_int, [vp, C.POINTER(Arg), C.c_int, vp]),
            "tls_autotune_ex": (C.c_int, [vp, cp, C.POINTER(Arg), C.c_int, vp,
                                          C.POINTER(TuneOptions), C.POINTER(vp),
                                          C.POINTER(C.c_float), C.POINTER(C.c_float)]),
        }
        for name, (res, args) in sig.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        self.lib = lib
        torch.cuda.init()
        torch.empty(1, device="cuda")  # the primary context exists
        self.ctx = vp()
        self.check(lib.tls_init(0, C.byref(self.ctx)), "tls_init")

    def check(self, status, what):
        if status != 0:
            raise RuntimeError(f"{what}: {self.lib.tls_last_error(self.ctx).decode()}")

    def load(self, path):
        mod = C.c_void_p()
        self.check(self.lib.tls_module_load_file(self.ctx, path.encode(), C.byref(mod)), path)
        return mod

    def kernels(self, mod, script):
        """The script's entries; beside generic ones, not those that fix
        `int` parameters (--specialize): launching the generic entry runs
        such a sibling when the arguments have its values."""
        out = []
        for i in range(self.lib.tls_module_num_kernels(mod)):
            k = self.lib.tls_module_kernel(mod, i)
            if self.lib.tls_kernel_script(k).decode() == script:
                out.append(k)
        generic = [k for k in out if not self.lib.tls_kernel_fixed(k).decode()]
        return generic or out

    def args(self, k, values):
        n = self.lib.tls_kernel_num_params(k)
        if n != len(values):
            raise RuntimeError(f"{n} parameters, {len(values)} values")
        arr = (Arg * n)()
        for i, v in enumerate(values):
            ty = self.lib.tls_kernel_param_type(k, i).decode()
            if isinstance(v, torch.Tensor):
                arr[i].kind, arr[i].v.ptr = ARG_PTR, v.data_ptr()
            elif ty == "f32":
                arr[i].kind, arr[i].v.f32 = ARG_F32, float(v)
            elif ty == "i64":
                arr[i].kind, arr[i].v.i64 = ARG_I64, int(v)
            elif ty == "u32":
                arr[i].kind, arr[i].v.u32 = ARG_U32, int(v)
            else:
                arr[i].kind, arr[i].v.i32 = ARG_I32, int(v)
        return arr

    def launch(self, k, arr):
        stream = C.c_void_p(torch.cuda.current_stream().cuda_stream)
        self.check(self.lib.tls_launch(k, arr, len(arr), stream),
                   self.lib.tls_kernel_name(k).decode())

    def autotune(self, mod, script, arr):
        """The fastest entry, tuned as the bench times: each run after an
        L2 flush of Timer's size (tls_autotune_ex)."""
        best, ms = C.c_void_p(), C.c_float()
        stream = C.c_void_p(torch.cuda.current_stream().cuda_stream)
        opts = TuneOptions(20, FLUSH_BYTES)
        self.check(self.lib.tls_autotune_ex(mod, script.encode(), arr, len(arr), stream,
                                            C.byref(opts), C.byref(best), C.byref(ms), None),
                   "tls_autotune_ex")
        return best.value, ms.value


# ---------------------------------------------------------------- the cases


def softmax_case(m, n):
    x = (torch.rand(m, n, dtype=torch.float16, device="cuda") - 0.5) * 8.0
    y = torch.full_like(x, float("nan"))
    ref = torch.softmax(x.double(), dim=1)

    def padded_ref(config):
        """What a script computes that lets the zeros a ragged last tile
        loads join the max and the sum (Tilus's softmax example does)."""
        block_n = int(config.get("block_n", 0))
        pad = -n % block_n if block_n else 0
        if pad == 0:
            return ref
        xd = torch.cat([x.double(), torch.zeros(m, pad, dtype=torch.float64, device="cuda")], 1)
        return torch.softmax(xd, dim=1)[:, :n]

    return dict(args=[m, n, x, y], out=y, ref=ref, ref_for=padded_ref, tol=2e-3,
                bytes=2 * x.numel() * 2, torch=lambda: torch.softmax(x, dim=1),
                tilus_args=[m, n, x, y])


def layer_norm_case(m, n):
    x = (torch.rand(m, n, dtype=torch.float16, device="cuda") - 0.5) * 2.0
    gamma = torch.rand(n, dtype=torch.float16, device="cuda")
    beta = torch.rand(n, dtype=torch.float16, device="cuda")
    y = torch.full_like(x, float("nan"))
    ref = torch.nn.functional.layer_norm(x.double(), [n], gamma.double(), beta.double(), 1e-5)
    return dict(args=[m, n, x, gamma, beta, y, 1e-5], out=y, ref=ref, tol=1e-2,
                bytes=2 * x.numel() * 2,
                torch=lambda: torch.nn.functional.layer_norm(x, [n], gamma, beta, 1e-5),
                tilus_args=[m, n, x, gamma, beta, y, 1e-5])


def vector_add_case(m, n):
    numel = m * n
    a = torch.randn(numel, device="cuda")
    b = torch.randn(numel, device="cuda")
    c = torch.full_like(a, float("nan"))
    return dict(args=[numel, a, b, c], out=c, ref=a.double() + b.double(), tol=1e-6,
                bytes=3 * numel * 4, torch=lambda: torch.add(a, b), tilus_args=None)


def matmul_case(m, n, k):
    a = (torch.rand(m, k, dtype=torch.float16, device="cuda") - 0.5) / k**0.5
    b = (torch.rand(n, k, dtype=torch.float16, device="cuda") - 0.5) / k**0.5
    c = torch.full((m, n), float("nan"), dtype=torch.float16, device="cuda")
    return dict(args=[m, n, k, a, b, c], out=c, ref=a.double() @ b.double().T, tol=2e-3,
                flops=2 * m * n * k, torch=lambda: torch.matmul(a, b.T),
                tilus_args=[m, n, k, a, b, c])


def matmul_bf16_case(m, n, k):
    """C = A B^T in bf16 (examples/matmul_bf16.tls), against torch.matmul."""
    a = ((torch.rand(m, k, device="cuda") - 0.5) / k**0.5).to(torch.bfloat16)
    b = ((torch.rand(n, k, device="cuda") - 0.5) / k**0.5).to(torch.bfloat16)
    c = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    return dict(args=[m, n, k, a, b, c], out=c, ref=a.double() @ b.double().T, tol=1e-2,
                flops=2 * m * n * k, torch=lambda: torch.matmul(a, b.T), tilus_args=None)


def matmul_fp8_case(m, n, k, a_scale=0.75, b_scale=1.5):
    """C = (a_scale A)(b_scale B)^T with e4m3 A [m, k] and B [n, k], bf16 C
    (examples/matmul_fp8.tls), against torch._scaled_mm (cuBLASLt's fp8
    GEMM) with and without fast accumulation."""
    a = (torch.randn(m, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    c = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    sa = torch.tensor(a_scale, device="cuda")
    sb = torch.tensor(b_scale, device="cuda")
    ref = (a.double() * a_scale) @ (b.double() * b_scale).T

    def scaled_mm(fast):
        return lambda: torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb,
                                        out_dtype=torch.bfloat16, use_fast_accum=fast)
    return dict(args=[m, n, k, a, b, c, a_scale, b_scale], out=c, ref=ref, tol=1e-2,
                flops=2 * m * n * k, torch=scaled_mm(False),
                baselines={"torch_fast_accum": scaled_mm(True)}, tilus_args=None)


def matmul_i8_case(m, n, k):
    """C = A B^T in int8 with int32 accumulation (B stored [n, k]): every
    sum exact, so the check wants rel_err 0 against float64."""
    a = torch.randint(-128, 128, (m, k), dtype=torch.int8, device="cuda")
    b = torch.randint(-128, 128, (n, k), dtype=torch.int8, device="cuda")
    c = torch.full((m, n), -1, dtype=torch.int32, device="cuda")
    return dict(args=[m, n, k, a, b, c], out=c, ref=a.double() @ b.double().T, tol=0.0,
                flops=2 * m * n * k, torch=lambda: torch._int_mm(a, b.t()), tilus_args=None)


def matmul_kn_case(m, n, k):
    """C = A B with B stored [k, n] (Tilus's Ampere matmul examples)."""
    a = (torch.rand(m, k, dtype=torch.float16, device="cuda") - 0.5) / k**0.5
    b = (torch.rand(k, n, dtype=torch.float16, device="cuda") - 0.5) / k**0.5
    c = torch.full((m, n), float("nan"), dtype=torch.float16, device="cuda")
    return dict(args=[m, n, k, a, b, c], out=c, ref=a.double() @ b.double(), tol=2e-3,
                flops=2 * m * n * k, torch=lambda: torch.matmul(a, b),
                tilus_args=[m, n, k, a, b, c])


def attention_case(batch, seqlen, heads=32, heads_kv=8, dim=128):
    """Causal attention with grouped KV heads (Tilus's flash attention
    examples: q [b, s, h, d], k and v [b, s, h_kv, d], o like q)."""
    q = torch.randn(batch, seqlen, heads, dim, dtype=torch.float16, device="cuda")
    k = torch.randn(batch, seqlen, heads_kv, dim, dtype=torch.float16, device="cuda")
    v = torch.randn(batch, seqlen, heads_kv, dim, dtype=torch.float16, device="cuda")
    o = torch.full_like(q, float("nan"))
    g = heads // heads_kv

    def sdpa(qq, kk, vv):
        return torch.nn.functional.scaled_dot_product_attention(
            qq.transpose(1, 2), kk.repeat_interleave(g, 2).transpose(1, 2),
            vv.repeat_interleave(g, 2).transpose(1, 2), is_causal=True).transpose(1, 2)

    ref = sdpa(q.double(), k.double(), v.double())
    flops = 4 * batch * heads * seqlen * seqlen * dim // 2
    return dict(args=[batch, seqlen, q, k, v, o], out=o, ref=ref, tol=5e-3, flops=flops,
                torch=lambda: sdpa(q, k, v), tilus_args=[batch, seqlen, q, k, v, o])


def attention_kv_case(batch, seqlen, heads=32):
    """The same with the kv length its own argument (flash_attention_v3:
    batch, q_len, kv_len, q, k, v, o), here equal to the q length."""
    case = attention_case(batch, seqlen, heads)
    case["args"] = case["args"][:2] + [seqlen] + case["args"][2:]
    case["tilus_args"] = case["args"]
    return case


def kvcache_case(batch, seqlen_q, seqlen_kv, heads=32, heads_kv=8, dim=128, page=256):
    """Attention of new queries against a paged KV cache (Tilus's
    attention_with_kvcache: q [b, sq, h, d]; k and v caches [blocks, page,
    h_kv, d] in pages listed by block_table [b, pages]; the queries are the
    last sq of each sequence's seqlen_kv tokens, causal)."""
    pages = (seqlen_kv + page - 1) // page
    blocks = pages * batch
    q = torch.rand(batch, seqlen_q, heads, dim, dtype=torch.float16, device="cuda")
    kc = torch.rand(blocks, page, heads_kv, dim, dtype=torch.float16, device="cuda")
    vc = torch.rand(blocks, page, heads_kv, dim, dtype=torch.float16, device="cuda")
    seqlens = torch.full((batch,), seqlen_kv, dtype=torch.int32, device="cuda")
    table = torch.randperm(blocks, dtype=torch.int32, device="cuda").reshape(batch, pages)
    o = torch.full_like(q, float("nan"))
    g = heads // heads_kv
    k = kc[table.flatten().long()].reshape(batch, pages * page, heads_kv, dim)
    v = vc[table.flatten().long()].reshape(batch, pages * page, heads_kv, dim)
    k = k.double().repeat_interleave(g, 2)
    v = v.double().repeat_interleave(g, 2)
    s = torch.einsum("bthd,bshd->bhts", q.double() / dim**0.5, k)
    col = torch.arange(pages * page, device="cuda")[None, None, :]
    row = torch.arange(seqlen_q, device="cuda")[None, :, None] + (seqlen_kv - seqlen_q)
    mask = (col < seqlen_kv) & (col <= row)
    s = s.masked_fill(~mask[:, None], float("-inf"))
    ref = torch.einsum("bhts,bshd->bthd", torch.softmax(s, dim=-1), v)
    flops = 4 * batch * heads * seqlen_q * seqlen_kv * dim
    args = [q, kc, vc, o, seqlens, table, batch, seqlen_q, heads, blocks, page, heads_kv, pages]
    return dict(args=args, out=o, ref=ref, tol=5e-3, flops=flops, torch=None, tilus_args=args)


def row_sum_case(m, n):
    """out[i] = sum(x[i, :]) (tests/workspace/scripts/split_rows.tls: column
    blocks merged in order through global_tensor() workspaces and
    semaphores)."""
    x = torch.randn(m, n, device="cuda")
    out = torch.full((m,), float("nan"), device="cuda")
    return dict(args=[m, n, x, out], out=out, ref=x.double().sum(1), tol=1e-5,
                bytes=x.numel() * 4, torch=lambda: x.sum(1), tilus_args=[m, n, x, out])


def group_scales(x, group):
    """The per-token, per-group fp8 e4m3 scales of a [rows, cols] float
    tensor (absmax / 448, 1 where a group is all zeros)."""
    absmax = x.reshape(x.shape[0], -1, group).abs().amax(2)
    return torch.where(absmax > 0, absmax / 448.0, torch.ones_like(absmax))


def fp8_cast_error(out, out_sf, value, rows, group=128):
    """How far a per-token fp8 cast (codes out, scales out_sf) is from the
    float64 values it encodes, on the rows given (the others must be left
    as poisoned, all-ones bytes): the scales must match
    absmax/448 to float32 rounding (else inf), and the dequantized codes
    the values by relative error (e4m3 keeps 3 mantissa bits: about 2.5e-2
    in norm for random data)."""
    skipped = torch.ones(out.shape[0], dtype=torch.bool, device=out.device)
    skipped[rows] = False
    if (out[skipped].view(torch.uint8) != 0xFF).any() or \
            (out_sf[skipped].view(torch.int32) != -1).any():
        return float("inf")  # a row the kernel must skip was written
    if rows.numel() == 0:
        return 0.0
    sf, ref_sf = out_sf[rows].double(), group_scales(value[rows], group)
    if not torch.isfinite(sf).all() or ((sf - ref_sf).abs() / ref_sf).max().item() > 1e-5:
        return float("inf")
    codes = out[rows].float().double()
    deq = (codes.reshape(codes.shape[0], -1, group) * sf[:, :, None]).reshape(codes.shape)
    return rel_err(deq, value[rows])


def per_token_cast_case(m, n):
    """Tilus's quantization/per_token_cast.py: x [m, n] fp16 to e4m3 codes
    and one float32 scale per 128 columns of a row."""
    x = torch.randn(m, n, dtype=torch.float16, device="cuda") * 2.0
    out = torch.empty(m, n, dtype=torch.float8_e4m3fn, device="cuda")
    out_sf = torch.empty(m, n // 128, dtype=torch.float32, device="cuda")
    rows = torch.arange(m, device="cuda")
    return dict(args=[m, n, x, out, out_sf], out=out, poison=[out, out_sf], tol=4e-2,
                err=lambda: fp8_cast_error(out, out_sf, x.double(), rows),
                bytes=x.numel() * 2 + out.numel() + out_sf.numel() * 4, torch=None,
                tilus_args=[m, n, x, out, out_sf])


def swiglu_cast_case(m, n, tokens=None, topk=2):
    """Tilus's quantization/swiglu_forward_and_per_token_cast.py with its
    defaults (weights, experts, clamp 6): x [m, 2n] fp16 -> silu(clamp(l)) *
    clamp(r) * topk weight, cast per token to e4m3; rows whose expert is -1
    are skipped (left as they were)."""
    tokens = tokens or max(m // 2, 1)
    x = torch.randn(m, 2 * n, dtype=torch.float16, device="cuda") * 2.0
    pos = (torch.arange(m, device="cuda", dtype=torch.int32) % (tokens * topk)).contiguous()
    weights = torch.rand(tokens, topk, dtype=torch.float32, device="cuda")
    expert = torch.ones(m, dtype=torch.int32, device="cuda")
    expert[::17] = -1
    out = torch.empty(m, n, dtype=torch.float8_e4m3fn, device="cuda")
    out_sf = torch.empty(m, n // 128, dtype=torch.float32, device="cuda")
    left, right = x[:, :n].double().clamp(max=6.0), x[:, n:].double().clamp(-6.0, 6.0)
    value = left / (torch.exp(-left) + 1.0) * right * weights.flatten().double()[pos.long()][:, None]
    rows = (expert >= 0).nonzero().flatten()
    args = [m, n, tokens * topk, x, out, out_sf, pos, weights, expert, 6.0]
    return dict(args=args, out=out, poison=[out, out_sf], tol=4e-2,
                err=lambda: fp8_cast_error(out, out_sf, value, rows),
                bytes=x.numel() * 2 + out.numel() + out_sf.numel() * 4, torch=None,
                tilus_args=args)


# Tilus's quantization/matmul_a16wx.py: the module's entries (the weights
# go through its QuantizedMatmulChangeLayout entry, as its host code does)
# and the weight dtype the file was compiled for (tlsc -D b_dtype=...).
A16WX = {"rt": None, "mod": None, "dtype": "int4b", "group": 128}
SUBBYTE = {  # name: (bits, exponent bits or None for an integer, signed)
    **{f"int{b}b": (b, None, True) for b in range(1, 8)},
    **{f"uint{b}b": (b, None, False) for b in range(1, 8)},
    "int8": (8, None, True), "uint8": (8, None, False), "float8_e5m2": (8, 5, True),
    **{f"float{n}_e{e}m{n - 1 - e}": (n, e, True)
       for n in range(3, 8) for e in range(1, n - 1)}}


def lowp_values(name):
    """Every value of a 1-8 bit dtype, by code (float64); sub-byte floats
    as Tilus defines them: bias 2^(e-1)-1, subnormals at exponent 0, no inf
    or nan (but e5's all-ones exponent)."""
    bits, ebits, signed = SUBBYTE[name]
    codes = torch.arange(1 << bits, dtype=torch.float64)
    if ebits is None:
        return torch.where(codes >= (1 << (bits - 1)), codes - (1 << bits), codes) \
            if signed else codes
    mbits, bias = bits - 1 - ebits, (1 << (ebits - 1)) - 1
    c = torch.arange(1 << bits)
    sign = torch.where((c >> (bits - 1)) & 1 == 1, -1.0, 1.0).double()
    exp, man = ((c >> mbits) & ((1 << ebits) - 1)).double(), (c & ((1 << mbits) - 1)).double()
    val = torch.where(exp == 0, man / 2**mbits * 2.0**(1 - bias),
                      (1 + man / 2**mbits) * 2.0**(exp - bias))
    if ebits == 5:
        val = torch.where(exp == 31, torch.full_like(val, float("inf")), val)
    return sign * val


def quantize(w, name, group):
    """The file's load_and_quantize: per column and group of `group` rows,
    scale = max(absmax / max_value, 1e-6) in the activation dtype; codes the
    nearest representable value of w / scale, clamped (float64 here)."""
    vals = lowp_values(name).to(w.device)
    finite = vals[torch.isfinite(vals)]
    k, n = w.shape
    wg = w.double().reshape(k // group, group, n)
    scales = (wg.abs().amax(1, keepdim=True) / finite.max()).clamp_min(1e-6).half()
    x = (wg / scales.double()).clamp(finite.min(), finite.max()).reshape(-1)
    cand = torch.where(torch.isfinite(vals), vals, torch.full_like(vals, float("inf")))
    codes = torch.empty(x.numel(), dtype=torch.int64, device=w.device)
    for i in range(0, x.numel(), 1 << 18):  # nearest code, chunk by chunk
        codes[i:i + (1 << 18)] = (x[i:i + (1 << 18), None] - cand[None, :]).abs().argmin(1)
    return codes.reshape(k, n), scales.reshape(k // group, n)


def pack_bits(codes, bits):
    """Element i at bits [i*bits, i*bits + bits) of the bytes, low first
    (Tilus's packed storage of sub-byte tensors)."""
    flat = codes.reshape(-1)
    planes = (flat[:, None] >> torch.arange(bits, device=flat.device)) & 1
    planes = planes.reshape(-1, 8)
    return (planes << torch.arange(8, device=flat.device)).sum(1).to(torch.uint8)


def a16wx_case(m, n, k):
    """Tilus's quantization/matmul_a16wx.py: C = A @ dequant(W) with A fp16
    [m, k] and W [k, n] quantized per 128 rows of a column, packed as the
    file's host code packs it (QuantizedMatmulChangeLayout, run here from
    the same PTX), compared with the float64 product of the dequantized
    weights."""
    rt, mod, name, group = A16WX["rt"], A16WX["mod"], A16WX["dtype"], A16WX["group"]
    bits = SUBBYTE[name][0]
    a = (torch.rand(m, k, dtype=torch.float16, device="cuda") - 0.5) / k**0.5
    w = (torch.rand(k, n, dtype=torch.float16, device="cuda") - 0.5) / k**0.5
    codes, scales = quantize(w, name, group)
    packed = pack_bits(codes, bits)
    tiled = torch.empty_like(packed)
    change = rt.kernels(mod, "QuantizedMatmulChangeLayout")[0]
    rt.launch(change, rt.args(change, [k, n, packed, tiled]))
    torch.cuda.synchronize()
    deq = lowp_values(name).to(w.device)[codes] * scales.double().repeat_interleave(group, 0)
    c = torch.empty(m, n, dtype=torch.float16, device="cuda")
    args = [m, n, k, a, tiled, scales, c]
    return dict(args=args, out=c, ref=a.double() @ deq, tol=5e-3, flops=2 * m * n * k,
                torch=lambda: torch.matmul(a, w), tilus_args=args)


ROWS_CHECK = [(1, 128), (3, 781), (1823, 781), (64, 4096), (257, 1000), (4096, 1024)]
ROWS_BENCH = [(4096, 1024), (4096, 4096), (4096, 8192), (8192, 8192)]
MM_CHECK = [(1000, 1016, 1032), (128, 256, 64), (4096, 4096, 4096)]
MM_BENCH = [(4096, 4096, 4096), (8192, 8192, 8192)]
CASES = {"softmax": (softmax_case, ROWS_CHECK, ROWS_BENCH),
         "layer_norm": (layer_norm_case, ROWS_CHECK, ROWS_BENCH),
         "vector_add": (vector_add_case, ROWS_CHECK, ROWS_BENCH),
         "row_sum": (row_sum_case, ROWS_CHECK, ROWS_BENCH),
         "matmul": (matmul_case, MM_CHECK, MM_BENCH),
         "matmul_kn": (matmul_kn_case, MM_CHECK, MM_BENCH),
         "matmul_i8": (matmul_i8_case, MM_CHECK, MM_BENCH),
         "matmul_bf16": (matmul_bf16_case, MM_CHECK, MM_BENCH + [(4096, 4096, 14336)]),
         "matmul_fp8": (matmul_fp8_case, [(1000, 1016, 1040), (128, 256, 128), (4096, 4096, 4096)],
                        MM_BENCH + [(4096, 4096, 14336)]),
         "attention": (attention_case, [(1, 64), (2, 200), (1, 1024)], [(4, 4096)]),
         "attention_kv": (attention_kv_case, [(1, 64), (2, 200), (1, 1024)], [(4, 4096)]),
         "kvcache": (kvcache_case, [(1, 128, 1000), (2, 1, 700), (1, 1024, 4096)],
                     [(1, 4096, 4096)]),
         "per_token_cast": (per_token_cast_case, [(1, 128), (257, 4096), (3, 1024)],
                            [(4096, 4096), (8192, 7168)]),
         "swiglu_cast": (swiglu_cast_case, [(1, 128), (257, 4096), (1024, 4096)],
                         [(4096, 4096), (8192, 7168)]),
         "a16wx": (a16wx_case, [(257, 1040, 1152), (4096, 12288, 4096)],
                   [(16, 12288, 4096), (4096, 12288, 4096)])}


def sizes(text):
    return [tuple(int(x) for x in s.split("x")) for s in text.split(",")]


def poison_tensors(*tensors):
    """Each tensor set to all-ones bytes (NaN in every float type, fp8
    included) so that an element left unwritten counts as wrong."""
    for t in tensors:
        t.view(torch.uint8).fill_(0xFF)


def result_error(rt, case, k, padded_ref):
    """Entry k run once on the case's inputs, its output poisoned first:
    its relative error against the reference (the case's own measure where
    it has one; with padded_ref, the reference for k's config)."""
    poison(case)
    rt.launch(k, rt.args(k, case["args"]))
    torch.cuda.synchronize()
    if "err" in case:  # a case with its own measure (several outputs)
        return case["err"]()
    config = dict(kv.split("=", 1) for kv in
                  rt.lib.tls_kernel_config(k).decode().split() if "=" in kv)
    ref = case["ref_for"](config) if padded_ref and "ref_for" in case else case["ref"]
    return rel_err(case["out"], ref)


def poison(case):
    """Every output of a case poisoned (poison_tensors)."""
    poison_tensors(*case.get("poison", [case["out"]]))


def rel_err(out, ref):
    if torch.isnan(out).any():
        return float("inf")
    return ((out.double() - ref).norm() / ref.norm().clamp_min(1e-30)).item()


# ---------------------------------------------------------------- timing


class Timer:
    def __init__(self):
        self.flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")

    def time(self, fn):
        self.flush.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop)


def profile_once(runs, timer, what):
    """One launch of each run inside a profiler range, L2 flushed before
    it. A run may launch more than one kernel, so each starts with a
    marker, torch's spin_kernel (torch.cuda._sleep): the profiler's
    records from one marker to the next are the run's, and the 'profile'
    lines name the runs in order."""
    cudart = torch.cuda.cudart()
    for key, fn in runs.items():
        timer.flush.zero_()
        torch.cuda.synchronize()
        print(f"profile {what}: {key}", flush=True)
        cudart.cudaProfilerStart()
        torch.cuda._sleep(1)
        fn()
        torch.cuda.synchronize()
        cudart.cudaProfilerStop()


class StandIn(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports a missing host-side package and its submodules as empty
    modules whose every attribute is None (the examples import reference
    implementations, tile_kernels, pandas, that only their main() uses)."""

    def __init__(self, root):
        self.root = root

    def find_spec(self, name, path=None, target=None):
        if name == self.root or name.startswith(self.root + "."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        mod = types.ModuleType(spec.name)
        mod.__path__ = []
        mod.__getattr__ = lambda attr: None
        return mod

    def exec_module(self, module):
        pass


def split_top(text):
    """'a=1,b=(16,16)' -> ['a=1', 'b=(16,16)']: commas inside brackets stay."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def load_tilus(spec):
    """FILE:Class[:name=value,...] from a Tilus script, imported with
    stand-ins for the host modules it may import but not need here; the
    values (Python literals, or tilus dtype names) go to the class."""
    kwargs = {}
    parts = spec.split(":")
    if len(parts) > 2 and "=" in parts[-1]:
        import tilus
        for kv in split_top(parts.pop()):
            key, text = kv.split("=", 1)
            kwargs[key] = getattr(tilus, text) if hasattr(tilus, text) else ast.literal_eval(text)
    path, cls = ":".join(parts[:-1]), parts[-1]
    for name in ("pandas", "tile_kernels"):
        if importlib.util.find_spec(name) is None:
            sys.meta_path.insert(0, StandIn(name))
    loader = importlib.machinery.SourceFileLoader("tilus_case", path)  # .py or .tls
    mod_spec = importlib.util.spec_from_loader("tilus_case", loader)
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    return getattr(mod, cls)(**kwargs)


def main():
    if not torch.cuda.is_available():
        print("kernels_check: no CUDA device", file=sys.stderr)
        sys.exit(3)
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--case", action="append", required=True, help="NAME:PTX:SCRIPT")
    ap.add_argument("--tilus", action="append", default=[], help="NAME:FILE:CLASS[:k=v,...] (k=v: the class's __init__ arguments)")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--tilus-cache", metavar="DIR",
                    help="Tilus's cache folder (its generated CUDA and cubins land there)")
    ap.add_argument("--compare", action="append", default=[], metavar="LABEL=PTX",
                    help="--bench also times the fastest entry of the same script in PTX "
                         "(another build of tlsc, say), as LABEL, once its result at the bench "
                         "size is checked (a failure is counted and not timed)")
    ap.add_argument("--padded-ref", action="store_true",
                    help="softmax: the reference of a script whose ragged tiles' zeros join the "
                         "max and the sum (Tilus's softmax example)")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--a16wx-dtype", default="int4b",
                    help="a16wx: the weight dtype the file was compiled for (-D b_dtype=)")
    ap.add_argument("--check-sizes", type=sizes, help="AxB[xC],... instead of the case's")
    ap.add_argument("--bench-sizes", type=sizes, help="AxB[xC],... instead of the case's")
    ap.add_argument("--entries", metavar="all|SUBSTR,...",
                    help="--bench also times each entry whose name contains one of these "
                         "substrings (all: every entry), on the same protocol, beside the "
                         "tuner's pick (a specialised entry runs through its generic one)")
    ap.add_argument("--profile", action="store_true",
                    help="--bench then runs each timed kernel once more between "
                         "cudaProfilerStart and cudaProfilerStop, in the order of the "
                         "'profile' lines it prints (for ncu --profile-from-start off)")
    opts = ap.parse_args()
    rt = Runtime(opts.lib)
    # --compare modules, loaded once (their fastest entry is tuned per size)
    compare = [(label, rt.load(path)) for label, path in
               (spec.split("=", 1) for spec in opts.compare)]
    A16WX["dtype"] = opts.a16wx_dtype
    tilus = {}
    if opts.tilus and opts.tilus_cache:
        import tilus as tilus_pkg
        tilus_pkg.option.cache_dir(opts.tilus_cache)
    for spec in opts.tilus:
        name, rest = spec.split(":", 1)
        try:
            tilus[name] = load_tilus(rest)
        except Exception as err:  # noqa: BLE001 - Tilus refusing a file is a finding
            print(f"tilus {name}: {type(err).__name__}: {err}", flush=True)
    failures = 0
    for spec in opts.case:
        name, ptx, script = spec.split(":")
        mod = rt.load(ptx)
        A16WX.update(rt=rt, mod=mod)
        kernels = rt.kernels(mod, script)
        if not kernels:
            raise SystemExit(f"{ptx}: no entry of script {script}")
        make, check_sizes, bench_sizes = CASES[name]
        check_sizes = opts.check_sizes or check_sizes
        bench_sizes = opts.bench_sizes or bench_sizes
        for size in check_sizes:
            case = make(*size)
            shape = "x".join(map(str, size))
            worst, worst_k = 0.0, ""
            for k in kernels:
                err = result_error(rt, case, k, opts.padded_ref)
                if err > worst:
                    worst, worst_k = err, rt.lib.tls_kernel_name(k).decode()
            ok = worst <= case["tol"]
            failures += not ok
            print(f"check {name} {shape}: {len(kernels)} entries, worst rel_err {worst:.2e}"
                  f" {worst_k} {'ok' if ok else 'FAIL'}", flush=True)
        if not opts.bench:
            continue
        timer = Timer()
        for size in bench_sizes:
            case = make(*size)
            shape = "x".join(map(str, size))
            best, _ = rt.autotune(mod, script, rt.args(kernels[0], case["args"]))
            arr = rt.args(best, case["args"])
            runs = {"tlsc": lambda: rt.launch(best, arr)}
            if case["torch"]:
                runs["torch"] = case["torch"]
            runs.update(case.get("baselines", {}))
            for k in kernels:  # --entries: chosen entries beside the tuner's pick
                kname = rt.lib.tls_kernel_name(k).decode()
                if opts.entries and (opts.entries == "all" or
                                     any(p in kname for p in opts.entries.split(","))):
                    runs[kname] = (lambda k, a: lambda: rt.launch(k, a))(
                        k, rt.args(k, case["args"]))
            for label, omod in compare:  # checked here, at the bench size, then timed
                obest, _ = rt.autotune(omod, script, rt.args(kernels[0], case["args"]))
                oarr = rt.args(obest, case["args"])
                err = result_error(rt, case, obest, opts.padded_ref)
                ok = err <= case["tol"]
                failures += not ok
                print(f"check {label} {name} {shape} [{rt.lib.tls_kernel_name(obest).decode()}]: "
                      f"rel_err {err:.2e} {'ok' if ok else 'FAIL (not timed)'}", flush=True)
                if ok:
                    runs[label] = (lambda k, a: lambda: rt.launch(k, a))(obest, oarr)
            if name in tilus and case["tilus_args"]:
                # Tilus compiles (and tunes) per size on its first call: its
                # result is checked here, at the bench sizes only
                poison(case)
                try:
                    tilus[name](*case["tilus_args"])
                    torch.cuda.synchronize()
                    err = case["err"]() if "err" in case else rel_err(case["out"], case["ref"])
                    print(f"check tilus {name} {shape}: rel_err {err:.2e}", flush=True)
                    runs["tilus"] = lambda: tilus[name](*case["tilus_args"])
                except Exception as err:  # noqa: BLE001 - a refusal is a finding
                    print(f"tilus {name}: {type(err).__name__}: {err}", flush=True)
                    del tilus[name]
            for fn in runs.values():  # warm-up (Tilus tunes on its first call)
                fn()
            torch.cuda.synchronize()
            times = {key: [] for key in runs}
            for _ in range(opts.rounds):
                for key, fn in runs.items():
                    times[key].append(timer.time(fn))
            med = {key: statistics.median(v) for key, v in times.items()}
            if "flops" in case:
                rate = lambda ms: f"{case['flops'] / ms / 1e9:.0f} TFLOPS"  # noqa: E731
            else:
                rate = lambda ms: f"{case['bytes'] / ms / 1e6:.0f} GB/s"  # noqa: E731
            line = " ".join(f"{key} {ms * 1e3:.1f} us ({rate(ms)})" for key, ms in med.items())
            ratios = " ".join(f"over {key} {med[key] / med['tlsc']:.3f}x"
                              for key in med if key != "tlsc")
            print(f"bench {name} {shape} [{rt.lib.tls_kernel_name(best).decode()}]: {line};"
                  f" tlsc speed-up {ratios}", flush=True)
            runs_entry = rt.lib.tls_kernel_resolve(best, arr, len(arr))
            if runs_entry and runs_entry != best:  # a specialised sibling runs
                print(f"entry {name} {shape}: [{rt.lib.tls_kernel_name(runs_entry).decode()}]"
                      " runs for these arguments", flush=True)
            if opts.profile:
                profile_once(runs, timer, f"{name} {shape}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
