"""The tlsc Python package on the CPU (offline context, no torch needed).

Run by ctest (tests/python/CMakeLists.txt) with TLSC, TLSC_LIB and
TLSC_SOURCE_DIR set; fake objects with __cuda_array_interface__ stand in
for tensors. Addresses are arbitrary: offline, nothing is dereferenced.
"""
import os
import stat
import sys
import tempfile
import unittest

SRC = os.environ.get("TLSC_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
TMP = tempfile.mkdtemp(prefix="tlsc-py-", dir=os.environ.get("TLSC_TEST_TMP"))
os.environ["TLSC_CACHE"] = os.path.join(TMP, "cache")

import tlsc  # noqa: E402
from tlsc import _errors  # noqa: E402


class Fake:
    """A device array as __cuda_array_interface__ describes one."""

    def __init__(self, shape, typestr="<f2", ptr=1 << 20, strides=None):
        self.__cuda_array_interface__ = dict(shape=tuple(shape), typestr=typestr,
                                             data=(ptr, False), strides=strides, version=3)


class DLPackOnly:
    def __init__(self, device_type=2):
        self.device_type = device_type

    def __dlpack__(self, stream=None):
        raise AssertionError("not read")

    def __dlpack_device__(self):
        return (self.device_type, 0)


def example(name):
    return os.path.join(SRC, "examples", name)


def matmul_args(m=1000, n=1016, k=1032):
    return [m, n, k, Fake((m, k), ptr=1 << 24), Fake((n, k), ptr=1 << 28),
            Fake((m, n), ptr=1 << 32)]


class TestImport(unittest.TestCase):
    def test_no_torch_imported(self):
        self.assertNotIn("torch", sys.modules)

    def test_find_library_env(self):
        self.assertEqual(tlsc.find_library(), os.path.abspath(os.environ["TLSC_LIB"]))

    def test_find_library_explicit_and_missing(self):
        self.assertEqual(tlsc.find_library(os.environ["TLSC_LIB"]),
                         os.path.abspath(os.environ["TLSC_LIB"]))
        with self.assertRaises(tlsc.LibraryNotFoundError) as cm:
            tlsc.load(example("vector_add.tls"), lib="/nonexistent/libtlsrt.so")
        self.assertIn("/nonexistent/libtlsrt.so", str(cm.exception))

    def test_error_hierarchy(self):
        self.assertTrue(issubclass(tlsc.ArgCountError, TypeError))
        self.assertTrue(issubclass(tlsc.ArgValueError, ValueError))
        self.assertTrue(issubclass(tlsc.NotFoundError, AttributeError))
        e = _errors.error_for(_errors.ERR_TMAP, "m")
        self.assertIsInstance(e, tlsc.TensorMapError)
        self.assertEqual((e.status, e.status_name), (13, "TLS_ERR_TMAP"))


class TestCompile(unittest.TestCase):
    def test_cache(self):
        p1 = tlsc.compile(example("vector_add.tls"))
        self.assertTrue(p1.startswith(os.environ["TLSC_CACHE"]))
        with open(p1) as f:
            self.assertIn("//@tls entry VectorAdd", f.read())
        mtime = os.stat(p1).st_mtime_ns
        self.assertEqual(tlsc.compile(example("vector_add.tls")), p1)
        self.assertEqual(os.stat(p1).st_mtime_ns, mtime)  # not compiled again
        # other defines, another key
        p2 = tlsc.compile(example("matmul_v5.tls"), defines={"n_size": 8192})
        p3 = tlsc.compile(example("matmul_v5.tls"))
        self.assertNotEqual(p2, p3)
        # the same text elsewhere: the same key; a changed text: another
        copy = os.path.join(TMP, "vector_add.tls")
        with open(example("vector_add.tls")) as f:
            text = f.read()
        with open(copy, "w") as f:
            f.write(text)
        self.assertEqual(tlsc.compile(copy), p1)
        with open(copy, "w") as f:
            f.write(text + "\n# changed\n")
        self.assertNotEqual(tlsc.compile(copy), p1)
        out = tlsc.compile(copy, out=os.path.join(TMP, "va.ptx"))
        self.assertEqual(out, os.path.join(TMP, "va.ptx"))
        self.assertTrue(os.path.isfile(out))

    def test_binary_identity(self):
        # a different compiler binary (a wrapper script) gives another key
        wrapper = os.path.join(TMP, "tlsc-wrapper")
        with open(wrapper, "w") as f:
            f.write(f'#!/bin/sh\nexec "{os.environ["TLSC"]}" "$@"\n')
        os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IXUSR)
        p1 = tlsc.compile(example("vector_add.tls"))
        p2 = tlsc.compile(example("vector_add.tls"), tlsc=wrapper)
        self.assertNotEqual(p1, p2)

    def test_compile_error(self):
        bad = os.path.join(TMP, "bad.tls")
        with open(bad, "w") as f:
            f.write("import tilus\nclass X(tilus.Script):\n"
                    "    def __call__(self, n: int32):\n        pass\n")
        with self.assertRaises(tlsc.CompileError) as cm:
            tlsc.compile(bad)
        e = cm.exception
        self.assertEqual(e.status, _errors.ERR_COMPILE)
        self.assertIn("bad.tls:3:", e.diagnostics)
        self.assertIn("name 'int32' is not defined", str(e))
        self.assertNotEqual(e.returncode, 0)
        # nothing cached for it
        self.assertFalse([n for n in os.listdir(tlsc.cache_dir()) if n.startswith("bad-")])

    def test_missing_script(self):
        with self.assertRaises(tlsc.FileError):
            tlsc.compile(os.path.join(TMP, "nonexistent.tls"))


