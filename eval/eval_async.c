/* eval_async.c: Tilus's cp.async primitives (self.copy_async,
 * copy_async_commit_group, copy_async_wait_group, copy_async_wait_all),
 * with Tilus's keyword names and defaults; each appends its IR statement
 * (ir.h: S_CP_ASYNC ...) to the current block. */
#include <stdlib.h>
#include <string.h>

#include "eval/eval_int.h"

/* offsets=[...]: one int32 per dimension of the global tensor. */
static IrExpr **cp_offsets(Eval *E, Value *v, Span sp, int rank) {
  if (v->kind != V_LIST && v->kind != V_TUPLE)
    ev_error(E, sp, "copy_async(): offsets must be a list, not '%s'", v_type_name(v));
  if (v->n != rank)
    ev_error(E, sp,
             "copy_async(): the number of offsets (%d) must be the rank of the global tensor "
             "(%d)",
             v->n, rank);
  IrExpr **o = arena_alloc(E->ar, sizeof(IrExpr *) * (size_t)rank);
  for (int i = 0; i < rank; i++) {
    if (!v_is_int_scalar(v->items[i]))
      ev_error(E, sp, "copy_async(): offsets must be integers, not '%s'", v_type_name(v->items[i]));
    o[i] = ev_scalar_as(E, v->items[i], DT_INT32, sp);
  }
  return o;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* dims=: which global dimension each view dimension is, in increasing
 * order as Tilus sorts them; None when the ranks agree. tlsc copies rows
 * that are contiguous in both memories, so the last one must be the global
 * tensor's last. */
static void cp_dims(Eval *E, Value *v, Span sp, int grank, int vrank, int *dims) {
  if (!v || v->kind == V_NONE) {
    if (vrank != grank)
      ev_error(E, sp,
               "copy_async(): the shared view has rank %d but the global tensor has rank %d; "
               "dims= must say which global dimensions the view covers",
               vrank, grank);
    for (int i = 0; i < vrank; i++) dims[i] = i;
    return;
  }
  if ((v->kind != V_LIST && v->kind != V_TUPLE) || v->n != vrank)
    ev_error(E, sp, "copy_async(): dims must be a list of %d dimensions (one per view dimension)",
             vrank);
  for (int i = 0; i < vrank; i++) {
    int64_t d = v_to_int(E, v->items[i], sp, "dims");
    if (d < 0 || d >= grank)
      ev_error(E, sp, "copy_async(): dims entry %lld is not a dimension of the rank-%d tensor",
               (long long)d, grank);
    dims[i] = (int)d;
  }
  qsort(dims, (size_t)vrank, sizeof *dims, cmp_int);
  for (int i = 1; i < vrank; i++)
    if (dims[i] == dims[i - 1])
      ev_error(E, sp, "copy_async(): dims names dimension %d twice", dims[i]);
  if (dims[vrank - 1] != grank - 1)
    ev_error(E, sp,
             "copy_async(): dims must include the global tensor's last dimension (%d): tlsc "
             "copies rows that are contiguous in global memory",
             grank - 1);
}

/* evict=: None or "evict_normal" (the default), or "evict_first". */
static bool cp_evict_first(Eval *E, Value *v, Span sp) {
  if (!v || v->kind == V_NONE) return false;
  if (v->kind == V_STR && strcmp(v->s, "evict_normal") == 0) return false;
  if (v->kind == V_STR && strcmp(v->s, "evict_first") == 0) return true;
  ev_error(E, sp, "copy_async(): evict must be None, \"evict_normal\" or \"evict_first\", not %s",
           v->kind == V_STR ? ev_repr(E, v, sp) : v_type_name(v));
}

/* check_bounds=: a compile-time truth value (it chooses the code). False
 * promises that the tile is inside the tensor; a run-time value (Tilus's
 * flash attention passes one) keeps the checks, which is right either
 * way. */
static bool cp_check_bounds(Eval *E, Value *v, Span sp) {
  if (!v || v->kind == V_EXPR) return true;
  if (v->kind != V_BOOL && v->kind != V_INT)
    ev_error(E, sp, "copy_async(): check_bounds must be a compile-time bool, not %s",
             v->kind == V_EXPR ? "a run-time value" : arena_printf(E->ar, "'%s'", v_type_name(v)));
  return v->i != 0;
}

/* The shared view written: a data tensor of the global tensor's dtype. */
static IrRef cp_dst(Eval *E, Value *v, Span sp, const IrTensor *g) {
  IrRef r = v_to_ref(E, v, sp, "copy_async() dst");
  if (r.t->is_mbarrier || ir_ref_rank(&r) < 1)
    ev_error(E, sp, "copy_async() dst must be a shared tensor view, not a barrier");
  if (r.transposed) ev_error(E, sp, "copy_async() into a transposed view is not supported");
  if (r.t->dtype != g->dtype)
    ev_error(E, sp, "copy_async() from a %s tensor into a %s tensor", dtype_name(g->dtype),
             dtype_name(r.t->dtype));
  if (g->dtype == DT_BOOL)
    ev_error(E, sp, "copy_async() of bool tensors is not supported (cp.async copies bytes)");
  return r;
}

/* self.copy_async(src, dst, offsets, dims=None, evict=None,
 * check_bounds=True) */
static Value *p_copy_async(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"src",   "dst",          "offsets", "dims",
                                      "evict", "check_bounds", NULL};
  Value *v[6];
  ev_bind_args(E, a, sp, "copy_async", names, 3, v);
  IrTensor *g = v_to_tensor(E, v[0], ev_arg_span(a, names, 0, sp), MS_GLOBAL, "copy_async() src");
  IrRef r = cp_dst(E, v[1], ev_arg_span(a, names, 1, sp), g);
  int dims[IR_MAX_RANK];
  cp_dims(E, v[3], ev_arg_span(a, names, 3, sp), g->rank, ir_ref_rank(&r), dims);
  IrExpr **o = cp_offsets(E, v[2], ev_arg_span(a, names, 2, sp), g->rank);
  bool evict_first = cp_evict_first(E, v[4], ev_arg_span(a, names, 4, sp));
  bool check = cp_check_bounds(E, v[5], ev_arg_span(a, names, 5, sp));
  if (E->tg_count == 0) /* the copy is spread over the group's threads */
    ev_error(E, sp,
             "set self.attrs.warps before this point: the number of threads is not known yet");
  IrStmt *s = ir_stmt_new(E->ar, S_CP_ASYNC, sp);
  IrCpAsyncStmt *c = &s->cpasync;
  c->global = g;
  c->shared = r;
  c->offsets = o;
  c->noffsets = g->rank;
  memcpy(c->dims, dims, sizeof dims);
  c->check_bounds = check;
  c->evict_first = evict_first;
  ev_emit(E, s);
  return v_none(E);
}

