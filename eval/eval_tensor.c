/* eval_tensor.c: tensors as values: attributes (.nbytes, .shape, .dtype,
 * .transpose()), indexing of shared tensors into views (sa[stage, 0]),
 * column slices of register tensors (acc[:, 0:64]) and element-wise
 * arithmetic on register tensors. */
#include <limits.h>
#include <string.h>

#include "eval/eval_int.h"

/* The view a tensor value denotes (a whole tensor is a view with no
 * index). */
static IrRef as_ref(const Value *v) {
  if (v->kind == V_REF) return v->ref;
  IrRef r = {0};
  r.t = v->t;
  return r;
}

static int64_t ref_bytes(Eval *E, const IrRef *r, Span sp) {
  int64_t n = dtype_bytes(r->t->dtype);
  for (int i = 0; i < ir_ref_rank(r); i++)
    if (__builtin_mul_overflow(n, ir_ref_dim(r, i), &n))
      ev_error(E, sp, "nbytes of this tensor overflows int64");
  return n;
}

Value *ev_tensor_attr(Eval *E, Value *tv, const char *name, Span sp) {
  IrRef r = as_ref(tv);
  if (strcmp(name, "dtype") == 0) {
    Value *d = v_new(E, V_DTYPE);
    d->dt = r.t->dtype;
    return d;
  }
  if (strcmp(name, "transpose") == 0) return v_builtin(E, P_TRANSPOSE, tv);
  if (strcmp(name, "tolist") == 0) return v_builtin(E, P_TOLIST, tv);
  if (r.t->space == MS_GLOBAL && r.nidx == r.t->rank && r.nidx > 0) {
    if (strcmp(name, "item") == 0) return v_builtin(E, P_ITEM, tv);
    if (strcmp(name, "item_ptr") == 0) return v_builtin(E, P_ITEM_PTR, tv);
  }
  if (strcmp(name, "to") == 0 && r.t->space == MS_REGISTER) return v_builtin(E, P_TENSOR_TO, tv);
  if (strcmp(name, "squeeze") == 0 && r.t->space == MS_REGISTER && tv->kind == V_TENSOR)
    return v_builtin(E, P_TENSOR_SQUEEZE, tv);
  if (strcmp(name, "unsqueeze") == 0 && r.t->space == MS_REGISTER && tv->kind == V_TENSOR)
    return v_builtin(E, P_TENSOR_UNSQUEEZE, tv);
  if (strcmp(name, "shape") == 0) {
    Value *s = v_seq(E, V_TUPLE, ir_ref_rank(&r));
    for (int i = 0; i < s->n; i++)
      s->items[i] = r.t->space == MS_GLOBAL && r.t->gshape[i] ? v_expr(E, r.t->gshape[i])
                                                              : v_int(E, ir_ref_dim(&r, i));
    return s;
  }
  if (strcmp(name, "nbytes") == 0) {
    if (r.t->space == MS_GLOBAL)
      ev_error(E, sp,
               "nbytes of a global tensor is not a compile-time "
               "constant");
    return v_int(E, ref_bytes(E, &r, sp));
  }
  static const char methods[] = " item item_ptr squeeze unsqueeze to permute ";
  char *w = arena_printf(E->ar, " %s ", name);
  if (strstr(methods, w))
    ev_error(E, sp, "%s.%s() is a Tilus tensor method that tlsc does not support yet",
             v_type_name(tv), name);
  ev_error(E, sp, "'%s' object has no attribute '%s'", v_type_name(tv), name);
}

