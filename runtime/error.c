/* error.c: status names and the context's last-error message. */
#include <stdio.h>

#include "runtime/rt_internal.h"

const char *tls_error_string(tls_status status) {
  switch (status) {
  case TLS_OK:
    return "success";
  case TLS_ERR_INVALID:
    return "invalid argument to the runtime API";
  case TLS_ERR_NO_DRIVER:
    return "no CUDA driver";
  case TLS_ERR_NO_DEVICE:
    return "no usable GPU";
  case TLS_ERR_CUDA:
    return "CUDA driver call failed";
  case TLS_ERR_IO:
    return "file could not be read";
  case TLS_ERR_FORMAT:
    return "malformed tlsc PTX file";
  case TLS_ERR_COMPILE:
    return "PTX compilation failed";
  case TLS_ERR_NOT_FOUND:
    return "no such entry";
  case TLS_ERR_ARG_COUNT:
    return "wrong number of launch arguments";
  case TLS_ERR_ARG_TYPE:
    return "launch argument of the wrong type";
  case TLS_ERR_ARG_VALUE:
    return "invalid launch argument value";
  case TLS_ERR_EXPR:
    return "launch expression overflowed or divided by zero";
  case TLS_ERR_TMAP:
    return "tensor map breaks the TMA rules";
  case TLS_ERR_NOMEM:
    return "out of memory";
  }
  return "unknown status";
}

tls_status rt_error(tls_context *ctx, tls_status status, const char *fmt, ...) {
  if (!ctx) return status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx->err, sizeof ctx->err, fmt, ap);
  va_end(ap);
  return status;
}

tls_status rt_cuda_error(tls_context *ctx, CUresult r, const char *call) {
  const char *name = "?", *text = "?";
  if (ctx->api.cuGetErrorName) ctx->api.cuGetErrorName(r, &name);
  if (ctx->api.cuGetErrorString) ctx->api.cuGetErrorString(r, &text);
  return rt_error(ctx, TLS_ERR_CUDA, "%s failed: %s (%d): %s", call, name ? name : "?", r,
                  text ? text : "?");
}

const char *tls_last_error(const tls_context *ctx) { return ctx ? ctx->err : "no context"; }
