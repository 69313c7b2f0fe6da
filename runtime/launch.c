/* launch.c: tls_launch: prepare (prepare.c, which also picks the entry that
 * runs: the launched one or a specialised sibling), encode the tensor maps (each
 * remembered with its inputs, so repeated launches on the same buffers skip
 * cuTensorMapEncodeTiled), and cuLaunchKernel with the user arguments then
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

tls_status tls_launch(const tls_kernel *kernel, const tls_arg *args, int nargs, void *stream) {
  if (!kernel) return TLS_ERR_INVALID;
  tls_launch_plan plan;
  const tls_kernel *ran = NULL;
  tls_status st = rt_prepare(kernel, args, nargs, &plan, &ran);
  if (st) return st;
  tls_kernel *k = (tls_kernel *)ran; /* the tensor-map cache is ours to update */
  tls_context *ctx = k->mod->ctx;
  if (!ctx->online || !k->fn)
    return rt_error(ctx, TLS_ERR_NO_DEVICE, "launch of '%s' refused: the context has no GPU",
                    k->name);
  void *params[TLS_MAX_PARAMS + TLS_MAX_TMAPS];
  for (int i = 0; i < nargs; i++) params[i] = (void *)&args[i].v; /* each member sits at offset 0 */
  for (int t = 0; t < plan.num_tmaps; t++) {
    const CUtensorMap *map = NULL;
    if ((st = tmap_for(k, t, &plan.tmaps[t], &map))) return st;
    params[nargs + t] = (void *)map;
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