/* x.transpose(): swaps the last two dimensions of a rank-2 shared view. */
Value *ev_tensor_transpose(Eval *E, Value *tv, Span sp) {
  if (tv->kind == V_TENSOR && tv->t->space == MS_REGISTER) {
    IrTensor *x = tv->t;
    if (x->rank != 2)
      ev_error(E, sp, "transpose() needs a rank-2 tensor, this one has rank %d", x->rank);
    ev_reg_use(E, x, sp);
    int64_t shape[2] = {x->shape[1], x->shape[0]};
    IrTensor *d = ir_new_tensor(E->ar, E->k, "t", MS_REGISTER, x->dtype, 2, shape, sp);
    d->nthreads = x->nthreads;
    IrStmt *st = ir_stmt_new(E->ar, S_TRANSPOSE, sp);
    st->cast.dst = d;
    st->cast.src = x;
    ev_emit(E, st);
    return v_tensor(E, d);
  }
  if (tv->kind == V_TENSOR && tv->t->space != MS_SHARED)
    ev_error(E, sp, "transpose() of a %s is not supported yet", v_type_name(tv));
  IrRef r = as_ref(tv);
  if (ir_ref_rank(&r) != 2)
    ev_error(E, sp, "transpose() needs a rank-2 view, this one has rank %d", ir_ref_rank(&r));
  Value *v = v_new(E, V_REF);
  v->ref = r;
  v->ref.transposed = !r.transposed;
  return v;
}

/* sa[i, j]: fixes the leading dimensions of a shared tensor (run-time
 * indices allowed); mbarriers[i] selects one barrier. */
static Value *elem_get(Eval *E, IrTensor *t, Value *idx, Span sp);

/* g[i, j] of a global view: one element, every dimension indexed (run-time
 * indices allowed, unchecked, as in Tilus), for .item() and .item_ptr(). */
static Value *global_elem(Eval *E, Value *tv, Value *idx, Span sp) {
  IrTensor *g = tv->t;
  int n = idx->kind == V_TUPLE ? idx->n : 1;
  if (tv->kind != V_TENSOR || n != g->rank)
    ev_error(E, sp,
             "indexing a GlobalTensor takes one index per dimension (%d here), for .item() or "
             ".item_ptr(); slicing one is not supported yet",
             g->rank);
  IrRef r = {.t = g};
  for (int i = 0; i < n; i++) {
    Value *x = idx->kind == V_TUPLE ? idx->items[i] : idx;
    if (!v_is_int_scalar(x))
      ev_error(E, sp, "tensor index must be an integer, not '%s'", v_type_name(x));
    int64_t c;
    IrExpr *e = ev_scalar_as(E, x, DT_INT32, sp);
    if (ir_is_const(e, &c) && c < 0)
      ev_error(E, sp, "index %lld of a GlobalTensor is negative", (long long)c);
    r.idx[r.nidx++] = e;
  }
  Value *v = v_new(E, V_REF);
  v->ref = r;
  return v;
}

/* The address of a global element: base + (row-major index) * bytes, in
 * 64 bits. */
static IrExpr *global_elem_addr(Eval *E, const IrRef *r) {
  Arena *ar = E->ar;
  const IrTensor *g = r->t;
  IrExpr *lin = ir_cast(ar, DT_INT64, r->idx[0]);
  for (int d = 1; d < g->rank; d++) {
    IrExpr *dim = ir_cast(ar, DT_INT64, g->gshape[d]);
    lin = ir_binary(ar, OP_ADD, ir_binary(ar, OP_MUL, lin, dim), ir_cast(ar, DT_INT64, r->idx[d]));
  }
  IrExpr *bytes = ir_binary(ar, OP_MUL, lin, ir_const(ar, DT_INT64, dtype_bytes(g->dtype)));
  return ir_binary(ar, OP_ADD, ir_cast(ar, DT_UINT64, g->gptr), ir_cast(ar, DT_UINT64, bytes));
}

/* g[i, j].item(): the element, read once here (a fresh variable holds it);
 * .item_ptr(): its address. */
Value *ev_global_item(Eval *E, Value *ref, bool ptr, Args *a, Span sp) {
  const char *what = ptr ? "item_ptr" : "item";
  if (a->npos || a->nkw) ev_error(E, sp, "%s() takes no arguments", what);
  if (!E->k) ev_error(E, sp, "%s() reads a GlobalTensor: only inside a kernel", what);
  IrExpr *addr = global_elem_addr(E, &ref->ref);
  if (ptr) return v_expr(E, addr);
  IrExpr *x = ir_load(E->ar, ref->ref.t->dtype, addr);
  IrVar *var = ir_new_var(E->ar, E->k, E->hint ? E->hint : "item", x->type);
  IrStmt *st = ir_stmt_new(E->ar, S_ASSIGN, sp);
  st->assign.var = var;
  st->assign.value = x;
  ev_emit(E, st);
  return v_expr(E, ir_var_ref(E->ar, var));
}

