/* launch.c: tls_launch: prepare (prepare.c, which also picks the entry that
 * runs: the launched one or a specialised sibling), the workspaces (one
 * buffer per entry, kept and grown; the clean part zeroed once, on the
 * stream, and kept zeros by the kernels),
 * encode the tensor maps (each remembered with its inputs, so repeated
 * launches on the same buffers skip cuTensorMapEncodeTiled), and
 * cuLaunchKernel with the user arguments, the workspaces' addresses, then
 * the maps as kernel parameters. */
#include <string.h>

#include "runtime/rt_internal.h"

/* The encoded map for these inputs, from the cache or freshly encoded. */
static tls_status tmap_for(tls_kernel *k, int t, const tls_tmap_params *tp,
                           const CUtensorMap **out) {
  TmapDesc *tm = &k->tmaps[t];
  for (int s = 0; s < TMAP_CACHE_SLOTS; s++) {
    if (tm->cache[s].valid && !memcmp(&tm->cache[s].key, tp, sizeof *tp)) {
      *out = &tm->cache[s].map;
      return TLS_OK;
    }
  }
  TmapSlot *slot = &tm->cache[tm->next_slot];
  tm->next_slot = (tm->next_slot + 1) % TMAP_CACHE_SLOTS;
  static const uint32_t ONES[TLS_MAX_RANK] = {1, 1, 1, 1, 1};
  tls_context *ctx = k->mod->ctx;
  slot->valid = false;
  CUresult r = ctx->api.cuTensorMapEncodeTiled(
      &slot->map, tp->dtype, (uint32_t)tp->rank, (void *)(uintptr_t)tp->address, tp->dims,
      tp->strides, tp->box, ONES, CU_TENSOR_MAP_INTERLEAVE_NONE, tp->swizzle,
      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r) {
    char why[512];
    rt_cuda_error(ctx, r, "cuTensorMapEncodeTiled");
    memcpy(why, ctx->err, sizeof why - 1);
    why[sizeof why - 1] = 0;
    return rt_error(ctx, TLS_ERR_TMAP, "launch of '%s' refused: tensor map %d: %s", k->name, t,
                    why);
  }
  memcpy(&slot->key, tp, sizeof *tp); /* with its (zeroed) padding, for memcmp */
  slot->valid = true;
  *out = &slot->map;
  return TLS_OK;
}

/* The entry's workspace buffer holds plan->workspace_bytes: kept from
 * earlier launches, or allocated (a power of two, at least 256 bytes; the
 * exact size when that fails) after freeing the smaller one once the
 * launches that may still use it are done. Then each workspace's address.
 * The clean ones (the buffer's first bytes) are zeros as Tilus makes them:
 * cleared once, on the stream, when their bytes are not known to be zeros
 * yet, and left zeros by every kernel, whose contract that is (`tlsc
 * --verify` checks the semaphores); a launch's other workspaces may dirty
 * the bytes after its clean ones. */
static tls_status workspaces_for(tls_kernel *k, const tls_launch_plan *plan, CUstream stream,
                                 uint64_t *addr) {
  tls_context *ctx = k->mod->ctx;
  uint64_t need = plan->workspace_bytes;
  if (need > k->ws_capacity) {
    if (k->ws_buffer) {
      CUresult r = ctx->api.cuCtxSynchronize();
      if (r) return rt_cuda_error(ctx, r, "cuCtxSynchronize (before growing a workspace buffer)");
      ctx->api.cuMemFree(k->ws_buffer);
      k->ws_buffer = k->ws_capacity = 0;
    }
    uint64_t cap = 256;
    while (cap < need) cap *= 2; /* need <= 2^62 + 256 (prepare.c) */
    CUdeviceptr p = 0;
    CUresult r = ctx->api.cuMemAlloc(&p, cap);
    if (r && cap > need) r = ctx->api.cuMemAlloc(&p, cap = need);
    if (r) {
      char why[512];
      rt_cuda_error(ctx, r, "cuMemAlloc");
      memcpy(why, ctx->err, sizeof why - 1);
      why[sizeof why - 1] = 0;
      return rt_error(ctx, TLS_ERR_NOMEM,
                      "launch of '%s' refused: its %d global_tensor() workspace%s need %llu bytes "
                      "of device memory: %s",
                      k->name, k->nws, k->nws == 1 ? "" : "s", (unsigned long long)need, why);
    }
    k->ws_buffer = p;
    k->ws_capacity = cap;
    k->ws_zeros = 0;
  }
  for (int w = 0; w < k->nws; w++) addr[w] = need ? k->ws_buffer + plan->workspaces[w].offset : 0;
  uint64_t clean = plan->workspace_clean_bytes;
  if (clean > k->ws_zeros) {
    CUresult r = ctx->api.cuMemsetD8Async(k->ws_buffer + k->ws_zeros, 0,
                                          (size_t)(clean - k->ws_zeros), stream);
    if (r) return rt_cuda_error(ctx, r, "cuMemsetD8Async (zeroing the clean workspaces)");
    k->ws_zeros = clean;
  }
  if (need > clean) k->ws_zeros = clean; /* the others follow the clean ones */
  return TLS_OK;
}