class TestModule(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.vadd = tlsc.load(example("vector_add.tls"), offline=True)
        cls.mm = tlsc.load(tlsc.compile(example("matmul_v5.tls")), offline=True)
        cls.add = tlsc.load(os.path.join(SRC, "tests", "package", "consumer", "add.tls"),
                            offline=True)

    def test_context(self):
        self.assertFalse(self.mm.ctx.online)
        self.assertEqual(self.mm.ctx.arch, "")
        self.assertIs(self.mm.ctx, tlsc.context(offline=True))

    def test_params(self):
        k = self.mm.MatmulWGMMAV5
        self.assertEqual([(p.name, p.type) for p in k.params],
                         [("m_size", "i32"), ("n_size", "i32"), ("k_size", "i32"),
                          ("a_ptr", "ptr f16"), ("b_ptr", "ptr f16"), ("c_ptr", "ptr f16")])
        self.assertEqual([p.tmap for p in k.params], [False] * 3 + [True, True, False])
        self.assertEqual(k.params[3].dtype, "f16")
        self.assertEqual((k.block, k.num_tmaps, k.script), (288, 2, "MatmulWGMMAV5"))
        self.assertEqual(k.config["num_stages"], 4)
        v = self.vadd.VectorAdd
        self.assertEqual(v.signature, "n i32, a_ptr ptr f32, b_ptr ptr f32, c_ptr ptr f32")

    def test_lookup(self):
        self.assertEqual([k.name for k in self.add.kernels], ["Add__256", "Add__1024"])
        self.assertEqual(self.add.Add.name, "Add__256")
        self.assertEqual(self.add.kernel("Add", {"block": 1024}).name, "Add__1024")
        self.assertIs(self.add["Add__1024"], self.add.kernel("Add", "block=1024"))
        self.assertFalse(hasattr(self.add, "Nope"))
        with self.assertRaises(tlsc.NotFoundError) as cm:
            self.add.kernel("Add", "block=7")
        self.assertEqual(cm.exception.status, _errors.ERR_NOT_FOUND)
        self.assertIn("block=7", str(cm.exception))

    def test_prepare(self):
        k = self.mm.MatmulWGMMAV5
        plan = k.prepare(*matmul_args())
        self.assertEqual(plan.grid, (8 * 4, 1, 1))
        self.assertEqual((plan.block, plan.smem, plan.entry), (288, k.smem, "MatmulWGMMAV5"))
        self.assertEqual(plan.tmaps[0]["dims"], (1032, 1000))
        self.assertEqual(plan.tmaps[0]["address"], 1 << 24)
        self.assertEqual(plan.tmaps[1]["strides"], (2064,))
        m, n, kk, a, b, c = matmul_args()
        plan2 = k.prepare(m, n, kk, a_ptr=a, c_ptr=c, b_ptr=b)
        self.assertEqual(plan2.grid, plan.grid)
        # raw int addresses are passed as they are
        self.assertEqual(k.prepare(m, n, kk, 1 << 24, 1 << 28, 1 << 32).grid, plan.grid)

    def test_vector_add_prepare(self):
        v = self.vadd.VectorAdd
        n = 1000003
        plan = v.prepare(n, Fake((n,), "<f4"), Fake((n,), "<f4", 2 << 30),
                         Fake((n,), "<f4", 3 << 30))
        self.assertEqual(plan.grid, ((n + 1023) // 1024, 1, 1))
        # no tensor map: a strided array is passed (only maps need contiguity)
        v.prepare(n, Fake((n,), "<f4", strides=(8,)), Fake((n,), "<f4"), Fake((n,), "<f4"))

    def assertRefused(self, cls, status, text, fn, *args, **kwargs):
        with self.assertRaises(cls) as cm:
            fn(*args, **kwargs)
        e = cm.exception
        self.assertEqual(e.status, status, str(e))
        self.assertIn(text, str(e))
        self.assertEqual(e.message, str(e))
        return e

    def test_wrong_count(self):
        k = self.mm.MatmulWGMMAV5
        e = self.assertRefused(tlsc.ArgCountError, _errors.ERR_ARG_COUNT,
                               "it takes 6 arguments (m_size i32, n_size i32, k_size i32, "
                               "a_ptr ptr f16, b_ptr ptr f16, c_ptr ptr f16), got 5",
                               k.prepare, *matmul_args()[:5])
        self.assertEqual(str(e), self.mm.ctx.last_error())  # libtlsrt's own message
        self.assertRefused(tlsc.ArgCountError, _errors.ERR_ARG_COUNT, "got 7",
                           k.prepare, *matmul_args(), 1)
        args = matmul_args()
        self.assertRefused(tlsc.ArgCountError, _errors.ERR_ARG_COUNT, "missing argument(s) c_ptr",
                           k.prepare, *args[:3], a_ptr=args[3], b_ptr=args[4])
        self.assertRefused(tlsc.ArgCountError, _errors.ERR_ARG_COUNT, "no parameter named 'd'",
                           k.prepare, *args, d=1)
        self.assertRefused(tlsc.ArgCountError, _errors.ERR_ARG_COUNT, "(m_size) given twice",
                           k.prepare, *args[:5], m_size=3)

    def test_wrong_dtype(self):
        args = matmul_args()
        args[4] = Fake((1016, 1032), "<f4")
        self.assertRefused(tlsc.ArgTypeError, _errors.ERR_ARG_TYPE,
                           "argument 4 (b_ptr) must be ptr f16, got a CUDA array of <f4",
                           self.mm.MatmulWGMMAV5.prepare, *args)
        args[4] = Fake((1016, 1032), "<c8")
        self.assertRefused(tlsc.ArgTypeError, _errors.ERR_ARG_TYPE, "cannot match",
                           self.mm.MatmulWGMMAV5.prepare, *args)
        args[4] = "b"
        self.assertRefused(tlsc.ArgTypeError, _errors.ERR_ARG_TYPE, "got str",
                           self.mm.MatmulWGMMAV5.prepare, *args)

    def test_null_and_misaligned(self):
        k = self.mm.MatmulWGMMAV5
        args = matmul_args()
        args[5] = None
        e = self.assertRefused(tlsc.ArgValueError, _errors.ERR_ARG_VALUE,
                               "launch of 'MatmulWGMMAV5' refused: argument 5 (c_ptr) is a null "
                               "pointer", k.prepare, *args)
        self.assertEqual(str(e), self.mm.ctx.last_error())
        args[5] = Fake((1000, 1016), ptr=0)
        self.assertRefused(tlsc.ArgValueError, _errors.ERR_ARG_VALUE, "is a null pointer",
                           k.prepare, *args)
        args = matmul_args()
        args[3] = Fake((1000, 1032), ptr=(1 << 24) + 2)
        self.assertRefused(tlsc.ArgValueError, _errors.ERR_ARG_VALUE, "aligned",
                           k.prepare, *args)

    def test_device_and_contiguity(self):
        k = self.mm.MatmulWGMMAV5
        args = matmul_args()
        args[3] = Fake((1000, 1032), strides=(2, 2000))  # a transposed view
        self.assertRefused(tlsc.ArgValueError, _errors.ERR_ARG_VALUE,
                           "argument 3 (a_ptr) feeds a tensor map and must be contiguous",
                           k.prepare, *args)
        args = matmul_args()
        args[3] = DLPackOnly(device_type=1)  # a CPU array
        self.assertRefused(tlsc.ArgValueError, _errors.ERR_ARG_VALUE, "not on a CUDA device",
                           k.prepare, *args)
        if "torch" not in sys.modules:
            try:
                import torch  # noqa: F401
            except ImportError:
                args[3] = DLPackOnly()
                self.assertRefused(tlsc.ArgTypeError, _errors.ERR_ARG_TYPE, "needs torch",
                                   k.prepare, *args)

    def test_bounds(self):
        k = self.mm.MatmulWGMMAV5
        args = matmul_args()
        args[0] = 2000  # A holds 1000 rows
        self.assertRefused(tlsc.ArgValueError, _errors.ERR_ARG_VALUE,
                           "tensor map 0 (a_ptr) spans 4128000 bytes", k.prepare, *args)
        k.check_bounds = False
        try:
            k.prepare(*args)
        finally:
            k.check_bounds = True
        # nothing stays declared after the launch
        k.prepare(2000, 1016, 1032, 1 << 24, 1 << 28, 1 << 32)

    def test_scalars(self):
        k = self.mm.MatmulWGMMAV5
        args = matmul_args()
        args[0] = 1 << 31
        self.assertRefused(tlsc.ArgValueError, _errors.ERR_ARG_VALUE,
                           "argument 0 (m_size) = 2147483648 is out of range for i32",
                           k.prepare, *args)
        args[0] = 1000.0
        self.assertRefused(tlsc.ArgTypeError, _errors.ERR_ARG_TYPE,
                           "argument 0 (m_size) must be i32, got float", k.prepare, *args)
        args[0] = Fake((1,), "<i4")
        self.assertRefused(tlsc.ArgTypeError, _errors.ERR_ARG_TYPE, "got a tensor-like Fake",
                           k.prepare, *args)

    def test_launch_offline(self):
        e = self.assertRefused(tlsc.NoDeviceError, _errors.ERR_NO_DEVICE,
                               "launch of 'MatmulWGMMAV5' refused: the context has no GPU",
                               self.mm.MatmulWGMMAV5, *matmul_args(), stream=0)
        self.assertIsInstance(e, RuntimeError)
        # the argument checks come first
        self.assertRefused(tlsc.ArgCountError, _errors.ERR_ARG_COUNT, "got 5",
                           self.mm.MatmulWGMMAV5, *matmul_args()[:5])

    def test_producer_stream(self):
        # __cuda_array_interface__ v3 names the stream that may still write
        # the array: stream 0 is refused (the protocol disallows it); another
        # orders the launch after it (tls_stream_wait, offline: no GPU)
        args = matmul_args()
        args[3].__cuda_array_interface__["stream"] = 0
        self.assertRefused(tlsc.ArgValueError, _errors.ERR_ARG_VALUE,
                           "names stream 0, which the protocol disallows",
                           self.mm.MatmulWGMMAV5, *args)
        args[3].__cuda_array_interface__["stream"] = 2
        self.assertRefused(tlsc.NoDeviceError, _errors.ERR_NO_DEVICE,
                           "tls_stream_wait: the context has no GPU",
                           self.mm.MatmulWGMMAV5, *args, stream=0)
        args[3].__cuda_array_interface__["stream"] = None  # nothing to wait for
        self.assertRefused(tlsc.NoDeviceError, _errors.ERR_NO_DEVICE,
                           "launch of 'MatmulWGMMAV5' refused: the context has no GPU",
                           self.mm.MatmulWGMMAV5, *args, stream=0)

    def test_autotune_offline(self):
        n = 4096
        args = [n, Fake((n,)), Fake((n,), ptr=2 << 20), Fake((n,), ptr=3 << 20)]
        self.assertRefused(tlsc.NoDeviceError, _errors.ERR_NO_DEVICE,
                           "tls_autotune: the context has no GPU", self.add.autotune, "Add",
                           *args)
        # with an L2 flush per timed run: the same refusal, the flush kept
        self.assertRefused(tlsc.NoDeviceError, _errors.ERR_NO_DEVICE,
                           "tls_autotune: the context has no GPU", self.add.autotune, "Add",
                           *args, flush_bytes=256 << 20)
        tuner = self.add.autotuned("Add")
        self.assertEqual(tuner.flush_bytes, 256 << 20)
        self.assertIs(tuner, self.add.autotuned("Add"))
        self.assertEqual(tuner.key(args, {}), tuner.key([n, Fake((n,), ptr=5 << 20),
                                                         Fake((n,)), Fake((n,))], {}))
        self.assertNotEqual(tuner.key(args, {}), tuner.key([n + 1] + args[1:], {}))
        self.assertEqual(tuner.choices, {})
        # a chosen entry (as a GPU run would record it) is launched without tuning
        tuner.choices[tuner.key(args, {})] = self.add["Add__1024"]
        self.assertRefused(tlsc.NoDeviceError, _errors.ERR_NO_DEVICE,
                           "launch of 'Add__1024' refused", self.add.autotune, "Add", *args)
        self.assertRefused(tlsc.ArgTypeError, _errors.ERR_ARG_TYPE, "must be ptr f16",
                           self.add.autotune, "Add", n, Fake((n,), "<f4"), args[2], args[3])

    def test_specialized(self):
        mod = tlsc.load(example("matmul_v5.tls"), offline=True)
        self.assertEqual(len(mod.kernels), 1)
        spec = tlsc.compile(example("matmul_v5.tls"), specialize={"n_size": 8192,
                                                                    "k_size": 8192})
        mod = tlsc.load(spec, offline=True)
        k = mod.MatmulWGMMAV5
        big = matmul_args(8192, 8192, 8192)
        name = "MatmulWGMMAV5__n_size_8192__k_size_8192"
        self.assertEqual(k.prepare(*big).entry, name)
        self.assertEqual(k.resolve(*big).name, name)
        self.assertEqual(k.resolve(*big).fixed, {"n_size": 8192, "k_size": 8192})
        self.assertEqual(k.prepare(*matmul_args()).entry, "MatmulWGMMAV5")
        self.assertRefused(tlsc.ArgValueError, _errors.ERR_ARG_VALUE,
                           "is 1016 but the entry is compiled for n_size=8192",
                           mod[name].prepare, *matmul_args())

    def test_broken_ptx(self):
        with self.assertRaises(tlsc.FormatError) as cm:
            tlsc.load_string("//@tls version 1\n//@tls bogus\n", name="broken.ptx",
                             offline=True)
        self.assertIn("broken.ptx", str(cm.exception))
        with self.assertRaises(tlsc.FileError):
            tlsc.load(os.path.join(TMP, "nonexistent.ptx"), offline=True)

    def test_torch_op_without_torch(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            with self.assertRaises(ImportError):
                tlsc.torch_op("tlsc_test::mm", self.mm.MatmulWGMMAV5,
                              output=lambda a, b: ((1, 1), None), args=lambda a, b, c: ())


if __name__ == "__main__":
    unittest.main()
