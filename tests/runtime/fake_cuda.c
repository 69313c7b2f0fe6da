/* fake_cuda.c: a stand-in for libcuda.so.1 (TLSC_CUDA_LIB names it) that
 * runs libtlsrt's launch path on a machine without a GPU. One device
 * (sm_90, 132 SMs, 227 KB of shared memory a block), every call
 * succeeds, nothing runs; the calls whose order and arguments a test
 * checks are appended to fake_cuda_log as lines:
 *
 *   alloc BYTES -> ADDR        cuMemAlloc
 *   free ADDR                  cuMemFree
 *   memset ADDR BYTES          cuMemsetD8Async (the value is always 0 here)
 *   launch GXxGYxGZxBLOCK      cuLaunchKernel
 *   launch GXxGYxGZxBLOCK cluster CXxCYxCZ   cuLaunchKernelEx (its
 *                              cluster-dimension attribute)
 *   encode ADDR DIM0xDIM1...   cuTensorMapEncodeTiled
 *   load ENTRY...              cuModuleLoadDataEx (the JIT path): the
 *                              entries of the PTX text
 *
 * The JIT path also plays ptxas for the occupancy tests: an entry's
 * registers and local memory are its comment `// fake HINT REGS LOCAL`
 * whose HINT is the entry's `.minnctapersm` (0 without one), else 32 and
 * 0; a text with an entry whose comment `// fake refuse HINT` matches its
 * hint is refused (logged as `refuse`).
 * cuOccupancyMaxActiveBlocksPerMultiprocessor counts the blocks the
 * registers allow (64 K an SM, 8-register steps), at most 2048 threads
 * and 32 blocks.
 *
 * Addresses are 2^32 apart, from 2^32 on, so a line names its buffer. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

char fake_cuda_log[1 << 16];
static size_t fake_cuda_log_len;
static CUdeviceptr next_addr = 1ull << 32;

static void say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t room = sizeof fake_cuda_log - fake_cuda_log_len;
  int n = vsnprintf(fake_cuda_log + fake_cuda_log_len, room, fmt, ap);
  va_end(ap);
  if (n > 0) fake_cuda_log_len += (size_t)n < room ? (size_t)n : room - 1;
}

void fake_cuda_log_clear(void) { fake_cuda_log_len = 0, fake_cuda_log[0] = 0; }

static int handle; /* what the opaque handles point at */

CUresult cuInit(unsigned flags) { return (int)flags * 0; }
CUresult cuDeviceGetCount(int *n) { return *n = 1, 0; }
CUresult cuDeviceGet(int *dev, int ordinal) { return *dev = ordinal, 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
  (void)dev;
  switch (attr) {
  case 75:
    *v = 9;
    break; /* compute capability major */
  case 76:
    *v = 0;
    break; /* minor */
  case 97:
    *v = 232448;
    break; /* opt-in shared memory a block */
  case 16:
    *v = 132;
    break; /* multiprocessors */
  case 39:
    *v = 2048;
    break; /* threads an SM */
  case 81:
    *v = 233472;
    break; /* shared memory an SM */
  case 82:
    *v = 65536;
    break; /* registers an SM */
  case 106:
    *v = 32;
    break; /* blocks an SM */
  case 111:
    *v = 1024;
    break; /* shared memory reserved a block */
  default:
    *v = 0;
    break;
  }
  return 0;
}
CUresult cuDeviceGetName(char *name, int len, int dev) {
  (void)dev;
  snprintf(name, (size_t)len, "fake sm_90");
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { return (void)dev, *ctx = &handle, 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { return (void)dev, 0; }
CUresult cuCtxSetCurrent(void *ctx) { return (void)ctx, 0; }
CUresult cuCtxGetCurrent(void **ctx) { return *ctx = &handle, 0; }
CUresult cuCtxSynchronize(void) { return 0; }
/* The functions of the modules the JIT path loaded: module, name, and
 * what "ptxas" made of them. */
typedef struct FakeFn {
  int module;
  char name[128];
  int regs, local;
} FakeFn;
static FakeFn fns[4096];
static int nfns, nmodules;
static int modules[1024]; /* module handles point here */

/* The entries of a PTX text, each with its build (see the top comment). */
static void scan_entries(const char *text, int module) {
  say("load");
  for (const char *p = strstr(text, ".entry "); p && nfns < 4096; p = strstr(p + 1, ".entry ")) {
    FakeFn *f = &fns[nfns++];
    const char *q = p + 7;
    size_t n = strcspn(q, "( \n");
    snprintf(f->name, sizeof f->name, "%.*s", (int)n, q);
    f->module = module, f->regs = 32, f->local = 0;
    const char *body = strstr(p, "\n{"), *end = body ? strstr(body, "\n}") : NULL;
    const char *hint = strstr(p, ".minnctapersm ");
    int want = hint && body && hint < body ? atoi(hint + 14) : 0;
    for (const char *c = body ? strstr(body, "// fake ") : NULL; c && c < end;
         c = strstr(c + 1, "// fake ")) {
      int h, r, l;
      if (sscanf(c, "// fake %d %d %d", &h, &r, &l) == 3 && h == want) f->regs = r, f->local = l;
    }
    say(" %s", f->name);
  }
  say("\n");
}

CUresult cuModuleLoadData(void **mod, const void *image) {
  (void)image;
  *mod = &modules[nmodules < 1023 ? nmodules++ : 1023];
  return 0;
}
/* Whether an entry of the text has the comment `// fake refuse HINT`
 * and that `.minnctapersm` (0: none): the JIT refuses such a text. */
static int refused(const char *text) {
  for (const char *p = strstr(text, ".entry "); p; p = strstr(p + 1, ".entry ")) {
    const char *body = strstr(p, "\n{"), *hint = strstr(p, ".minnctapersm ");
    const char *c = body ? strstr(body, "// fake refuse ") : NULL,
               *end = body ? strstr(body, "\n}") : NULL;
    int want = hint && body && hint < body ? atoi(hint + 14) : 0;
    if (c && c < end && atoi(c + 15) == want) return 1;
  }
  return 0;
}

CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *opts, void **vals) {
  (void)n, (void)opts, (void)vals;
  if (refused(image)) {
    say("refuse\n");
    return 218; /* CUDA_ERROR_INVALID_PTX */
  }
  cuModuleLoadData(mod, image);
  scan_entries(image, (int)((int *)*mod - modules));
  return 0;
}
CUresult cuModuleUnload(void *mod) { return (void)mod, 0; }
CUresult cuModuleGetFunction(void **fn, void *mod, const char *name) {
  int module = (int)((int *)mod - modules);
  for (int i = nfns - 1; i >= 0; i--)
    if (fns[i].module == module && !strcmp(fns[i].name, name)) return *fn = &fns[i], 0;
  *fn = &handle; /* a module loaded from a cubin: no builds known */
  return 0;
}
CUresult cuFuncGetAttribute(int *v, int attr, void *fn) {
  const FakeFn *f = fn == (void *)&handle ? NULL : fn;
  *v = attr == 3 ? (f ? f->local : 0) : attr == 4 ? (f ? f->regs : 32) : 0;
  return 0;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, void *fn, int block,
                                                     size_t smem) {
  int regs = 0;
  cuFuncGetAttribute(&regs, 4, fn);
  int by_regs = 65536 / (((regs + 7) / 8 * 8) * block), by_threads = 2048 / block;
  int by_smem = smem ? 233472 / ((int)smem + 1024) : 32;
  *blocks = by_regs < by_threads ? by_regs : by_threads;
  if (by_smem < *blocks) *blocks = by_smem;
  if (*blocks > 32) *blocks = 32;
  return 0;
}
CUresult cuFuncSetAttribute(void *fn, int attr, int v) { return (void)fn, (void)attr, (void)v, 0; }
CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned smem, void *stream, void **params, void **extra) {
  (void)fn, (void)by, (void)bz, (void)smem, (void)stream, (void)params, (void)extra;
  say("launch %ux%ux%ux%u\n", gx, gy, gz, bx);
  return 0;
}
/* cuLaunchKernelEx's configuration, as the CUDA headers lay it out. */
typedef struct {
  int id;
  char pad[4];
  union {
    char bytes[64];
    unsigned dim[3];
  } value;
} LaunchAttribute;
typedef struct {
  unsigned grid[3], block[3], smem;
  void *stream;
  LaunchAttribute *attrs;
  unsigned nattrs;
} LaunchConfig;

