"""The tlsc Python package on the GPU: vector add and matmul_v5 against
torch, keyword arguments, an explicit stream, autotuning, tlsc.torch_op.
Exits 3 (run.sh: skipped) without torch or a CUDA device; 1 on a failure.
Run by ctest with TLSC, TLSC_LIB and TLSC_SOURCE_DIR set.
"""
import os
import sys
import tempfile
import threading

try:
    import torch
except ImportError:
    print("test_gpu: no torch here: skipped")
    sys.exit(3)
if not torch.cuda.is_available():
    print("test_gpu: no CUDA device: skipped")
    sys.exit(3)

SRC = os.environ.get("TLSC_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
os.environ.setdefault("TLSC_CACHE", tempfile.mkdtemp(prefix="tlsc-py-gpu-",
                                                     dir=os.environ.get("TLSC_TEST_TMP")))
import tlsc  # noqa: E402

failures = 0


def check(what, ok, detail=""):
    global failures
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {what} {detail}", flush=True)


def rel_err(out, ref):
    if torch.isnan(out).any():
        return float("inf")
    return ((out.double() - ref).norm() / ref.norm().clamp_min(1e-30)).item()


torch.manual_seed(0)
vadd = tlsc.load(os.path.join(SRC, "examples", "vector_add.tls"), offline=False)
check("online context", vadd.ctx.online, repr(vadd.ctx))
for n in (1000003, 1 << 20):
    a = torch.randn(n, device="cuda")
    b = torch.randn(n, device="cuda")
    c = torch.full_like(a, float("nan"))
    vadd.VectorAdd(n, a, b, c)
    torch.cuda.synchronize()
    check(f"vector_add n={n}", torch.equal(c, a + b))
    c.fill_(float("nan"))
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):  # torch's current stream
        vadd.VectorAdd(n, a_ptr=a, b_ptr=b, c_ptr=c)
    s.synchronize()
    check(f"vector_add n={n} keywords, torch stream", torch.equal(c, a + b))



class ProducedOn:
    """A tensor as another library hands it over: __cuda_array_interface__
    version 3, naming the stream that may still be writing it."""

    def __init__(self, tensor, stream):
        self.tensor = tensor
        self.__cuda_array_interface__ = dict(tensor.__cuda_array_interface__, version=3,
                                             stream=stream)


# The producer's stream is busy for a while before it writes a; the launch,
# on another stream, must wait for it (tls_stream_wait), not read zeros.
n = 1 << 22
a = torch.zeros(n, device="cuda")
b = torch.ones(n, device="cuda")
c = torch.full_like(a, float("nan"))
producer, consumer = torch.cuda.Stream(), torch.cuda.Stream()
torch.cuda.synchronize()
with torch.cuda.stream(producer):
    torch.cuda._sleep(100_000_000)  # about 50 ms of GPU time
    a.fill_(2.0)
with torch.cuda.stream(consumer):
    vadd.VectorAdd(n, ProducedOn(a, producer.cuda_stream), b, c)
torch.cuda.synchronize()
check("waits for the producer's stream", bool((c == 3.0).all()),
      f"{int((c == 3.0).sum())} of {n} right")

# A launch from a thread that never touched CUDA (libtlsrt makes its
# context current there).
result = {}


def launch_in_thread():
    try:
        cc = torch.full_like(a, float("nan"))
        vadd.VectorAdd(n, a, b, cc, stream=0)
        vadd.ctx.synchronize()
        result["c"] = cc
    except Exception as err:  # noqa: BLE001 - reported by the check below
        result["err"] = err


worker = threading.Thread(target=launch_in_thread)
worker.start()
worker.join()
check("launch from another thread", "c" in result and bool((result["c"] == 3.0).all()),
      repr(result.get("err", "")))

try:
    vadd.VectorAdd(10, torch.zeros(10, device="cuda", dtype=torch.float16),
                   torch.zeros(10, device="cuda"), torch.zeros(10, device="cuda"))
    check("dtype refused", False)
except tlsc.ArgTypeError as e:
    check("dtype refused", "must be ptr f32" in str(e), str(e))
try:
    vadd.VectorAdd(10, torch.zeros(10), torch.zeros(10, device="cuda"),
                   torch.zeros(10, device="cuda"))
    check("cpu tensor refused", False)
except tlsc.ArgValueError as e:
    check("cpu tensor refused", "not on a CUDA device" in str(e), str(e))

mm = tlsc.load(os.path.join(SRC, "examples", "matmul_v5.tls"))
for m, n, k in ((1000, 1016, 1032), (4096, 4096, 4096), (128, 256, 64)):
    a = (torch.rand(m, k, dtype=torch.float16, device="cuda") - 0.5) / k ** 0.5
    b = (torch.rand(n, k, dtype=torch.float16, device="cuda") - 0.5) / k ** 0.5
    c = torch.full((m, n), float("nan"), dtype=torch.float16, device="cuda")
    mm.MatmulWGMMAV5(m, n, k, a, b, c)
    torch.cuda.synchronize()
    err = rel_err(c, a.double() @ b.double().T)
    check(f"matmul_v5 {m}x{n}x{k}", err < 2e-3, f"rel_err {err:.2e}")
try:
    mm.MatmulWGMMAV5(m, n, k, a.T, b, c)
    check("non-contiguous A refused", False)
except tlsc.ArgValueError as e:
    check("non-contiguous A refused", "must be contiguous" in str(e), str(e))

add = tlsc.load(os.path.join(SRC, "tests", "package", "consumer", "add.tls"))
n = 1 << 22
a = torch.randn(n, device="cuda", dtype=torch.float16)
b = torch.randn(n, device="cuda", dtype=torch.float16)
c = torch.empty_like(a)
best = add.autotune("Add", n, a, b, c, reps=5)
torch.cuda.synchronize()
check("autotune Add", best.script == "Add" and torch.equal(c, (a.float() + b.float()).half()),
      f"{best.name} {best.tuned_ms:.3f} ms")
tuner = add.autotuned("Add")
check("autotune choice cached", len(tuner.choices) == 1 and add.autotune("Add", n, a, b, c) is best)

op = tlsc.torch_op("tlsc_test::matmul_nt", mm.MatmulWGMMAV5,
                   output=lambda a, b: ((a.shape[0], b.shape[0]), a.dtype),
                   args=lambda a, b, c: (a.shape[0], b.shape[0], a.shape[1], a, b, c))
a = (torch.rand(512, 256, dtype=torch.float16, device="cuda") - 0.5) / 16
b = (torch.rand(384, 256, dtype=torch.float16, device="cuda") - 0.5) / 16
c = op(a, b)
torch.cuda.synchronize()
check("torch_op", rel_err(c, a.double() @ b.double().T) < 2e-3)
meta = op(a.to("meta"), b.to("meta"))
check("torch_op fake", tuple(meta.shape) == (512, 384) and meta.dtype == torch.float16)
try:  # the custom op inside a compiled graph, without a graph break
    compiled = torch.compile(lambda x, y: op(x, y) * 2.0, fullgraph=True)
    c2 = compiled(a, b)
    torch.cuda.synchronize()
    check("torch_op in torch.compile", rel_err(c2, 2.0 * (a.double() @ b.double().T)) < 2e-3)
except Exception as err:  # noqa: BLE001 - a refusal is a failure, with its message
    check("torch_op in torch.compile", False, f"{type(err).__name__}: {err}")

sys.exit(1 if failures else 0)