Value *ev_tensor_index(Eval *E, Value *tv, Value *idx, Span sp) {
  IrRef r = as_ref(tv);
  if (r.t->space == MS_REGISTER && tv->kind == V_TENSOR) return elem_get(E, r.t, idx, sp);
  if (r.t->space == MS_GLOBAL) return global_elem(E, tv, idx, sp);
  if (r.t->space != MS_SHARED)
    ev_error(E, sp, "indexing a %s is not supported yet", v_type_name(tv));
  ev_check_not_freed(E, r.t, sp);
  if (r.transposed) ev_error(E, sp, "indexing a transposed view is not supported yet");
  int n = idx->kind == V_TUPLE ? idx->n : 1;
  if (r.nidx + n > r.t->rank)
    ev_error(E, sp, "too many indices for a tensor of rank %d", r.t->rank);
  for (int i = 0; i < n; i++) {
    Value *x = idx->kind == V_TUPLE ? idx->items[i] : idx;
    if (!v_is_int_scalar(x))
      ev_error(E, sp, "tensor index must be an integer, not '%s'", v_type_name(x));
    int64_t dim = r.t->shape[r.nidx], c;
    if (x->kind == V_INT && (x->i < 0 || x->i >= dim)) /* before int32: b[2**40] */
      ev_error(E, sp, "index %lld is out of bounds for a dimension of size %lld", (long long)x->i,
               (long long)dim);
    IrExpr *e = ev_scalar_as(E, x, DT_INT32, sp);
    if (ir_is_const(e, &c) && (c < 0 || c >= dim))
      ev_error(E, sp,
               "index %lld is out of bounds for a dimension of size "
               "%lld",
               (long long)c, (long long)dim);
    r.idx[r.nidx++] = e;
  }
  Value *v = v_new(E, V_REF);
  v->ref = r;
  return v;
}

/* A compile-time bound of a column slice: an integer constant, a multiple
 * of 8 (a whole column octet of the WGMMA fragment), within [0, n]. */
static int64_t slice_bound(Eval *E, Node *b, int64_t dflt, int64_t n) {
  if (!b) return dflt;
  int64_t c = v_to_int(E, ev_eval_expr(E, b), b->span,
                       "a register tensor "
                       "slice bound");
  if (c < 0 || c > n)
    ev_error(E, b->span,
             "slice bound %lld is out of range for a dimension "
             "of size %lld",
             (long long)c, (long long)n);
  if (c % 8 != 0)
    ev_error(E, b->span,
             "slice bound %lld is not a multiple of 8: a "
             "register tensor slice takes whole column octets "
             "of the WGMMA fragment",
             (long long)c);
  return c;
}

static bool is_full_slice(const Node *n) { return n->kind == N_SLICE && !n->a && !n->b && !n->c; }

/* x[:, c0:c1] on a rank-2 register tensor: a new register tensor holding
 * columns [c0, c1), c0 and c1 compile-time multiples of 8. Only the WGMMA
 * accumulator layout can be sliced (layout.c checks it once layouts are
 * known); the statement copies the registers of those columns. */
