// A hand-written stand-in for the CUDA source Tilus generates for a
// program, in its shape: the FFI and runtime headers, a device helper, the
// kernel (static, with __cluster_dims__ and __launch_bounds__), the host
// launcher and its FFI export, and a helper after the kernel that uses it
// would need declared first. scripts/tilus_ptx.py keeps the device code.
#include <tvm/ffi/function.h>
#include <stdint.h>
#include <tilus/runtime.h>

extern "C" { TilusContext* tilus_context = nullptr; }

static __device__ __forceinline__ float times_three(float x) {
  return x * 3.0f;
}

static __device__ __forceinline__ int32_t block_offset(int32_t b);

static __global__ void __cluster_dims__(1, 1, 1) __launch_bounds__(128) scale_kernel(int32_t n, float * __restrict__ x, float * __restrict__ y) {
  int32_t i = block_offset(blockIdx.x) + threadIdx.x;
  if (i < n) {
    y[i] = times_three(x[i]);
  }
}

DLL void tilus_launch(int32_t n, void_p x, void_p y) {
  if (0 < ((n + 127) / 128)) {
    scale_kernel<<<dim3(((n + 127) / 128), 1, 1), dim3(128, 1, 1), 0, (cudaStream_t)get_cuda_stream()>>>(n, (float *)x, (float *)y);
  }
}

static __device__ __forceinline__ int32_t block_offset(int32_t b) {
  return b * 128;
}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(launch, tilus_launch);
