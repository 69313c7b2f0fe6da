#!/usr/bin/env python3
"""ptxemu: runs one entry of a PTX module on the CPU, for tests without a GPU.

A small interpreter for the straight-line register code tlsc emits for
element-wise kernels (integer and bit operations, prmt, lop3, float16 and
bfloat16 arithmetic, conversions, global and shared loads and stores,
atomics, uniform branches, warp shuffles, cp.async (done at once),
ldmatrix, mma.sync: float16/bfloat16 into float32, 8-bit integers into
int32). The threads of a block run in lockstep; a
branch must go the same way in every thread of the block (tlsc's
aligned/unaligned copies do), a barrier is where every thread already is,
shared memory is a window at address 3072 (PTXEMU_SMEM_AT moves it), and an instruction it does not
know is an error, never a guess. Registers hold bit patterns (Python ints); float
results are rounded to nearest even, as the GPU's .rn does: 16-bit ones
from the exact value (a double holds every product and sum of two), 32-bit
ones from the double (exact for products; a sum of far-apart values can be
rounded twice, which the kernels tested here never meet).

    mod = Module(open("k.ptx").read())
    mem = Memory(); src = mem.alloc(bytes_); out = mem.alloc(bytearray(n))
    mod.run("Entry", grid=1, block=128, args=[blocks, src, out], mem=mem)
"""
import math
import os
import re
import struct

MASK = {8: 0xFF, 16: 0xFFFF, 32: 0xFFFFFFFF, 64: 0xFFFFFFFFFFFFFFFF}


class EmuError(Exception):
    pass


# ------------------------------------------------------------ floats

def f16_value(bits):
    return struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0]


def packed_bits(x, fmt, bits_fmt, nan, inf):
    """x (a Python float, exact) rounded by struct to the float format fmt,
    nearest even, as bits; inf (with x's sign) past the range."""
    if math.isnan(x):
        return nan
    try:
        return struct.unpack(bits_fmt, struct.pack(fmt, x))[0]
    except OverflowError:
        return inf if x > 0 else inf | (1 << (8 * struct.calcsize(bits_fmt) - 1))


def f16_bits(x):
    return packed_bits(x, "<e", "<H", 0x7E00, 0x7C00)


def bf16_value(bits):
    return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]


def bf16_bits(x):
    """x rounded to bfloat16, nearest even (from the exact double, not via float32)."""
    if math.isnan(x):
        return 0x7FC0
    sign = 0x8000 if math.copysign(1.0, x) < 0 else 0
    a = abs(x)
    if a == 0:
        return sign
    if math.isinf(a):
        return sign | 0x7F80
    m, e = math.frexp(a)  # a = m 2^e, m in [0.5, 1)
    e = max(e, -125)  # below 2^-126 the unit stays 2^-133 (subnormals)
    unit = math.ldexp(1.0, e - 8)
    q = a / unit  # exact: a power-of-two scaling
    r = math.floor(q)
    if q - r > 0.5 or (q - r == 0.5 and r % 2 == 1):
        r += 1
    v = r * unit
    if v >= math.ldexp(1.0, 128):
        return sign | 0x7F80
    return sign | (struct.unpack("<I", struct.pack("<f", v))[0] >> 16)


def f32_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def f32_bits(x):
    return packed_bits(x, "<f", "<I", 0x7FC00000, 0x7F800000)


HALF = {"f16": (f16_value, f16_bits), "bf16": (bf16_value, bf16_bits)}


def _div(x, y):
    """x / y with IEEE's answers for a zero divisor."""
    if y:
        return x / y
    if x != x or not x:
        return math.nan
    return math.copysign(math.inf, x) * math.copysign(1.0, y)