void rt_free_workspaces(tls_module *mod) {
  for (int i = 0; i < mod->nkernels; i++) {
    tls_kernel *k = &mod->kernels[i];
    if (k->ws_buffer && mod->ctx->online) mod->ctx->api.cuMemFree(k->ws_buffer);
    k->ws_buffer = k->ws_capacity = k->ws_zeros = 0;
  }
}

tls_status tls_launch(const tls_kernel *kernel, const tls_arg *args, int nargs, void *stream) {
  if (!kernel) return TLS_ERR_INVALID;
  tls_launch_plan plan;
  const tls_kernel *ran = NULL;
  uint64_t divs[KERNEL_MAX_DIVISORS];
  tls_status st = rt_prepare(kernel, args, nargs, &plan, &ran, divs);
  if (st) return st;
  tls_kernel *k = (tls_kernel *)ran; /* the tensor-map cache is ours to update */
  tls_context *ctx = k->mod->ctx;
  if (!ctx->online || !k->fn)
    return rt_error(ctx, TLS_ERR_NO_DEVICE, "launch of '%s' refused: the context has no GPU",
                    k->name);
  if ((st = rt_need_current(ctx, "tls_launch"))) return st; /* from any thread */
  uint64_t ws[TLS_MAX_WORKSPACES];
  if (k->nws && (st = workspaces_for(k, &plan, (CUstream)stream, ws))) return st;
  /* the user's arguments, then the hidden ones: divisors, workspaces */
  void *params[TLS_MAX_PARAMS + KERNEL_MAX_DIVISORS + TLS_MAX_WORKSPACES + TLS_MAX_TMAPS];
  for (int i = 0; i < nargs; i++) params[i] = (void *)&args[i].v; /* each member sits at offset 0 */
  for (int i = 0; i < k->ndivs; i++) params[nargs + i] = (void *)&divs[i];
  int hidden = nargs + k->ndivs;
  for (int w = 0; w < k->nws; w++) params[hidden + w] = (void *)&ws[w];
  for (int t = 0; t < plan.num_tmaps; t++) {
    const CUtensorMap *map = NULL;
    if (k->tmaps[t].ptr_ws >= 0) plan.tmaps[t].address = ws[k->tmaps[t].ptr_ws];
    if ((st = tmap_for(k, t, &plan.tmaps[t], &map))) return st;
    params[hidden + k->nws + t] = (void *)map;
  }
  if (plan.cluster[0] * plan.cluster[1] * plan.cluster[2] > 1) {
    /* a cluster kernel (.reqnctapercluster, .explicitcluster): the launch
     * names its cluster dimensions */
    if (!ctx->api.cuLaunchKernelEx)
      return rt_error(ctx, TLS_ERR_CUDA,
                      "launch of '%s' refused: it needs a cluster launch and the CUDA driver "
                      "lacks cuLaunchKernelEx",
                      k->name);
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = plan.cluster[0];
    attr.value.clusterDim.y = plan.cluster[1];
    attr.value.clusterDim.z = plan.cluster[2];
    CUlaunchConfig cfg = {plan.grid[0], plan.grid[1],     plan.grid[2], plan.block, 1, 1,
                          plan.smem,    (CUstream)stream, &attr,        1};
    CUresult r = ctx->api.cuLaunchKernelEx(&cfg, k->fn, params, NULL);
    return r ? rt_cuda_error(ctx, r, "cuLaunchKernelEx") : TLS_OK;
  }
  CUresult r = ctx->api.cuLaunchKernel(k->fn, plan.grid[0], plan.grid[1], plan.grid[2], plan.block,
                                       1, 1, plan.smem, (CUstream)stream, params, NULL);
  return r ? rt_cuda_error(ctx, r, "cuLaunchKernel") : TLS_OK;
}
