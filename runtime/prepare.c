/* prepare.c: everything a launch checks and computes before the driver is
 * called: argument count and types, pointers, the entry that runs (a
 * specialised sibling whose fixed values the arguments have, or a refusal
 * when the launched entry's own fixed values differ), its `require` lines
 * (static_assert() on `int` parameters), the grid, and each
 * tensor map's shape against the TMA rules of cuTensorMapEncodeTiled. Runs
 * without a GPU, so every refusal is testable on the CPU. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "runtime/rt_internal.h"

static const char *const ARG_KIND_NAMES[] = {"i32", "u32", "i64", "u64", "f32", "ptr"};

/* The kind an argument must have for a parameter (PT_* and TLS_ARG_* share
 * an order). */
static tls_arg_kind kind_of(ParamType t) { return (tls_arg_kind)t; }

static tls_status refuse(const tls_kernel *k, tls_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records "entry 'NAME': <message>" as the last error. */
static tls_status refuse(const tls_kernel *k, tls_status st, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return rt_error(k->mod->ctx, st, "launch of '%s' refused: %s", k->name, msg);
}

/* The argument list as "m_size i32, a_ptr ptr f16, ...". */
static void signature(const tls_kernel *k, char *out, size_t len) {
  size_t n = 0;
  out[0] = 0;
  for (int i = 0; i < k->nparams && n < len; i++) {
    int w = snprintf(out + n, len - n, "%s%s %s", i ? ", " : "", k->params[i].name,
                     k->params[i].type_text);
    if (w < 0) break;
    n += (size_t)w;
  }
}

/* Whether the arguments have the entry's count and kinds, and integer
 * values the expressions can take (a u64 up to 2^63-1): then their values,
 * 0 for f32 and pointers. Records no error (rt_requires_hold). */
static bool arg_values(const tls_kernel *k, const tls_arg *args, int nargs, int64_t *values) {
  if (nargs != k->nparams || (nargs && !args)) return false;
  for (int i = 0; i < nargs; i++) {
    const tls_arg *a = &args[i];
    if ((unsigned)a->kind > TLS_ARG_PTR || a->kind != kind_of(k->params[i].type)) return false;
    values[i] = a->kind == TLS_ARG_I32   ? a->v.i32
                : a->kind == TLS_ARG_U32 ? a->v.u32
                : a->kind == TLS_ARG_I64 ? a->v.i64
                                         : 0;
    if (a->kind == TLS_ARG_U64 && a->v.u64 > INT64_MAX) return false;
    if (a->kind == TLS_ARG_U64) values[i] = (int64_t)a->v.u64;
  }
  return true;
}

/* Count, types, pointer rules (unless !pointers); integer values (for the
 * expressions and the fixed values). */
static tls_status check_args(const tls_kernel *k, const tls_arg *args, int nargs, bool pointers,
                             int64_t *values) {
  if (nargs != k->nparams || (nargs && !args)) {
    char sig[512];
    signature(k, sig, sizeof sig);
    return refuse(k, TLS_ERR_ARG_COUNT, "it takes %d arguments (%s), got %d", k->nparams, sig,
                  nargs);
  }
  for (int i = 0; i < nargs; i++) {
    const Param *p = &k->params[i];
    const tls_arg *a = &args[i];
    if ((unsigned)a->kind > TLS_ARG_PTR || a->kind != kind_of(p->type))
      return refuse(k, TLS_ERR_ARG_TYPE, "argument %d (%s) must be %s, got %s", i, p->name,
                    p->type_text,
                    (unsigned)a->kind <= TLS_ARG_PTR ? ARG_KIND_NAMES[a->kind] : "an unknown kind");
    values[i] = 0;
    switch (p->type) {
    case PT_I32:
      values[i] = a->v.i32;
      break;
    case PT_U32:
      values[i] = a->v.u32;
      break;
    case PT_I64:
      values[i] = a->v.i64;
      break;
    case PT_U64:
      if (a->v.u64 > INT64_MAX)
        return refuse(k, TLS_ERR_ARG_VALUE, "argument %d (%s) = %" PRIu64 " is above 2^63-1", i,
                      p->name, a->v.u64);
      values[i] = (int64_t)a->v.u64;
      break;
    case PT_F32:
      break;
    case PT_PTR: {
      if (!pointers) break;
      uint64_t align = p->used_by_tmap ? 16 : (uint64_t)p->elem_bytes;
      if (!a->v.ptr)
        return refuse(k, TLS_ERR_ARG_VALUE, "argument %d (%s) is a null pointer", i, p->name);
      if (a->v.ptr % align)
        return refuse(k, TLS_ERR_ARG_VALUE,
                      "argument %d (%s) = 0x%" PRIx64 " is not %d-byte aligned%s", i, p->name,
                      a->v.ptr, (int)align, p->used_by_tmap ? " (TMA needs 16)" : "");
      break;
    }
    }
  }
  return TLS_OK;
}

/* grid X Y Z: each at least 1 and within the launch limits. */
static tls_status eval_grid(const tls_kernel *k, const int64_t *values, tls_launch_plan *plan) {
  static const int64_t LIMIT[3] = {2147483647, 65535, 65535};
  char why[128];
  for (int d = 0; d < 3; d++) {
    int64_t v;
    if (!expr_eval(&k->grid[d], values, &v, why, sizeof why))
      return refuse(k, TLS_ERR_EXPR, "grid %c = %s: %s", "xyz"[d], k -> grid[d].text, why);
    if (v < 1)
      return refuse(k, TLS_ERR_ARG_VALUE, "grid %c = %s is %" PRId64 " (sizes must be positive)",
                    "xyz"[d], k -> grid[d].text, v);
    if (v > LIMIT[d])
      return refuse(k, TLS_ERR_ARG_VALUE, "grid %c = %s is %" PRId64 ", above the limit %" PRId64,
                    "xyz"[d], k -> grid[d].text, v, LIMIT[d]);
    plan->grid[d] = (uint32_t)v;
    plan->cluster[d] = (uint32_t)k->cluster[d];
    if (v % k->cluster[d])
      return refuse(k, TLS_ERR_ARG_VALUE,
                    "grid %c = %s is %" PRId64 ", not a multiple of the cluster's %d (a cluster "
                    "launch needs whole clusters)",
                    "xyz"[d], k -> grid[d].text, v, k->cluster[d]);
  }
  return TLS_OK;
}

/* "n=100, d=0": the values of the parameters e reads, each once. */
static void read_values(const tls_kernel *k, const Expr *e, const int64_t *values, char *out,
                        size_t len) {
  bool seen[TLS_MAX_PARAMS] = {false};
  size_t n = 0;
  out[0] = 0;
  for (int i = 0; i < e->n; i++) {
    int p = e->code[i].param;
    if (e->code[i].op != X_PARAM || seen[p] || n >= len) continue;
    seen[p] = true;
    int w =
        snprintf(out + n, len - n, "%s%s=%" PRId64, n ? ", " : "", k->params[p].name, values[p]);
    if (w < 0) break;
    n += (size_t)w;
  }
}

/* The first `require` line of k that the values break, or that cannot be
 * evaluated (TLS_ERR_EXPR), with its message in why; TLS_OK when all hold. */
static tls_status check_requires(const tls_kernel *k, const int64_t *values, char *why,
                                 size_t len) {
  for (int i = 0; i < k->nreqs; i++) {
    const Require *r = &k->reqs[i];
    char err[128], args[512];
    int64_t v = 0;
    bool ok = expr_eval(&r->cond, values, &v, err, sizeof err);
    if (ok && v) continue;
    read_values(k, &r->cond, values, args, sizeof args);
    if (!ok)
      snprintf(why, len, "static_assert(%s) cannot be evaluated for these arguments (%s): %s%s%s",
               r->cond.text, args, err, *r->msg ? "; " : "", r->msg);
    else
      snprintf(why, len, "static_assert(%s) fails for these arguments (%s)%s%s", r->cond.text, args,
               *r->msg ? ": " : "", r->msg);
    return ok ? TLS_ERR_ARG_VALUE : TLS_ERR_EXPR;
  }
  return TLS_OK;
}

/* The name of a tensor map's base: a pointer parameter or a workspace. */
static const char *tmap_ptr(const tls_kernel *k, const TmapDesc *tm) {
  return tm->ptr_ws >= 0 ? k->ws[tm->ptr_ws].name : k->params[tm->ptr_param].name;
}

/* dims: positive and at most 2^32 elements. */
static tls_status eval_dims(const tls_kernel *k, int t, const int64_t *values,
                            tls_tmap_params *tp) {
  const TmapDesc *tm = &k->tmaps[t];
  const char *ptr = tmap_ptr(k, tm);
  char why[128];
  for (int i = 0; i < tm->rank; i++) {
    int64_t v;
    if (!expr_eval(&tm->dims[i], values, &v, why, sizeof why))
      return refuse(k, TLS_ERR_EXPR, "tensor map %d (%s) dims[%d] = %s: %s", t, ptr, i,
                    tm->dims[i].text, why);
    if (v < 1)
      return refuse(k, TLS_ERR_ARG_VALUE,
                    "tensor map %d (%s) dims[%d] = %s is %" PRId64 " (sizes must be positive)", t,
                    ptr, i, tm->dims[i].text, v);
    if (v > (int64_t)1 << 32)
      return refuse(k, TLS_ERR_TMAP, "tensor map %d (%s) dims[%d] = %s is %" PRId64 ", above 2^32",
                    t, ptr, i, tm->dims[i].text, v);
    tp->dims[i] = (uint64_t)v;
  }
  return TLS_OK;
}

/* strides: multiples of 16 below 2^40, each row past the previous one
 * (the bytes a dimension spans, stride * extent, checked for overflow: a
 * wrapped product would let the next stride overlap it). */
static tls_status eval_strides(const tls_kernel *k, int t, const int64_t *values,
                               tls_tmap_params *tp) {
  const TmapDesc *tm = &k->tmaps[t];
  const char *ptr = tmap_ptr(k, tm);
  char why[128];
  uint64_t span = tp->dims[0] * (uint64_t)tm->elem_bytes; /* bytes of one dim-0 row */
  for (int i = 0; i < tm->rank - 1; i++) {
    int64_t v;
    const char *text = tm->strides[i].text;
    if (!expr_eval(&tm->strides[i], values, &v, why, sizeof why))
      return refuse(k, TLS_ERR_EXPR, "tensor map %d (%s) strides[%d] = %s: %s", t, ptr, i, text,
                    why);
    if (v < 1)
      return refuse(k, TLS_ERR_ARG_VALUE,
                    "tensor map %d (%s) strides[%d] = %s is %" PRId64 " (sizes must be positive)",
                    t, ptr, i, text, v);
    if (v % 16)
      return refuse(k, TLS_ERR_TMAP,
                    "tensor map %d (%s) strides[%d] = %s is %" PRId64
                    " bytes, not a multiple of 16",
                    t, ptr, i, text, v);
    if (v >= (int64_t)1 << 40)
      return refuse(k, TLS_ERR_TMAP,
                    "tensor map %d (%s) strides[%d] = %s is %" PRId64 ", not below 2^40", t, ptr, i,
                    text, v);
    if ((uint64_t)v < span)
      return refuse(k, TLS_ERR_TMAP,
                    "tensor map %d (%s) strides[%d] = %" PRId64 " bytes is less than the %" PRIu64
                    " bytes of the dimension below it",
                    t, ptr, i, v, span);
    tp->strides[i] = (uint64_t)v;
    if (__builtin_mul_overflow((uint64_t)v, tp->dims[i + 1], &span))
      return refuse(k, TLS_ERR_TMAP,
                    "tensor map %d (%s) strides[%d] = %" PRId64 " bytes times dims[%d] = %" PRIu64
                    " overflows 64 bits",
                    t, ptr, i, v, i + 1, tp->dims[i + 1]);
  }
  return TLS_OK;
}

/* The bytes a tensor map spans from its base address (the last element's
 * end); false when that overflows 64 bits. */
static bool tmap_extent(const tls_tmap_params *tp, uint64_t *out) {
  uint64_t end, step;
  if (__builtin_mul_overflow(tp->dims[0], (uint64_t)tp->elem_bytes, &end)) return false;
  for (int i = 1; i < tp->rank; i++)
    if (__builtin_mul_overflow(tp->dims[i] - 1, tp->strides[i - 1], &step) ||
        __builtin_add_overflow(end, step, &end))
      return false;
  *out = end;
  return true;
}

/* Every tensor map's extent is computed with overflow checks and must fit
 * in the address space after its base, whether or not its buffer is known;
 * one whose base lies in a buffer of known size (tls_mem_alloc,
 * tls_mem_register) stays inside it: TMA would read or write past its end. */
static tls_status check_extent(const tls_kernel *k, int t, const tls_tmap_params *tp) {
  const char *ptr = tmap_ptr(k, &k->tmaps[t]);
  uint64_t extent, last;
  if (!tmap_extent(tp, &extent))
    return refuse(k, TLS_ERR_TMAP, "tensor map %d (%s) spans more than 2^64 bytes", t, ptr);
  if (__builtin_add_overflow(tp->address, extent, &last))
    return refuse(k, TLS_ERR_ARG_VALUE,
                  "tensor map %d (%s) spans %" PRIu64 " bytes from 0x%" PRIx64
                  ", past the end of the 64-bit address space",
                  t, ptr, extent, tp->address);
  /* a workspace's map: its buffer is allocated at the launch, sized by
   * the same shape */
  const RtBuffer *b = k->tmaps[t].ptr_ws >= 0 ? NULL : rt_buffer_find(k->mod->ctx, tp->address);
  if (!b) return TLS_OK; /* size unknown: not checked */
  uint64_t room = b->bytes - (tp->address - b->base);
  if (extent > room)
    return refuse(k, TLS_ERR_ARG_VALUE,
                  "tensor map %d (%s) spans %" PRIu64 " bytes from 0x%" PRIx64
                  ", past the end of its buffer (%" PRIu64 " bytes at 0x%" PRIx64 ")",
                  t, ptr, extent, tp->address, b->bytes, b->base);
  return TLS_OK;
}

static tls_status eval_tmap(const tls_kernel *k, int t, const tls_arg *args, const int64_t *values,
                            tls_tmap_params *tp) {
  const TmapDesc *tm = &k->tmaps[t];
  memset(tp, 0, sizeof *tp);
  tp->dtype = tm->dtype;
  tp->elem_bytes = tm->elem_bytes;
  tp->rank = tm->rank;
  tp->address = tm->ptr_ws >= 0 ? 0 : args[tm->ptr_param].v.ptr; /* tls_launch fills it in */
  tp->swizzle = tm->swizzle;
  memcpy(tp->box, tm->box, sizeof tp->box);
  tls_status st = eval_dims(k, t, values, tp);
  if (!st) st = eval_strides(k, t, values, tp);
  return st ? st : check_extent(k, t, tp);
}

/* ---------------------------------------------------------- workspaces */

enum { WORKSPACE_ALIGN = 256 };
static const uint64_t WORKSPACE_LIMIT = (uint64_t)1 << 62;

/* Each workspace's bytes (the product of its dims, each at least 0, times
 * its element size, without overflow) and its place in the entry's buffer:
 * the clean ones first, so that one memset zeroes them, each at a multiple
 * of WORKSPACE_ALIGN. */
static tls_status plan_workspaces(const tls_kernel *k, const int64_t *values,
                                  tls_launch_plan *plan) {
  uint64_t at = 0;
  plan->num_workspaces = k->nws;
  for (int pass = 0; pass < 2; pass++) { /* clean, then the others */
    for (int w = 0; w < k->nws; w++) {
      const Workspace *ws = &k->ws[w];
      if (ws->clean != (pass == 0)) continue;
      uint64_t bytes = (uint64_t)ws->elem_bytes;
      char why[128];
      bool overflow = false;
      for (int i = 0; i < ws->rank; i++) {
        int64_t v;
        if (!expr_eval(&ws->dims[i], values, &v, why, sizeof why))
          return refuse(k, TLS_ERR_EXPR, "workspace %d (%s) dims[%d] = %s: %s", w, ws->name, i,
                        ws->dims[i].text, why);
        if (v < 0)
          return refuse(k, TLS_ERR_ARG_VALUE,
                        "workspace %d (%s) dims[%d] = %s is %" PRId64 " (sizes must not be "
                        "negative)",
                        w, ws->name, i, ws->dims[i].text, v);
        overflow |= __builtin_mul_overflow(bytes, (uint64_t)v, &bytes);
      }
      if (overflow || bytes > WORKSPACE_LIMIT || at > WORKSPACE_LIMIT - bytes)
        return refuse(k, TLS_ERR_ARG_VALUE,
                      "workspace %d (%s): the workspaces' bytes (the dims times the element "
                      "size) exceed 2^62",
                      w, ws->name);
      plan->workspaces[w] = (tls_workspace_plan){bytes, at, ws->clean};
      at += (bytes + WORKSPACE_ALIGN - 1) / WORKSPACE_ALIGN * WORKSPACE_ALIGN;
      if (pass == 0) plan->workspace_clean_bytes = at;
    }
  }
  plan->workspace_bytes = at;
  return TLS_OK;
}

/* ---------------------------------------------------------- divisors */

/* The multiplier of divisor d and d: see rt_internal.h. For l >= 1,
 * 2^(32+l) / d < 2^33 (d > 2^(l-1)), so M - 2^32 fits in 32 bits; d = 1
 * gives M = 2^32, m = 0. */
uint64_t rt_divisor_param(uint32_t d) {
  int l = 0;
  while (l < 31 && ((uint32_t)1 << l) < d) l++; /* ceil(log2 d) */
  uint64_t p = (uint64_t)1 << (32 + l);         /* at most 2^63 */
  uint64_t m = p / d + (p % d != 0) - ((uint64_t)1 << 32);
  return (m & 0xFFFFFFFFu) | (uint64_t)d << 32;
}

/* Each `divisor` line's value (1 to 2^31-1: the kernel divides by
 * multiplying, exactly only for those) and its hidden parameter into divs
 * (when not NULL). */
static tls_status eval_divisors(const tls_kernel *k, const int64_t *values, uint64_t *divs) {
  for (int i = 0; i < k->ndivs; i++) {
    const Divisor *dv = &k->divs[i];
    char why[128], args[512];
    int64_t v;
    bool ok = expr_eval(&dv->value, values, &v, why, sizeof why);
    if (ok && v >= 1 && v <= INT32_MAX) {
      if (divs) divs[i] = rt_divisor_param((uint32_t)v);
      continue;
    }
    read_values(k, &dv->value, values, args, sizeof args);
    if (!ok)
      return refuse(k, TLS_ERR_EXPR,
                    "the kernel divides by %s, which cannot be evaluated for these arguments "
                    "(%s): %s",
                    dv->value.text, args, why);
    return refuse(k, TLS_ERR_ARG_VALUE,
                  "the kernel divides by %s, which is %" PRId64 " for these arguments (%s); it "
                  "must be 1 to 2147483647",
                  dv->value.text, v, args);
  }
  return TLS_OK;
}

/* ---------------------------------------------------------- variants */

/* Whether the arguments have every value that `k` fixes; else the index
 * into k->fixed_param of the first that differs. */
static bool fixed_match(const tls_kernel *k, const int64_t *values, int *differs) {
  for (int i = 0; i < k->nfixed; i++)
    if (values[k->fixed_param[i]] != k->fixed_value[i]) {
      if (differs) *differs = i;
      return false;
    }
  return true;
}

/* The entry a launch of k runs for values that have k's fixed values: k,
 * or its most specialised variant whose fixed values they have. */
static const tls_kernel *runs(const tls_kernel *k, const int64_t *values) {
  for (int v = 0; v < k->nvariants; v++)
    if (fixed_match(k->variants[v], values, NULL)) return k->variants[v];
  return k;
}

/* The entry that runs: `k` itself, or its most specialised variant whose
 * fixed values the arguments have. A launch of an entry whose own fixed
 * values differ is refused: its constants would be wrong. */
static tls_status resolve(const tls_kernel *k, const int64_t *values, const tls_kernel **ran) {
  int i = 0;
  if (!fixed_match(k, values, &i)) {
    const Param *p = &k->params[k->fixed_param[i]];
    char other[160];
    if (k->generic)
      snprintf(other, sizeof other, "launch '%s', the generic entry, for other values",
               k->generic->name);
    else
      snprintf(other, sizeof other, "the file has no entry for other values");
    return refuse(k, TLS_ERR_ARG_VALUE,
                  "argument %d (%s) is %" PRId64 " but the entry is compiled for %s=%" PRId64
                  " (fixed %s); %s",
                  k->fixed_param[i], p->name, values[k->fixed_param[i]], p->name, k->fixed_value[i],
                  k->fixed, other);
  }
  *ran = runs(k, values);
  return TLS_OK;
}

/* tls_autotune's test of an entry: the launch's requirement check, without
 * recording an error (a skipped entry is no failure). */
bool rt_requires_hold(const tls_kernel *k, const tls_arg *args, int nargs, char *why, size_t len) {
  int64_t values[TLS_MAX_PARAMS];
  if (!k || !arg_values(k, args, nargs, values) || !fixed_match(k, values, NULL)) return true;
  char msg[1024];
  if (!check_requires(runs(k, values), values, msg, sizeof msg)) return true;
  snprintf(why, len, "launch of '%s' refused: %s", k->name, msg);
  return false;
}

const tls_kernel *tls_kernel_resolve(const tls_kernel *k, const tls_arg *args, int nargs) {
  if (!k) return NULL;
  int64_t values[TLS_MAX_PARAMS];
  const tls_kernel *ran = NULL;
  if (check_args(k, args, nargs, false, values) || resolve(k, values, &ran)) return NULL;
  return ran;
}

tls_status rt_prepare(const tls_kernel *launched, const tls_arg *args, int nargs,
                      tls_launch_plan *plan, const tls_kernel **ran, uint64_t *divs) {
  if (!launched || !plan) return TLS_ERR_INVALID;
  int64_t values[TLS_MAX_PARAMS];
  const tls_kernel *k = launched;
  char why[1024];
  tls_status st = check_args(launched, args, nargs, true, values);
  if (!st) st = resolve(launched, values, &k);
  if (!st && (st = check_requires(k, values, why, sizeof why)))
    return refuse(launched, st, "%s", why);
  if (!st) st = eval_divisors(k, values, divs);
  if (!st) st = eval_grid(k, values, plan);
  if (st) return st;
  plan->block = (uint32_t)k->block;
  plan->smem = (uint32_t)k->smem;
  plan->num_tmaps = k->ntmaps;
  plan->num_workspaces = 0;
  plan->workspace_bytes = plan->workspace_clean_bytes = 0;
  st = plan_workspaces(k, values, plan);
  for (int t = 0; t < k->ntmaps && !st; t++) st = eval_tmap(k, t, args, values, &plan->tmaps[t]);
  if (!st && ran) *ran = k;
  return st;
}

tls_status tls_prepare_launch(const tls_kernel *k, const tls_arg *args, int nargs,
                              tls_launch_plan *plan) {
  return rt_prepare(k, args, nargs, plan, NULL, NULL);
}