Value *ev_tensor_slice(Eval *E, Value *tv, Node *idx, Span sp) {
  if (tv->kind != V_TENSOR || tv->t->space != MS_REGISTER)
    ev_error(E, idx->span,
             "slicing a %s is not supported yet; only register "
             "tensors take column slices x[:, c0:c1]",
             v_type_name(tv));
  IrTensor *x = tv->t;
  ev_reg_use(E, x, sp);
  if (x->rank != 2 || idx->kind != N_TUPLE || idx->list.len != 2 ||
      !is_full_slice(idx->list.items[0]) || idx->list.items[1]->kind != N_SLICE)
    ev_error(E, idx->span,
             "a register tensor slice must be x[:, c0:c1] on "
             "a rank-2 tensor (all rows, a range of columns)");
  Node *cols = idx->list.items[1];
  if (cols->c) ev_error(E, cols->c->span, "a register tensor slice takes no step");
  int64_t n = x->shape[1];
  int64_t c0 = slice_bound(E, cols->a, 0, n), c1 = slice_bound(E, cols->b, n, n);
  if (c0 >= c1)
    ev_error(E, cols->span, "the column slice %lld:%lld is empty", (long long)c0, (long long)c1);
  int64_t shape[2] = {x->shape[0], c1 - c0};
  IrTensor *t = ir_new_tensor(E->ar, E->k, ev_hint(E, "r"), MS_REGISTER, x->dtype, 2, shape, sp);
  t->nthreads = x->nthreads;
  IrStmt *s = ir_stmt_new(E->ar, S_SLICE, sp);
  s->slice.dst = t;
  s->slice.src = x;
  s->slice.begin = c0;
  s->slice.end = c1;
  ev_emit(E, s);
  return v_tensor(E, t);
}

/* Element-wise operators on tensors: + - * and true division, and the
 * comparisons (into bool tensors). */
static bool elem_op(int op, IrOp *out) {
  return op != TOK_FLOORDIV && ev_binop_code(op, out) &&
         (*out == OP_ADD || *out == OP_SUB || *out == OP_MUL || *out == OP_DIV ||
          (*out >= OP_EQ && *out <= OP_GE));
}

/* x op y as y op' x: the comparison seen from the other side. */
static IrOp mirror(IrOp op) {
  switch (op) {
  case OP_LT:
    return OP_GT;
  case OP_LE:
    return OP_GE;
  case OP_GT:
    return OP_LT;
  case OP_GE:
    return OP_LE;
  default:
    return op;
  }
}

/* The shape a and b broadcast to (numpy's rules: aligned on the right,
 * a dimension of 1 repeats). */
static int broadcast_shape(Eval *E, const IrTensor *a, const IrTensor *b, int64_t *shape, Span sp) {
  int rank = a->rank > b->rank ? a->rank : b->rank;
  for (int i = 1; i <= rank; i++) {
    int64_t x = i <= a->rank ? a->shape[a->rank - i] : 1;
    int64_t y = i <= b->rank ? b->shape[b->rank - i] : 1;
    if (x != y && x != 1 && y != 1)
      ev_error(E, sp, "tensor shapes do not broadcast: dimension %d is %lld and %lld", rank - i,
               (long long)x, (long long)y);
    shape[rank - i] = x == 1 ? y : x;
  }
  return rank;
}

/* a op b into dst (a new tensor when NULL): register tensors of one dtype
 * broadcasting, or a tensor and a scalar on either side. */