CUresult cuLaunchKernelEx(const LaunchConfig *cfg, void *fn, void **params, void **extra) {
  (void)fn, (void)params, (void)extra;
  say("launch %ux%ux%ux%u", cfg->grid[0], cfg->grid[1], cfg->grid[2], cfg->block[0]);
  for (unsigned i = 0; i < cfg->nattrs; i++)
    if (cfg->attrs[i].id == 4) /* CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION */
      say(" cluster %ux%ux%u", cfg->attrs[i].value.dim[0], cfg->attrs[i].value.dim[1],
          cfg->attrs[i].value.dim[2]);
  say("\n");
  return 0;
}

CUresult cuTensorMapEncodeTiled(void *map, int dt, uint32_t rank, void *addr, const uint64_t *dims,
                                const uint64_t *strides, const uint32_t *box,
                                const uint32_t *estrides, int il, int sw, int l2, int oob) {
  (void)dt, (void)strides, (void)box, (void)estrides, (void)il, (void)sw, (void)l2, (void)oob;
  say("encode %llu", (unsigned long long)(uintptr_t)addr);
  for (uint32_t d = 0; d < rank; d++) say("%c%llu", d ? 'x' : ' ', (unsigned long long)dims[d]);
  say("\n");
  memset(map, 0, 128);
  return 0;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  *p = next_addr;
  next_addr += 1ull << 32;
  say("alloc %zu -> %llu\n", bytes, *p);
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  say("free %llu\n", p);
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n) {
  return (void)d, (void)h, (void)n, 0;
}
CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n) { return memset(h, 0, n), (void)d, 0; }
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) {
  return (void)d, (void)v, (void)n, 0;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void *stream) {
  (void)v, (void)stream;
  say("memset %llu %zu\n", d, n);
  return 0;
}
CUresult cuStreamCreate(void **s, unsigned flags) { return (void)flags, *s = &handle, 0; }
CUresult cuStreamDestroy_v2(void *s) { return (void)s, 0; }
CUresult cuStreamSynchronize(void *s) { return (void)s, 0; }
CUresult cuEventCreate(void **e, unsigned flags) { return (void)flags, *e = &handle, 0; }
CUresult cuEventDestroy_v2(void *e) { return (void)e, 0; }
CUresult cuEventRecord(void *e, void *s) { return (void)e, (void)s, 0; }
CUresult cuEventSynchronize(void *e) { return (void)e, 0; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) { return (void)a, (void)b, *ms = 1.0f, 0; }
CUresult cuStreamWaitEvent(void *s, void *e, unsigned f) { return (void)s, (void)e, (void)f, 0; }
CUresult cuGetErrorName(CUresult r, const char **s) { return (void)r, *s = "CUDA_ERROR_FAKE", 0; }
CUresult cuGetErrorString(CUresult r, const char **s) { return (void)r, *s = "fake error", 0; }
