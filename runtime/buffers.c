/* buffers.c: the device buffers whose size the runtime knows: those from
 * tls_mem_alloc, and those a caller declares with tls_mem_register. A
 * launch whose tensor map would reach past the end of such a buffer is
 * refused (prepare.c); a pointer outside every known buffer is not checked,
 * since the runtime cannot know its size. */
#include <stdlib.h>

#include "runtime/rt_internal.h"

/* Records [base, base + bytes); a buffer at the same base replaces it. */
tls_status rt_buffer_add(tls_context *ctx, uint64_t base, uint64_t bytes) {
  rt_buffer_remove(ctx, base);
  if (ctx->nbuffers == ctx->cap_buffers) {
    int cap = ctx->cap_buffers ? 2 * ctx->cap_buffers : 16;
    RtBuffer *grown = realloc(ctx->buffers, sizeof *grown * (size_t)cap);
    if (!grown) return rt_error(ctx, TLS_ERR_NOMEM, "out of memory recording a buffer");
    ctx->buffers = grown;
    ctx->cap_buffers = cap;
  }
  ctx->buffers[ctx->nbuffers++] = (RtBuffer){base, bytes};
  return TLS_OK;
}

/* Forgets the buffer that starts at base, if any. */
void rt_buffer_remove(tls_context *ctx, uint64_t base) {
  for (int i = 0; i < ctx->nbuffers; i++)
    if (ctx->buffers[i].base == base) {
      ctx->buffers[i] = ctx->buffers[--ctx->nbuffers];
      return;
    }
}

/* The known buffer that holds address, or NULL. Where several do (a view
 * registered inside an allocation, or an entry left by memory freed behind
 * the runtime's back), the one that starts closest below address wins. */
const RtBuffer *rt_buffer_find(const tls_context *ctx, uint64_t address) {
  const RtBuffer *best = NULL;
  for (int i = 0; i < ctx->nbuffers; i++) {
    const RtBuffer *b = &ctx->buffers[i];
    if (address >= b->base && address - b->base < b->bytes && (!best || b->base > best->base))
      best = b;
  }
  return best;
}

tls_status tls_mem_register(tls_context *ctx, uint64_t dptr, size_t bytes) {
  if (!ctx) return TLS_ERR_INVALID;
  if (!dptr || !bytes)
    return rt_error(ctx, TLS_ERR_INVALID, "tls_mem_register: %s",
                    !dptr ? "null pointer" : "zero bytes");
  return rt_buffer_add(ctx, dptr, bytes);
}

void tls_mem_unregister(tls_context *ctx, uint64_t dptr) {
  if (ctx) rt_buffer_remove(ctx, dptr);
}