static Value *elemwise_to(Eval *E, IrOp iop, Value *a, Value *b, IrTensor *dst, Span sp) {
  bool scalar_first = a->kind != V_TENSOR;
  bool compare = iop >= OP_EQ && iop <= OP_GE;
  if (scalar_first) {
    Value *t = a;
    a = b;
    b = t;
    if (compare) iop = mirror(iop);
  }
  if (a->kind != V_TENSOR || a->t->space != MS_REGISTER ||
      (b->kind == V_TENSOR && b->t->space != MS_REGISTER))
    ev_error(E, sp,
             "arithmetic needs register tensors; load shared or "
             "global tensors into registers first");
  ev_reg_use(E, a->t, sp);
  if (b->kind == V_TENSOR) ev_reg_use(E, b->t, sp);
  if (dst) ev_reg_use(E, dst, sp);
  const char *what = compare ? "a comparison of" : "element-wise arithmetic on";
  ev_check_compute_dtype(E, a->t->dtype, sp, what);
  if (b->kind == V_TENSOR) ev_check_compute_dtype(E, b->t->dtype, sp, what);
  IrStmt *st = ir_stmt_new(E->ar, S_ELEMWISE, sp);
  st->elemwise.op = iop;
  st->elemwise.a = a->t;
  int64_t shape[IR_MAX_RANK];
  int rank = a->t->rank;
  memcpy(shape, a->t->shape, sizeof(int64_t) * (size_t)rank);
  if (b->kind == V_TENSOR) {
    IrTensor *x = a->t, *y = b->t;
    if (x->dtype != y->dtype)
      ev_error(E, sp, "tensor dtypes differ: %s and %s; cast one first", dtype_name(x->dtype),
               dtype_name(y->dtype));
    rank = broadcast_shape(E, x, y, shape, sp);
    st->elemwise.b = y;
  } else if (v_is_scalar(b)) {
    st->elemwise.scalar = ev_scalar_as(E, b, a->t->dtype, sp);
    st->elemwise.scalar_first = scalar_first && !compare && iop != OP_ADD && iop != OP_MUL &&
                                iop != OP_MAX && iop != OP_MIN;
    int64_t c; /* integer tensors divide as C does: by zero is undefined */
    if (iop == OP_DIV && !scalar_first && !dtype_is_float(a->t->dtype) &&
        ir_is_const(st->elemwise.scalar, &c) && c == 0)
      ev_error(E, sp, "division by zero");
  } else {
    ev_error(E, sp, "unsupported operand types for %s: '%s' and '%s'", ir_op_name(iop),
             v_type_name(a), v_type_name(b));
  }
  DType dt = compare ? DT_BOOL : a->t->dtype;
  if (dst && (dst->dtype != dt || dst->rank != rank ||
              memcmp(dst->shape, shape, sizeof(int64_t) * (size_t)rank) != 0))
    ev_error(E, sp, "the result does not fit the tensor it updates");
  if (!dst) {
    dst = ir_new_tensor(E->ar, E->k, "t", MS_REGISTER, dt, rank, shape, sp);
    dst->nthreads = a->t->nthreads;
  }
  st->elemwise.dst = dst;
  ev_emit(E, st);
  return v_tensor(E, st->elemwise.dst);
}

Value *ev_tensor_elemwise(Eval *E, IrOp op, Value *a, Value *b, Span sp) {
  return elemwise_to(E, op, a, b, NULL, sp);
}

/* a op b (a Python operator) where one side is a register tensor. */
Value *ev_tensor_binop_to(Eval *E, int op, Value *a, Value *b, IrTensor *dst, Span sp) {
  IrOp iop;
  if (!elem_op(op, &iop))
    ev_error(E, sp, "operator %s on tensors is not supported yet", op_name(op));
  return elemwise_to(E, iop, a, b, dst, sp);
}

Value *ev_tensor_binop(Eval *E, int op, Value *a, Value *b, Span sp) {
  return ev_tensor_binop_to(E, op, a, b, NULL, sp);
}

/* ------------------------------------------------ tensor records */

TensorRec *ev_tensor_rec(Eval *E, const IrTensor *t) {
  if (E->recs_k != E->k) { /* a new kernel: new ids */
    E->recs_k = E->k;
    E->recs = NULL;
    E->nrecs = 0;
  }
  if (t->id >= E->nrecs) {
    int n = E->nrecs ? E->nrecs : 16;
    while (n <= t->id) n *= 2;
    TensorRec **r = arena_alloc(E->ar, sizeof(TensorRec *) * (size_t)n);
    if (E->nrecs) memcpy(r, E->recs, sizeof(TensorRec *) * (size_t)E->nrecs);
    E->recs = r;
    E->nrecs = n;
  }
  if (!E->recs[t->id]) E->recs[t->id] = arena_alloc(E->ar, sizeof(TensorRec));
  return E->recs[t->id];
}

void ev_reg_use(Eval *E, IrTensor *t, Span sp) {
  TensorRec *rec = ev_tensor_rec(E, t);
  if (rec->elems)
    ev_error(E, sp,
             "register tensor '%s' is used element by element (%s[i]); it cannot also be used "
             "as a whole tensor",
             t->name, t->name);
  rec->used = true;
}