# float32 functions: computed in double, rounded once to float32. The
# .approx forms on the GPU are within a few ulps of these, not equal:
# a test of them compares by relative error.
FLOAT_MATH = {
    "lg2": lambda x: math.log2(x) if x > 0 else (-math.inf if x == 0 else math.nan),
    "ex2": lambda x: 2.0 ** x if x < 1024 else math.inf,
    "sin": math.sin, "cos": math.cos,
    "sqrt": lambda x: math.sqrt(x) if x >= 0 else math.nan,
    "rsqrt": lambda x: 1 / math.sqrt(x) if x > 0 else (math.inf if x == 0 else math.nan),
    "rcp": lambda x: _div(1.0, x),
    "div": _div,
    "abs": abs, "neg": lambda x: -x,
}


def fop(op, vals):
    """The exact result of a float operation on Python floats (doubles hold
    every product and sum of 16-bit floats exactly), before rounding."""
    if op == "add":
        return vals[0] + vals[1]
    if op == "sub":
        return vals[0] - vals[1]
    if op == "mul":
        return vals[0] * vals[1]
    if op == "fma":
        return vals[0] * vals[1] + vals[2]
    if op in ("min", "max"):  # a NaN operand gives the other, as PTX does
        nums = [v for v in vals if not math.isnan(v)] or [math.nan]
        return min(nums) if op == "min" else max(nums)
    raise EmuError(f"float op {op}")


# ------------------------------------------------------------ memory

class Memory:
    """Global memory: buffers at fake, 256-byte aligned addresses."""

    def __init__(self):
        self.bufs = []  # (base, bytearray)
        self.next = 0x10000000

    def alloc(self, data):
        buf = bytearray(data)
        base = self.next
        self.bufs.append((base, buf))
        self.next += (len(buf) + 0xFFFF) & ~0xFFF
        return base

    def where(self, addr, size):
        for base, buf in self.bufs:
            if base <= addr and addr + size <= base + len(buf):
                return buf, addr - base
        raise EmuError(f"access of {size} bytes at {addr:#x} outside every buffer")

    def load(self, addr, size):
        buf, off = self.where(addr, size)
        return int.from_bytes(buf[off:off + size], "little")

    def store(self, addr, size, value):
        buf, off = self.where(addr, size)
        buf[off:off + size] = (value & MASK[size * 8]).to_bytes(size, "little")

    def data(self, addr):
        for base, buf in self.bufs:
            if base == addr:
                return buf
        raise EmuError(f"no buffer at {addr:#x}")


def differ(mem, checks, width=4, canon=lambda w: w):
    """For each (name, address, expected words): the words of `width`
    bytes at address against the expected ones (both through canon), one
    line printed per check; the count of words that differ."""
    bad = 0
    for name, addr, ref in checks:
        data = mem.data(addr)
        got = [int.from_bytes(data[width * i:width * i + width], "little") for i in range(len(ref))]
        wrong = sum(canon(g) != canon(r) for g, r in zip(got, ref))
        print(f"{name}: {wrong} of {len(ref)} differ {'FAIL' if wrong else 'PASS'}")
        bad += wrong
    return bad


# ------------------------------------------------------------ parsing

def split_operands(text):
    """'a, {b, c}, [d+1]' -> ['a', '{b, c}', '[d+1]']"""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class Instr:
    def __init__(self, text, line):
        self.line = line
        self.pred, self.neg = None, False
        m = re.match(r"@(!?)(%\w+)\s+(.*)", text)
        if m:
            self.neg, self.pred, text = m.group(1) == "!", m.group(2), m.group(3)
        parts = text.split(None, 1)
        self.op = parts[0]
        self.args = split_operands(parts[1]) if len(parts) > 1 else []


class Entry:
    def __init__(self, name, params, body):
        self.name, self.params = name, params
        self.code, self.labels = [], {}
        for line in body:
            line = line.split("//")[0].strip()
            if not line or line.startswith(".") or line in ("{", "}"):
                continue
            if line.endswith(":"):
                self.labels[line[:-1]] = len(self.code)
                continue
            self.code.append(Instr(line.rstrip(";").strip(), line))