/* copy_async_wait_group(n): n a compile-time count (cp.async.wait_group
 * takes an immediate). */
static Value *p_copy_async_wait(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"n", NULL};
  Value *v[1];
  ev_bind_args(E, a, sp, "copy_async_wait_group", names, 1, v);
  Span at = ev_arg_span(a, names, 0, sp);
  if (v[0]->kind == V_EXPR)
    ev_error(E, at, "copy_async_wait_group(n): n must be a compile-time integer");
  int64_t n = v_to_int(E, v[0], at, "copy_async_wait_group() argument");
  if (n < 0 || n > 255)
    ev_error(E, at, "copy_async_wait_group() takes 0 to 255, not %lld", (long long)n);
  IrStmt *s = ir_stmt_new(E->ar, S_CP_WAIT, sp);
  s->wait.max_pending = n;
  ev_emit(E, s);
  return v_none(E);
}

/* Tilus's copy_async primitives (fn is one of P_COPY_ASYNC ...). */
Value *ev_call_cp_async(Eval *E, Builtin fn, Args *a, Span sp) {
  static const char *const none[] = {NULL};
  switch (fn) {
  case P_COPY_ASYNC:
    return p_copy_async(E, a, sp);
  case P_COPY_ASYNC_WAIT:
    return p_copy_async_wait(E, a, sp);
  case P_COPY_ASYNC_COMMIT:
    ev_bind_args(E, a, sp, "copy_async_commit_group", none, 0, NULL);
    ev_emit(E, ir_stmt_new(E->ar, S_CP_COMMIT, sp));
    return v_none(E);
  default:
    ev_bind_args(E, a, sp, "copy_async_wait_all", none, 0, NULL);
    ev_emit(E, ir_stmt_new(E->ar, S_CP_WAIT_ALL, sp));
    return v_none(E);
  }
}