/* free_shared(t), Tilus's meaning: the shared tensors made after this
 * point may get t's bytes. A second free is refused, and so is a free
 * inside a run-time loop that did not make t: each trip would free it
 * again, and Tilus would give its bytes to tensors the next trip still
 * overlaps with t. Inside a run-time if that did not make t, the bytes go
 * back when the if ends (ev_rt_leave). */
void ev_free_shared(Eval *E, IrTensor *t, Span sp) {
  TensorRec *rec = ev_tensor_rec(E, t);
  if (rec->freed.line)
    ev_error(E, sp, "shared tensor '%s' is freed twice (free_shared() at line %d first)", t->name,
             rec->freed.line);
  RtFrame *outer_if = NULL;
  for (RtFrame *f = E->rt_frames; f && f->first_tensor > t->id; f = f->up) {
    if (f->loop)
      ev_error(E, sp,
               "free_shared(%s) inside a run-time loop that does not create '%s' (line %d): "
               "each trip would free it again; free it after the loop",
               t->name, t->name, t->span.line);
    outer_if = f;
  }
  rec->freed = sp;
  t->freed_at = sp;
  t->freed_before = E->k->ntensors;
  if (!outer_if) return;
  t->freed_before = INT_MAX; /* until the if ends */
  int n = outer_if->ndeferred;
  if ((n & (n - 1)) == 0) { /* 0, 1, 2, 4 ...: full, double it */
    IrTensor **d = arena_alloc(E->ar, sizeof(IrTensor *) * (size_t)(2 * n + 1));
    if (n) memcpy(d, outer_if->deferred, sizeof(IrTensor *) * (size_t)n);
    outer_if->deferred = d;
  }
  outer_if->deferred[outer_if->ndeferred++] = t;
}

void ev_rt_enter(Eval *E, RtFrame *f, bool loop) {
  *f = (RtFrame){E->rt_frames, loop, E->k ? E->k->ntensors : 0, NULL, 0, NULL, 0};
  E->rt_frames = f;
}

bool ev_rt_note_rebind(Eval *E, const char *name, Value *entry, Span sp) {
  RtFrame *f = E->rt_frames;
  if (!f) return false;
  for (int i = 0; i < f->nrestores; i++)
    if (!strcmp(f->restores[i].name, name)) return true;
  int n = f->nrestores;
  if ((n & (n - 1)) == 0) { /* 0, 1, 2, 4 ...: full, double it */
    Restore *r = arena_alloc(E->ar, sizeof(Restore) * (size_t)(2 * n + 1));
    if (n) memcpy(r, f->restores, sizeof(Restore) * (size_t)n);
    f->restores = r;
  }
  f->restores[f->nrestores++] = (Restore){name, entry, sp};
  return true;
}

/* The body is evaluated once for every trip (or for the branch): that is
 * faithful only if each compile-time name it rebinds ends as it began, so
 * that every trip starts alike and the value after the construct does not
 * depend on how many trips ran. */
void ev_rt_check_restored(Eval *E, RtFrame *f) {
  for (int i = 0; i < f->nrestores; i++) {
    Restore *r = &f->restores[i];
    Slot *s = ev_dict_find(ev_cur_scope(E), r->name);
    if (!s || s->var || !s->val || !v_same(E, s->val, r->entry, r->at))
      ev_error(E, r->at,
               "'%s' holds a compile-time value and cannot be assigned "
               "in a run-time loop or branch unless it ends with the value it had "
               "before; annotate it (%s: int32 = ...)",
               r->name, r->name);
  }
  f->nrestores = 0;
}

void ev_rt_leave(Eval *E, RtFrame *f) {
  for (int i = 0; i < f->ndeferred; i++) f->deferred[i]->freed_before = E->k->ntensors;
  E->rt_frames = f->up;
}

void ev_check_not_freed(Eval *E, const IrTensor *t, Span sp) {
  if (t->space != MS_SHARED) return;
  const IrTensor *owner = t->alias_of ? t->alias_of : t; /* whose bytes */
  TensorRec *rec = ev_tensor_rec(E, owner);
  if (rec->freed.line && owner != t)
    ev_error(E, sp,
             "shared tensor '%s' is used after free_shared(%s) (line %d): it is a reshape of '%s'",
             t->name, owner->name, rec->freed.line, owner->name);
  if (rec->freed.line)
    ev_error(E, sp, "shared tensor '%s' is used after free_shared() (line %d)", t->name,
             rec->freed.line);
}