class Module:
    def __init__(self, text):
        self.entries = {}
        lines = text.split("\n")
        i = 0
        while i < len(lines):
            m = re.match(r"\.visible \.entry (\w+)\(", lines[i])
            if not m:
                i += 1
                continue
            name, params = m.group(1), []
            i += 1
            while not lines[i].startswith(")"):
                pm = re.match(r"\s*\.param \.(\w+) (\w+)", lines[i])
                params.append((pm.group(2), pm.group(1)))
                i += 1
            while lines[i].strip() != "{":
                i += 1
            body, depth = [], 0
            while True:
                ln = lines[i]
                depth += ln.count("{") - ln.count("}")
                body.append(ln)
                i += 1
                if depth == 0:
                    break
            self.entries[name] = Entry(name, params, body[1:-1])

    def run(self, name, grid, block, args, mem, smem=48 * 1024, smem_at=None):
        """Runs the entry over `grid` blocks (a count, or an (x, y, z)
        tuple) of `block` threads, one after another, x fastest, each with
        `smem` bytes of shared memory at address `smem_at`: by default
        the environment's PTXEMU_SMEM_AT, else 3072, so that the 1024-aligned
        base a kernel rounds its window to has bits 10 and 11 set, as the
        GPU's may: an address computed as if the base were a multiple of
        2048 or 4096 goes wrong here (a staging tile's xor did, on the GPU
        only, while this window started at 0)."""
        if smem_at is None:
            smem_at = int(os.environ.get("PTXEMU_SMEM_AT", "3072"))
        entry = self.entries[name]
        params = {p[0]: (f32_bits(v) if isinstance(v, float) and p[1] == "f32" else v, p[1])
                  for p, v in zip(entry.params, args)}  # a float32 argument: its bits
        dims = tuple(grid) + (1,) * (3 - len(grid)) if isinstance(grid, (tuple, list)) else (grid, 1, 1)
        for z in range(dims[2]):
            for y in range(dims[1]):
                for x in range(dims[0]):
                    Block(entry, params, (x, y, z), block, mem, smem, dims, smem_at).run()


# ------------------------------------------------------------ execution

def parse_imm(tok):
    t = tok.strip()
    if re.match(r"^-?0[fF][0-9a-fA-F]{8}$", t):
        return int(t[2:], 16)
    if re.match(r"^-?0[dD][0-9a-fA-F]{16}$", t):
        return int(t[2:], 16)
    return int(t, 0)


def type_of(op):
    """The last type suffix of an opcode: ('u', 32), ('s', 64), ('b', 16),
    ('f', 16), ('bf', 16), ('pred', 1), with x2 for packed pairs."""
    for suf in reversed(op.split(".")):
        m = re.match(r"^(bf|[usbf])(\d+)(x2)?$", suf)
        if m:
            return m.group(1), int(m.group(2)), bool(m.group(3))
        if suf == "pred":
            return "pred", 1, False
    return None


def sext(v, bits):
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