/* ------------------------------------- register tensors by element */

enum { EV_MAX_ELEMS = 64 }; /* elements of a register tensor used one by one */

/* Inserts n statements after `after` in b (the fill of a register tensor
 * made before the point being evaluated); at b's start when there is none
 * (a register_tensor() without init=: nothing before it in b can use the
 * new variables). */
static void block_insert_after(Eval *E, IrBlock *b, IrStmt *after, IrStmt **ss, int n) {
  int at = 0;
  if (after) {
    while (at < b->len && b->items[at] != after) at++;
    if (at < b->len) at++;
  }
  for (int i = 0; i < n; i++) ir_block_push(E->ar, b, ss[i]); /* room */
  memmove(&b->items[at + n], &b->items[at], sizeof(IrStmt *) * (size_t)(b->len - n - at));
  memcpy(&b->items[at], ss, sizeof(IrStmt *) * (size_t)n);
  E->kernel_stmts += n;
}

/* The variables of register tensor t used element by element, as Tilus
 * indexes a register tensor (phases[stage]): a rank-1 tensor of at most 64
 * scalars made by register_tensor() and not used as a whole tensor; every
 * thread holds every element. Made on first use: one variable per element,
 * set to the init value right after the tensor's fill. */
static IrVar **elem_vars(Eval *E, IrTensor *t, Span sp) {
  TensorRec *rec = ev_tensor_rec(E, t);
  if (rec->elems) return rec->elems;
  if (t->rank != 1 || t->shape[0] > EV_MAX_ELEMS || t->dtype == DT_FLOAT16 ||
      t->dtype == DT_BFLOAT16)
    ev_error(E, sp,
             "indexing a register tensor is supported for rank-1 tensors of at most %d "
             "32- or 64-bit elements (a [%s%lld%s] %s tensor here)",
             EV_MAX_ELEMS, "", (long long)t->shape[0], t->rank > 1 ? ", ..." : "",
             dtype_name(t->dtype));
  if (!rec->blk)
    ev_error(E, sp, "indexing a register tensor is supported for tensors of register_tensor()");
  if (rec->used)
    ev_error(E, sp,
             "register tensor '%s' was used as a whole tensor before; indexing it element by "
             "element is not supported yet",
             t->name);
  int n = (int)t->shape[0];
  rec->elems = arena_alloc(E->ar, sizeof(IrVar *) * (size_t)n);
  IrStmt **ss = arena_alloc(E->ar, sizeof(IrStmt *) * (size_t)n);
  for (int i = 0; i < n; i++) {
    rec->elems[i] = ir_new_var(E->ar, E->k, arena_printf(E->ar, "%s_%d", t->name, i), t->dtype);
    ss[i] = ir_stmt_new(E->ar, S_ASSIGN, rec->fill ? rec->fill->span : t->span);
    ss[i]->assign.var = rec->elems[i];
    ss[i]->assign.value = rec->fill                  ? rec->fill->fill.value
                          : dtype_is_float(t->dtype) ? ir_const_f(E->ar, t->dtype, 0.0)
                                                     : ir_const(E->ar, t->dtype, 0);
  }
  block_insert_after(E, rec->blk, rec->fill, ss, n);
  return rec->elems;
}

/* The index of t[idx]: a compile-time element number, or -1 and *rt the
 * run-time one. */
static int64_t elem_index(Eval *E, IrTensor *t, Value *idx, Span sp, IrExpr **rt) {
  if (idx->kind == V_TUPLE && idx->n == 1) idx = idx->items[0];
  if (!v_is_int_scalar(idx))
    ev_error(E, sp, "tensor index must be an integer, not '%s'", v_type_name(idx));
  IrExpr *e = ev_scalar_as(E, idx, DT_INT32, sp);
  int64_t c;
  if (!ir_is_const(e, &c)) {
    *rt = e;
    return -1;
  }
  if (c < 0 || c >= t->shape[0])
    ev_error(E, sp, "index %lld is out of bounds for a dimension of size %lld", (long long)c,
             (long long)t->shape[0]);
  return c;
}

static Value *elem_get(Eval *E, IrTensor *t, Value *idx, Span sp) {
  IrVar **vs = elem_vars(E, t, sp);
  IrExpr *rt = NULL;
  int64_t i = elem_index(E, t, idx, sp, &rt);
  if (i >= 0) return v_expr(E, ir_var_ref(E->ar, vs[i]));
  IrExpr *x = ir_var_ref(E->ar, vs[t->shape[0] - 1]);
  for (int64_t k = t->shape[0] - 2; k >= 0; k--)
    x = ir_select(E->ar, ir_binary(E->ar, OP_EQ, rt, ir_const(E->ar, DT_INT32, k)),
                  ir_var_ref(E->ar, vs[k]), x);
  return ev_rt_value(E, x, sp);
}

void ev_tensor_elem_set(Eval *E, Value *tv, Value *idx, Value *v, Span sp) {
  IrTensor *t = tv->t;
  if (tv->kind != V_TENSOR || t->space != MS_REGISTER)
    ev_error(E, sp, "assignment to an element of a %s is not supported", v_type_name(tv));
  IrVar **vs = elem_vars(E, t, sp);
  IrExpr *rt = NULL;
  int64_t i = elem_index(E, t, idx, sp, &rt);
  if (!v_is_scalar(v))
    ev_error(E, sp, "an element of register tensor '%s' takes a scalar, not '%s'", t->name,
             v_type_name(v));
  IrExpr *x = ev_scalar_as(E, v, t->dtype, sp);
  if (i < 0 && ev_expr_uses_var(x)) { /* read before any element is written */
    IrVar *tmp = ir_new_var(E->ar, E->k, arena_printf(E->ar, "%s_new", t->name), t->dtype);
    IrStmt *st = ir_stmt_new(E->ar, S_ASSIGN, sp);
    st->assign.var = tmp;
    st->assign.value = x;
    ev_emit(E, st);
    x = ir_var_ref(E->ar, tmp);
  }
  for (int64_t k = 0; k < t->shape[0]; k++) {
    if (i >= 0 && k != i) continue;
    IrStmt *st = ir_stmt_new(E->ar, S_ASSIGN, sp);
    st->assign.var = vs[k];
    st->assign.value =
        i >= 0 ? x
               : ir_select(E->ar, ir_binary(E->ar, OP_EQ, rt, ir_const(E->ar, DT_INT32, k)), x,
                           ir_var_ref(E->ar, vs[k]));
    ev_emit(E, st);
  }
}

/* x.tolist(): the barriers of self.mbarrier.alloc(...), each one a value. */
Value *ev_tensor_tolist(Eval *E, Value *tv, Args *a, Span sp) {
  if (a->npos || a->nkw) ev_error(E, sp, "tolist() takes no arguments");
  IrRef r = as_ref(tv);
  if (tv->kind == V_TENSOR && tv->t->space == MS_REGISTER) {
    Value *l = v_seq(E, V_LIST, (int)tv->t->shape[0]);
    if (tv->t->rank != 1) ev_error(E, sp, "tolist() of a register tensor of rank %d", tv->t->rank);
    for (int i = 0; i < l->n; i++) l->items[i] = elem_get(E, tv->t, v_int(E, i), sp);
    return l;
  }
  if (!r.t->is_mbarrier || r.nidx != 0)
    ev_error(E, sp, "tolist() of a %s is not supported yet (barriers of mbarrier.alloc only)",
             v_type_name(tv));
  Value *l = v_seq(E, V_LIST, (int)r.t->shape[0]);
  for (int i = 0; i < l->n; i++) {
    Value *b = v_new(E, V_REF);
    b->ref = r;
    b->ref.idx[0] = ir_const(E->ar, DT_INT32, i);
    b->ref.nidx = 1;
    l->items[i] = b;
  }
  return l;
}