class Block:
    def __init__(self, entry, params, cta, nthreads, mem, smem, grid=(1, 1, 1), smem_at=0):
        self.e, self.params, self.mem = entry, params, mem
        self.n = nthreads
        self.cta = cta if isinstance(cta, tuple) else (cta, 0, 0)
        self.special = {"%ntid.x": nthreads, "%tid.y": 0, "%tid.z": 0, "%ntid.y": 1, "%ntid.z": 1}
        for i, d in enumerate("xyz"):
            self.special["%ctaid." + d] = self.cta[i]
            self.special["%nctaid." + d] = grid[i]
        self.regs = [dict() for _ in range(nthreads)]
        self.smem_at = smem_at  # the `.shared` window: addresses 0 .. smem_at + smem
        self.shared = bytearray(smem_at + smem)

    def val(self, t, tok):
        tok = tok.strip()
        if tok.startswith("%"):
            if tok == "%tid.x":
                return t
            if tok == "%laneid":
                return t % 32
            if tok in self.special:
                return self.special[tok]
            if tok not in self.regs[t]:
                raise EmuError(f"{tok} read before written")
            return self.regs[t][tok]
        if re.match(r"^[A-Za-z_]\w*$", tok):  # a .shared array's name: the window's start
            return self.smem_at
        return parse_imm(tok)

    def set(self, t, tok, v):
        self.regs[t][tok.strip()] = v

    def addr(self, t, tok):
        """[reg+imm] or [reg]: the address in thread t (parameters are read
        by exec1's ld.param, never through here)."""
        m = re.match(r"\[([%\w.]+)\s*(?:\+\s*(-?\w+))?\]", tok)
        return self.val(t, m.group(1)) + (int(m.group(2), 0) if m.group(2) else 0)

    def run(self):
        pc = 0
        code = self.e.code
        while pc < len(code):
            ins = code[pc]
            active = [not ins.pred or (bool(self.val(t, ins.pred)) != ins.neg)
                      for t in range(self.n)]
            if ins.op == "bra" or ins.op.startswith("bra."):
                if any(active) and not all(active):
                    raise EmuError(f"divergent branch: {ins.line}")
                pc = self.e.labels[ins.args[0]] if active[0] else pc + 1
                continue
            if ins.op == "ret" or ins.op == "exit":
                return
            if ins.op.startswith(("bar.sync", "barrier.sync")):  # lockstep: every thread is there
                if not all(active):
                    raise EmuError(f"barrier under a predicate: {ins.line}")
                pc += 1
                continue
            if ins.op.startswith(("shfl.sync.idx", "shfl.sync.bfly")):
                self.shfl(ins, active)
            elif ins.op.startswith("ldmatrix.sync.aligned.m8n8"):
                self.ldmatrix(ins, active)
            elif ins.op.startswith("mma.sync.aligned.m16n8k"):
                self.mma(ins, active)
            elif ins.op in ("cp.async.commit_group", "cp.async.wait_all") or \
                    ins.op.startswith("cp.async.wait_group"):
                pass  # cp.async completes at once (an order the GPU may take)
            else:
                for t in range(self.n):
                    if active[t]:
                        self.exec1(t, ins)
            pc += 1

    def shfl(self, ins, active):
        """idx: lane b's a; bfly: lane (own ^ b)'s a (every lane of the warp
        active: tlsc's shuffles are whole-warp)."""
        d, a, lane, _, _ = ins.args
        src = [self.val(t, a) for t in range(self.n)]
        bfly = ".bfly" in ins.op
        for t in range(self.n):
            if active[t]:
                b = self.val(t, lane) & 31
                self.set(t, d, src[t - t % 32 + ((t % 32) ^ b if bfly else b)])

    def warps(self, ins, active):
        """The warps a warp-wide instruction runs in: every lane active."""
        for w in range(0, self.n, 32):
            lanes = active[w:w + 32]
            if any(lanes) and not all(lanes):
                raise EmuError(f"warp-wide instruction in part of a warp: {ins.line}")
            if lanes[0]:
                yield w

    def ldmatrix(self, ins, active):
        """ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: lane l
        gives the address of row l % 8 of matrix l // 8; register i of lane
        l gets row l // 4, columns 2 (l % 4) and + 1 of matrix i (of its
        transpose with .trans), low half first."""
        count = int(re.search(r"\.x(\d)", ins.op).group(1))
        trans = ".trans" in ins.op
        dst = [p.strip() for p in ins.args[0].strip("{}").split(",")]
        if len(dst) != count:
            raise EmuError(f"vector width: {ins.line}")
        for w in self.warps(ins, active):
            rows = [self.addr(w + l, ins.args[1]) for l in range(8 * count)]
            for lane in range(32):
                for i in range(count):
                    halves = []
                    for j in range(2):
                        r, c = (2 * (lane % 4) + j, lane // 4) if trans else (lane // 4, 2 * (lane % 4) + j)
                        halves.append(self.read(rows[8 * i + r] + 2 * c, 2, True))
                    self.set(w + lane, dst[i], halves[0] | halves[1] << 16)

    def mma(self, ins, active):
        """mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.same.f32 and
        m16n8k32.row.col.s32.s8.s8.s32 (u8 too), with the PTX ISA's
        fragments: lane l, group g = l // 4, t = l % 4; an A register holds
        row g or g + 8 and e = 2 (f16) or 4 (8-bit) consecutive columns from
        e t, + K/2 for registers 2 and 3; a B register column g, rows from
        e t (+ K/2); C and D rows g and g + 8, columns 2t and 2t + 1. Each
        sum is exact, rounded once to float32: the tests use values whose
        sums float32 holds exactly, where every order the GPU may take
        agrees; integer sums wrap to 32 bits."""
        shape = re.search(r"\.m16n8k(\d+)\.", ins.op)
        types = ins.op.split(".")[-4:]
        K = int(shape.group(1))
        floats = types[1] in ("f16", "bf16")
        if types[1] != types[2] or (floats and (K, types[0], types[3]) != (16, "f32", "f32")) or \
                (not floats and (K, types[0], types[3], types[1] in ("s8", "u8")) != (32, "s32", "s32", True)):
            raise EmuError(f"unsupported mma: {ins.line}")
        e, bits = (2, 16) if floats else (4, 8)
        value = {"f16": f16_value, "bf16": bf16_value, "s8": lambda v: sext(v, 8),
                 "u8": lambda v: v}[types[1]]
        d, a, b, c = ([p.strip() for p in x.strip("{}").split(",")] for x in ins.args)
        for w in self.warps(ins, active):
            A = [[0] * K for _ in range(16)]
            B = [[0] * 8 for _ in range(K)]
            C = [[0] * 8 for _ in range(16)]
            for lane in range(32):
                g, tq = lane // 4, lane % 4
                for i, r in enumerate(a):
                    v = self.val(w + lane, r)
                    row, col = g + 8 * (i % 2), e * tq + K // 2 * (i // 2)
                    for j in range(e):
                        A[row][col + j] = value(v >> (bits * j) & MASK[bits])
                for i, r in enumerate(b):
                    v = self.val(w + lane, r)
                    for j in range(e):
                        B[e * tq + K // 2 * i + j][g] = value(v >> (bits * j) & MASK[bits])
                cv = [self.val(w + lane, r) for r in c]
                cv = [f32_value(x) for x in cv] if floats else [sext(x, 32) for x in cv]
                C[g][2 * tq], C[g][2 * tq + 1], C[g + 8][2 * tq], C[g + 8][2 * tq + 1] = cv
            for lane in range(32):
                g, tq = lane // 4, lane % 4
                for i, (row, col) in enumerate(((g, 2 * tq), (g, 2 * tq + 1), (g + 8, 2 * tq),
                                                (g + 8, 2 * tq + 1))):
                    terms = [C[row][col]] + [A[row][k] * B[k][col] for k in range(K)]
                    out = f32_bits(math.fsum(terms)) if floats else sum(terms) & MASK[32]
                    self.set(w + lane, d[i], out)

    def cp_async(self, t, ins):
        """cp.async.{ca,cg}.shared.global[.L2::NB] [dst], [src], size
        [, src-size | , ignore-src]: copies at once; bytes past src-size,
        or all of them under ignore-src, are zeros."""
        a = ins.args
        size = parse_imm(a[2])
        keep = size
        if len(a) > 3:
            extra = a[3].strip()
            if extra.startswith("%p"):
                keep = 0 if self.val(t, extra) else size
            else:
                keep = min(size, self.val(t, extra))
        src, dst = self.addr(t, a[1]), self.addr(t, a[0])
        data = self.mem.load(src, keep) if keep else 0
        self.write(dst, size, data, True)

    def exec1(self, t, ins):
        op, a = ins.op, ins.args
        head = op.split(".")[0]
        if op.startswith("cp.async.") and ".shared.global" in op:
            self.cp_async(t, ins)
            return
        ty = type_of(op)
        if head == "ld" and ".param" in op:
            value, _ = self.params[a[1].strip("[]")]
            self.set(t, a[0], value)
            return
        if head in ("ld", "st"):
            self.memop(t, ins, head == "ld")
            return
        if head in ("atom", "red"):
            self.atomic(t, ins)
            return
        if head == "mov":
            self.mov(t, a, ty)
            return
        if head == "cvta":
            self.set(t, a[0], self.val(t, a[1]))
            return
        if head == "cvt":
            self.cvt(t, op, a)
            return
        if head == "setp":
            self.setp(t, op, a)
            return
        if head == "selp":
            self.set(t, a[0], self.val(t, a[1]) if self.val(t, a[3]) else self.val(t, a[2]))
            return
        if ty and ty[0] in ("f", "bf") and ty[1] in (16, 32) and head in ("add", "sub", "mul", "fma",
                                                                           "min", "max"):
            self.float_op(t, head, ty, a)
            return
        if ty and ty[:2] == ("f", 32) and head in FLOAT_MATH:
            x = [f32_value(self.val(t, r)) for r in a[1:]]
            try:
                v = FLOAT_MATH[head](*x)
            except (OverflowError, ValueError, ZeroDivisionError):
                v = float("nan")
            self.set(t, a[0], f32_bits(v))
            return
        self.int_op(t, op, head, ty, a)

    def mov(self, t, a, ty):
        dst, src = a[0], a[1]
        if dst.startswith("{"):  # unpack: mov.b32 {lo, hi}, r
            parts = [p.strip() for p in dst.strip("{}").split(",")]
            v, w = self.val(t, src), 32 // len(parts)
            for i, p in enumerate(parts):
                self.set(t, p, (v >> (w * i)) & MASK[w])
            return
        if src.startswith("{"):  # pack
            parts = [p.strip() for p in src.strip("{}").split(",")]
            w = ty[1] // len(parts)
            v = 0
            for i, p in enumerate(parts):
                v |= (self.val(t, p) & MASK[w]) << (w * i)
            self.set(t, dst, v)
            return
        bits = ty[1] if ty and ty[1] > 1 else 32
        v = self.val(t, src)
        self.set(t, dst, v if ty and ty[0] == "pred" else v & MASK[bits])

    def memop(self, t, ins, load):
        op, a = ins.op, ins.args
        kind, bits, _ = type_of(op)
        vec = 4 if ".v4" in op else 2 if ".v2" in op else 1
        size = bits // 8
        regs = a[0] if load else a[1]
        regs = [p.strip() for p in regs.strip("{}").split(",")]
        if len(regs) != vec:
            raise EmuError(f"vector width: {ins.line}")
        addr = self.addr(t, a[1] if load else a[0])
        shared = ".shared" in op
        for i, r in enumerate(regs):
            if load:
                v = self.read(addr + i * size, size, shared)
                self.set(t, r, sext(v, bits) & MASK[32] if kind == "s" else v)
            else:
                self.write(addr + i * size, size, self.val(t, r), shared)

    def read(self, at, size, shared):
        """size bytes at `at` of the shared window or of global memory."""
        if not shared:
            return self.mem.load(at, size)
        self.check_shared(at, size)
        return int.from_bytes(self.shared[at:at + size], "little")

    def write(self, at, size, value, shared):
        if not shared:
            self.mem.store(at, size, value)
            return
        self.check_shared(at, size)
        self.shared[at:at + size] = (value & ((1 << 8 * size) - 1)).to_bytes(size, "little")

    def check_shared(self, at, size):
        if not (0 <= at and at + size <= len(self.shared)):
            raise EmuError(f"shared access of {size} bytes at {at} outside the window")

    def atomic(self, t, ins):
        """atom (the old value to its destination) and red: add, max, min,
        exch and cas on 32-bit integers and float32 add, one thread after
        another (the threads' order is one the GPU may take)."""
        op, a = ins.op, ins.args
        kind, bits, _ = type_of(op)
        name = next(n for n in ("add", "max", "min", "exch", "cas") if "." + n + "." in op + ".")
        at = a[1] if op.startswith("atom") else a[0]
        vals = a[2:] if op.startswith("atom") else a[1:]
        addr = self.addr(t, at)
        shared = ".shared" in op
        old = self.read(addr, 4, shared)
        b = self.val(t, vals[0])
        if kind == "f":
            new = f32_bits(f32_value(old) + f32_value(b))
        elif name in ("max", "min"):
            x, y = (sext(old, 32), sext(b, 32)) if kind == "s" else (old, b & MASK[32])
            new = (max if name == "max" else min)(x, y)
        elif name == "exch":
            new = b
        elif name == "cas":
            new = self.val(t, vals[1]) if old == b & MASK[32] else old
        else:
            new = old + b
        self.write(addr, 4, new, shared)
        if op.startswith("atom"):
            self.set(t, a[0], old)

    def cvt(self, t, op, a):
        parts = op.split(".")
        types = [p for p in parts if re.match(r"^(bf|[usf])\d+$", p)]
        dst_t, src_t = types[0], types[1]
        v = self.val(t, a[1])
        sk, sb = re.match(r"([a-z]+)(\d+)", src_t).groups()
        dk, db = re.match(r"([a-z]+)(\d+)", dst_t).groups()
        sb, db = int(sb), int(db)
        if sk in ("u", "s"):
            x = sext(v, sb) if sk == "s" else v & MASK[sb]
            if dk in ("u", "s"):  # truncated to the destination's bits
                self.set(t, a[0], x & MASK[db])
                return
            num = float(x)
        elif sk == "f" and sb == 16:
            num = f16_value(v)
        elif sk == "bf":
            num = bf16_value(v)
        elif sk == "f" and sb == 32:
            num = f32_value(v)
        else:
            raise EmuError(f"cvt from {src_t}")
        to_int = {"rni": round, "rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}
        mode = next((m for m in to_int if "." + m in op), None)
        if mode and math.isfinite(num):  # to an integer (rni: ties to even), sign kept
            num = math.copysign(float(to_int[mode](num)), num)
        if dk in ("u", "s"):
            raise EmuError(f"cvt from a float to {dst_t}")
        if dk == "f" and db == 16:
            self.set(t, a[0], f16_bits(num))
        elif dk == "bf":
            self.set(t, a[0], bf16_bits(num))
        elif dk == "f" and db == 32:
            self.set(t, a[0], f32_bits(num))
        else:
            raise EmuError(f"cvt to {dst_t}")

    def setp(self, t, op, a):
        cmp_, (kind, bits, _) = op.split(".")[1], type_of(op)
        x, y = self.val(t, a[1]), self.val(t, a[2])
        unordered = False
        if kind in ("f", "bf"):  # with a NaN, ordered compares are false and
            to_val = {32: f32_value, 16: f16_value}[bits] if kind == "f" else bf16_value
            x, y = to_val(x), to_val(y)  # unordered ones (equ, neu, ...) true
            unordered = math.isnan(x) or math.isnan(y)
            if cmp_.endswith("u"):
                cmp_ = cmp_[:-1]
                if unordered:
                    self.set(t, a[0], True)
                    return
        elif kind == "s":
            x, y = sext(x, bits), sext(y, bits)
        else:
            x, y = x & MASK[bits], y & MASK[bits]
        r = {"lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y, "eq": x == y,
             "ne": x != y}[cmp_] and not unordered
        if len(a) > 3:  # setp.op.bool: combined with a predicate
            comb = op.split(".")[2]
            p = bool(self.val(t, a[3].lstrip("!"))) != a[3].startswith("!")
            r = {"and": r and p, "or": r or p, "xor": r != p}[comb]
        self.set(t, a[0], r)

    def float_op(self, t, head, ty, a):
        kind, bits, pair = ty
        if bits == 32:
            vals = [f32_value(self.val(t, x)) for x in a[1:]]
            self.set(t, a[0], f32_bits(fop(head, vals)))
            return
        to_val, to_bits = HALF["bf16" if kind == "bf" else "f16"]
        lanes = 2 if pair else 1
        r = 0
        for lane in range(lanes):
            vals = [to_val((self.val(t, x) >> (16 * lane)) & 0xFFFF) for x in a[1:]]
            try:
                x = fop(head, vals)
            except (OverflowError, ValueError):
                x = float("nan")
            r |= to_bits(x) << (16 * lane)
        self.set(t, a[0], r)

    def int_op(self, t, op, head, ty, a):
        if ty is None:
            raise EmuError(f"unknown instruction {op}")
        kind, bits, _ = ty
        w = max(bits, 32) if kind != "pred" else 1
        g = lambda i: self.val(t, a[i])  # noqa: E731
        if kind == "pred":
            v = {"and": lambda: g(1) and g(2), "or": lambda: g(1) or g(2),
                 "xor": lambda: g(1) != g(2), "not": lambda: not g(1)}[head]()
            self.set(t, a[0], bool(v))
            return
        m = MASK[w]
        if head == "add":
            v = g(1) + g(2)
        elif head == "sub":
            v = g(1) - g(2)
        elif head == "mul" and ".lo" in op:
            v = g(1) * g(2)
        elif head == "mul" and ".wide" in op:
            x, y = g(1), g(2)
            if kind == "s":
                x, y = sext(x, bits), sext(y, bits)
            v, m = x * y, MASK[2 * bits]
        elif head == "mad" and ".lo" in op:
            v = g(1) * g(2) + g(3)
        elif head == "mad" and ".wide" in op:
            x, y = g(1), g(2)
            if kind == "s":
                x, y = sext(x, bits), sext(y, bits)
            v, m = x * y + g(3), MASK[2 * bits]
        elif head in ("min", "max"):
            x, y = g(1), g(2)
            if kind == "s":
                x, y = sext(x, bits), sext(y, bits)
            v = min(x, y) if head == "min" else max(x, y)
        elif head == "and":
            v = g(1) & g(2)
        elif head == "or":
            v = g(1) | g(2)
        elif head == "xor":
            v = g(1) ^ g(2)
        elif head == "not":
            v = ~g(1)
        elif head == "neg":
            v = -g(1)
        elif head == "shl":
            s = g(2)
            v = g(1) << s if s < w else 0
        elif head == "shr":
            s, x = g(2), g(1) & m
            if kind == "s":
                v = sext(x, w) >> min(s, w - 1)
            else:
                v = x >> s if s < w else 0
        elif head == "bfe":
            x, pos, ln = g(1) & m, g(2) & 0xFF, g(3) & 0xFF
            f = (x >> pos) & ((1 << ln) - 1) if ln else 0
            v = sext(f, ln) if kind == "s" and ln else f
        elif head == "prmt":
            v = prmt(g(1), g(2), g(3))
        elif head == "lop3":
            v = lop3(g(1), g(2), g(3), g(4))
        else:
            raise EmuError(f"unknown instruction {op}")
        self.set(t, a[0], v & m)


def prmt(a, b, sel):
    """prmt.b32 default mode: result byte i is byte (sel nibble i & 7) of
    {b, a}, or that byte's sign replicated when the nibble's bit 3 is set."""
    src = [(a >> (8 * i)) & 0xFF for i in range(4)] + [(b >> (8 * i)) & 0xFF for i in range(4)]
    r = 0
    for i in range(4):
        n = (sel >> (4 * i)) & 0xF
        byte = src[n & 7]
        if n & 8:
            byte = 0xFF if byte & 0x80 else 0
        r |= byte << (8 * i)
    return r


def lop3(a, b, c, lut):
    """Bit by bit, the bit of lut at index (a << 2 | b << 1 | c)."""
    r = 0
    for i in range(32):
        idx = ((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1)
        r |= ((lut >> idx) & 1) << i
    return r
