/* eval_layout.c: the layouts a script builds itself, as Tilus builds them:
 * tilus.ir.layout.ops (local, spatial, column_local, column_spatial,
 * compose and `*`, .local() / .spatial() ..., reduce, concat; the shared
 * layouts, which tlsc accepts in annotate_layout and leaves to its own
 * shared-memory planning: a swizzle changes bank conflicts, not values),
 * self.cuda.atomic_mma_configs and self.cuda.mma_dot_config, and
 * self.view(x, layout=, dtype=). The algebra itself is ir/layout_ops.c. */
#include <string.h>

#include "eval/eval_int.h"

static const char *const layout_fn_names[] = {
    "local",  "spatial", "column_local",     "column_spatial",      "concat",
    "reduce", "compose", "shared_row_major", "shared_column_major", "shared_row_major_swizzle",
};

static bool is_layout_fn(const char *name, bool methods_only) {
  int n = methods_only ? 4 : (int)(sizeof layout_fn_names / sizeof layout_fn_names[0]);
  for (int i = 0; i < n; i++)
    if (strcmp(layout_fn_names[i], name) == 0) return true;
  return false;
}

/* tilus.ir.layout(.ops).NAME: a layout function; NULL for another name. */
Value *ev_layout_module_attr(Eval *E, const char *path, const char *name) {
  if (strncmp(path, "tilus.ir.layout", 15) != 0 || !is_layout_fn(name, false)) return NULL;
  Value *f = v_builtin(E, B_LAYOUT_FN, NULL);
  f->s = name;
  return f;
}

static Value *layout_value(Eval *E, IrRegLayout *L, Span sp, const char *what) {
  if (!L)
    ev_error(E, sp, "%s: the layout needs more than %d dimensions or %d modes", what, IR_MAX_RANK,
             IR_MAX_MODES);
  Value *v = v_new(E, V_LAYOUT);
  v->layout = L;
  return v;
}

static const IrRegLayout *to_layout(Eval *E, Value *v, Span sp, const char *what) {
  if (v->kind != V_LAYOUT || !v->layout)
    ev_error(E, sp, "%s must be a register layout, not '%s'", what, v_type_name(v));
  return v->layout;
}

/* local(*shape, ranks=None) and its kin; the positional arguments from
 * `first` on are the sizes. */
static IrRegLayout *atom(Eval *E, const char *fn, Args *a, int first, Span sp) {
  int rank = a->npos - first;
  if (rank < 1 || rank > IR_MAX_RANK)
    ev_error(E, sp, "%s() takes 1 to %d sizes, not %d", fn, IR_MAX_RANK, rank);
  int64_t shape[IR_MAX_RANK];
  int ranks[IR_MAX_RANK];
  bool column = strncmp(fn, "column_", 7) == 0, has_ranks = column;
  for (int d = 0; d < rank; d++) {
    shape[d] = v_to_int(E, a->pos[first + d], sp, "a layout size");
    if (shape[d] < 1 || shape[d] > (1 << 24))
      ev_error(E, sp, "%s(): size %lld out of range", fn, (long long)shape[d]);
    ranks[d] = column ? rank - 1 - d : d;
  }
  for (int i = 0; i < a->nkw; i++) {
    Value *r = a->kw[i];
    if (strcmp(a->kw_name[i], "ranks") != 0 || column)
      ev_error(E, sp, "%s() got an unexpected keyword argument '%s'", fn, a->kw_name[i]);
    if (r->kind == V_NONE) continue;
    if ((r->kind != V_LIST && r->kind != V_TUPLE) || r->n != rank)
      ev_error(E, sp, "%s(): ranks must list one rank per dimension", fn);
    unsigned seen = 0;
    for (int d = 0; d < rank; d++) {
      int64_t x = v_to_int(E, r->items[d], sp, "a rank");
      if (x < 0 || x >= rank || seen >> x & 1)
        ev_error(E, sp, "%s(): ranks must be a permutation of 0..%d", fn, rank - 1);
      seen |= 1u << x;
      ranks[d] = (int)x;
    }
    has_ranks = true;
  }
  bool spatial = strstr(fn, "spatial") != NULL;
  return ir_rl_atom(E->ar, rank, shape, has_ranks ? ranks : NULL, spatial);
}

/* reduce(layout, dims, keepdims=False) */
static Value *reduce_fn(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"layout", "dims", "keepdims", NULL};
  Value *v[3] = {NULL};
  ev_bind_args(E, a, sp, "reduce", names, 2, v);
  const IrRegLayout *L = to_layout(E, v[0], sp, "reduce() layout");
  Value *dims = v[1];
  if (dims->kind != V_LIST && dims->kind != V_TUPLE)
    ev_error(E, sp, "reduce(): dims must be a list of dimensions");
  unsigned mask = 0;
  for (int i = 0; i < dims->n; i++) {
    int64_t d = v_to_int(E, dims->items[i], sp, "a dimension");
    if (d < 0 || d >= L->rank || mask >> d & 1)
      ev_error(E, sp, "reduce(): dimension %lld is out of range or named twice", (long long)d);
    mask |= 1u << d;
  }
  bool keep = v[2] && v_truthy(E, v[2], sp);
  return layout_value(E, ir_rl_reduce(E->ar, L, mask, keep), sp, "reduce()");
}

/* Calls of tilus.ir.layout.ops functions (fn->s names it). */
Value *ev_call_layout_fn(Eval *E, Value *fn, Args *a, Span sp) {
  const char *name = fn->s;
  if (strncmp(name, "shared_", 7) == 0) { /* tlsc plans shared memory itself */
    Value *v = v_new(E, V_LAYOUT);
    v->s = name;
    return v;
  }
  if (strcmp(name, "reduce") == 0) return reduce_fn(E, a, sp);
  if (strcmp(name, "concat") == 0 || strcmp(name, "compose") == 0) {
    if (a->npos != 2 || a->nkw) ev_error(E, sp, "%s() takes two layouts", name);
    const IrRegLayout *x = to_layout(E, a->pos[0], sp, name),
                      *y = to_layout(E, a->pos[1], sp, name);
    IrRegLayout *L =
        name[1] == 'o' && name[2] == 'n' ? ir_rl_concat(E->ar, x, y) : ir_rl_compose(E->ar, x, y);
    return layout_value(E, L, sp, name);
  }
  if (fn->self) { /* layout.local(*shape) ...: self * local(*shape) */
    IrRegLayout *inner = atom(E, name, a, 0, sp);
    return layout_value(E, inner ? ir_rl_compose(E->ar, fn->self->layout, inner) : NULL, sp, name);
  }
  return layout_value(E, atom(E, name, a, 0, sp), sp, name);
}

/* outer * inner */
Value *ev_layout_product(Eval *E, Value *a, Value *b, Span sp) {
  const IrRegLayout *x = to_layout(E, a, sp, "an operand of *"), *y = to_layout(E, b, sp, "*");
  return layout_value(E, ir_rl_compose(E->ar, x, y), sp, "*");
}

static Value *int_tuple(Eval *E, int n, const int64_t *xs) {
  Value *t = v_seq(E, V_TUPLE, n);
  for (int i = 0; i < n; i++) t->items[i] = v_int(E, xs[i]);
  return t;
}

/* layout.shape, .local_size, .spatial_size, .size, and the methods. */
Value *ev_layout_attr(Eval *E, Value *obj, const char *name, Span sp) {
  if (!obj->layout) ev_error(E, sp, "tlsc does not model shared layouts: no attribute '%s'", name);
  const IrRegLayout *L = obj->layout;
  if (strcmp(name, "shape") == 0) return int_tuple(E, L->rank, L->shape);
  if (strcmp(name, "local_size") == 0) return v_int(E, L->nslots);
  if (strcmp(name, "spatial_size") == 0) return v_int(E, L->nthreads);
  if (strcmp(name, "size") == 0) {
    int64_t n = 1;
    for (int d = 0; d < L->rank; d++) n *= L->shape[d];
    return v_int(E, n);
  }
  if (is_layout_fn(name, true)) {
    Value *f = v_builtin(E, B_LAYOUT_FN, obj);
    f->s = name;
    return f;
  }
  ev_error(E, sp, "'RegisterLayout' object has no attribute '%s' in tlsc", name);
}

/* ------------------------------------------------------- mma configs */

/* The mma.sync atoms of cuda.atomic_mma_configs that tlsc's dot has. */
static const struct {
  const char *name;
  DType operand, acc;
} atomic_mmas[] = {
    {"m16n8k16_f16_f32", DT_FLOAT16, DT_FLOAT32},
    {"m16n8k16_f16_f16", DT_FLOAT16, DT_FLOAT16},
    {"m16n8k16_bf16_f32", DT_BFLOAT16, DT_FLOAT32},
};

/* cuda.atomic_mma_configs.NAME (obj NS_ATOMIC_MMAS) and the attributes of
 * one atom (obj NS_ATOMIC_MMA, i = its index): m, n, k, vec_k, la, lb,
 * lc, operand_type, acc_type, name. */
Value *ev_atomic_mma_attr(Eval *E, Value *obj, const char *name, Span sp) {
  if (obj->bi == NS_ATOMIC_MMAS) {
    for (size_t i = 0; i < sizeof atomic_mmas / sizeof atomic_mmas[0]; i++)
      if (strcmp(atomic_mmas[i].name, name) == 0) {
        Value *v = v_new(E, V_NS);
        v->bi = NS_ATOMIC_MMA;
        v->i = (int64_t)i;
        return v;
      }
    ev_error(E, sp, "cuda.atomic_mma_configs.%s is not supported by tlsc (its dot has %s, %s, %s)",
             name, atomic_mmas[0].name, atomic_mmas[1].name, atomic_mmas[2].name);
  }
  int64_t mnk[3] = {16, 8, 16};
  const char *dims = "mnk";
  for (int i = 0; i < 3; i++)
    if (name[0] == dims[i] && !name[1]) return v_int(E, mnk[i]);
  if (strcmp(name, "vec_k") == 0) return v_int(E, 1);
  if (name[0] == 'l' && name[1] >= 'a' && name[1] <= 'c' && !name[2]) {
    static const IrMmaRole roles[] = {MMA_A, MMA_B, MMA_C};
    int r = name[1] - 'a';
    IrRegLayout *L = ir_reglayout_mma(E->ar, roles[r], r == 1 ? 16 : 16, r == 0 ? 16 : 8, 1, 1, 2);
    return layout_value(E, L, sp, name);
  }
  if (strcmp(name, "operand_type") == 0 || strcmp(name, "acc_type") == 0) {
    Value *v = v_new(E, V_DTYPE);
    v->dt = name[0] == 'o' ? atomic_mmas[obj->i].operand : atomic_mmas[obj->i].acc;
    return v;
  }
  if (strcmp(name, "name") == 0) return v_str(E, atomic_mmas[obj->i].name);
  ev_error(E, sp, "AtomicMmaConfig has no attribute '%s' in tlsc", name);
}

static void int_pair(Eval *E, Value *v, int n, int64_t *out, Span sp, const char *what) {
  if ((v->kind != V_LIST && v->kind != V_TUPLE) || v->n != n)
    ev_error(E, sp, "mma_dot_config(): %s must be %d ints", what, n);
  for (int i = 0; i < n; i++) {
    out[i] = v_to_int(E, v->items[i], sp, what);
    if (out[i] < 1 || out[i] > 64) ev_error(E, sp, "mma_dot_config(): %s out of range", what);
  }
}

/* Tilus's own definition of the operand layouts of mma_dot_config, for
 * the check that ir_reglayout_mma gives the same maps. */
static bool tilus_layouts_agree(Eval *E, IrRegLayout *const *ls, const int64_t *ws,
                                const int64_t *wr) {
  Arena *ar = E->ar;
  int64_t a3[3] = {ws[0], 1, ws[1]}, b3[3] = {1, ws[1], ws[0]}, two[2] = {wr[0], wr[2]};
  int ra[3] = {1, 0, 2}, rb[3] = {0, 2, 1};
  int64_t bl[2] = {wr[2], wr[1]}, cl[2] = {wr[0], wr[1]};
  IrRegLayout *wa = ir_rl_reduce(ar, ir_rl_atom(ar, 3, a3, ra, true), 4, false);
  IrRegLayout *wb = ir_rl_reduce(ar, ir_rl_atom(ar, 3, b3, rb, true), 4, false);
  IrRegLayout *la = ir_rl_compose(ar, ir_rl_compose(ar, wa, ir_rl_atom(ar, 2, two, NULL, false)),
                                  ir_reglayout_mma(ar, MMA_A, 16, 16, 1, 1, 2));
  IrRegLayout *lb = ir_rl_compose(ar, ir_rl_compose(ar, wb, ir_rl_atom(ar, 2, bl, NULL, false)),
                                  ir_reglayout_mma(ar, MMA_B, 16, 8, 1, 1, 2));
  IrRegLayout *lc = ir_rl_compose(
      ar, ir_rl_compose(ar, ir_rl_atom(ar, 2, ws, NULL, true), ir_rl_atom(ar, 2, cl, NULL, false)),
      ir_reglayout_mma(ar, MMA_C, 16, 8, 1, 1, 2));
  return ir_reglayout_equal(la, ls[0]) && ir_reglayout_equal(lb, ls[1]) &&
         ir_reglayout_equal(lc, ls[2]);
}

/* self.cuda.mma_dot_config(atomic_mma, warp_spatial, warp_repeat): the
 * operand layouts of a block of wsm x wsn warps, each repeating the atom
 * wrm x wrn x wrk times; refused as Tilus refuses it, when the fragments
 * would take 224 registers or more. */
Value *ev_mma_dot_config(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"atomic_mma", "warp_spatial", "warp_repeat", NULL};
  Value *v[3] = {NULL};
  ev_bind_args(E, a, sp, "mma_dot_config", names, 3, v);
  if (v[0]->kind != V_NS || v[0]->bi != NS_ATOMIC_MMA)
    ev_error(E, sp, "mma_dot_config(): atomic_mma must be one of cuda.atomic_mma_configs");
  int64_t ws[2], wr[3];
  int_pair(E, v[1], 2, ws, sp, "warp_spatial");
  int_pair(E, v[2], 3, wr, sp, "warp_repeat");
  int acc_bytes = dtype_bytes(atomic_mmas[v[0]->i].acc);
  int64_t regs =
      (wr[0] * wr[2] * 8 * 2 + wr[1] * wr[2] * 4 * 2 + wr[0] * wr[1] * 4 * acc_bytes) / 4;
  if (regs >= 256 - 32)
    ev_error(E, sp, "ValueError: The register usage (%lld) of given config is too high.",
             (long long)regs);
  int64_t m = 16 * ws[0] * wr[0], n = 8 * ws[1] * wr[1], k = 16 * wr[2];
  Value *cfg = v_new(E, V_NS);
  cfg->bi = NS_DOTCFG;
  cfg->n = 3;
  cfg->items = arena_alloc(E->ar, sizeof(Value *) * 3);
  IrRegLayout *ls[3] = {ir_reglayout_mma(E->ar, MMA_A, m, k, ws[0], ws[1], 2),
                        ir_reglayout_mma(E->ar, MMA_B, k, n, ws[0], ws[1], 2),
                        ir_reglayout_mma(E->ar, MMA_C, m, n, ws[0], ws[1], 2)};
  if (!tilus_layouts_agree(E, ls, ws, wr))
    ev_error(E, sp, "internal error: mma_dot_config's layouts differ from Tilus's");
  for (int i = 0; i < 3; i++) cfg->items[i] = layout_value(E, ls[i], sp, "mma_dot_config");
  return cfg;
}

/* ------------------------------------------------------------- view */

/* self.view(x, layout=None, dtype=None): x's bits, thread by thread, seen
 * as another dtype in another layout (S_VIEW). The bits per thread must
 * agree: checked here against an annotated or given layout, and by the
 * backend once layout inference has given x its layout. */
Value *ev_view(Eval *E, Args *a, Span sp) {
  static const char *const names[] = {"x", "layout", "dtype", NULL};
  Value *v[3] = {NULL};
  ev_bind_args(E, a, sp, "view", names, 1, v);
  IrTensor *x = v_to_tensor(E, v[0], sp, MS_REGISTER, "view() argument");
  ev_reg_use(E, x, sp);
  DType dt = v[2] && v[2]->kind != V_NONE ? v_to_dtype(E, v[2], sp, "dtype") : x->dtype;
  const IrRegLayout *L = v[1] && v[1]->kind != V_NONE ? to_layout(E, v[1], sp, "layout") : x->want;
  if (!L) ev_error(E, sp, "view(): tlsc needs layout= (or an annotated tensor) to view it");
  bool fits = dtype_bits(dt) != 16 && dtype_bits(x->dtype) != 16 && dtype_bits(dt) <= 32 &&
              dtype_bits(x->dtype) <= 32 && dt != DT_BOOL && x->dtype != DT_BOOL;
  if (!fits)
    ev_error(E, sp, "view(): tlsc views dtypes of 1 to 8 or 32 bits, not %s as %s",
             dtype_name(x->dtype), dtype_name(dt));
  if (L->nthreads != x->nthreads)
    ev_error(E, sp, "view(): the layout spreads over %lld threads, '%s' over %d",
             (long long)L->nthreads, x->name, x->nthreads);
  const IrRegLayout *src = x->want;
  if (src && src->nslots * dtype_bits(x->dtype) != L->nslots * dtype_bits(dt))
    ev_error(E, sp, "view(): %lld bits per thread as %s, %lld as %s",
             (long long)(src->nslots * dtype_bits(x->dtype)), dtype_name(x->dtype),
             (long long)(L->nslots * dtype_bits(dt)), dtype_name(dt));
  IrTensor *d = ir_new_tensor(E->ar, E->k, ev_hint(E, "r"), MS_REGISTER, dt, L->rank, L->shape, sp);
  d->nthreads = x->nthreads;
  d->want = (IrRegLayout *)L;
  d->want_span = sp;
  IrStmt *s = ir_stmt_new(E->ar, S_VIEW, sp);
  s->cast.dst = d;
  s->cast.src = x;
  ev_emit(E, s);
  return v_tensor(E, d);
}

/* ------------------------------------------------------------ dtypes */

static const char *const dtype_methods[] = {
    "is_float",   "is_integer", "is_any_float16", "is_integer_subbyte", "is_float_subbyte",
    "is_subbyte", "is_vector",  "is_boolean",     "signedness",
};

/* dtype.nbits, dtype.nbytes (a TypeError for a sub-byte type, as in
 * Tilus), the predicates as methods. */
Value *ev_dtype_attr(Eval *E, Value *obj, const char *name, Span sp) {
  DType t = obj->dt;
  if (strcmp(name, "nbits") == 0) return v_int(E, dtype_bits(t));
  if (strcmp(name, "nbytes") == 0) {
    if (dtype_is_subbyte(t))
      ev_error(E, sp, "TypeError: Cannot access nbytes property for the type(%s", dtype_name(t));
    return v_int(E, dtype_bytes(t));
  }
  if (strcmp(name, "name") == 0) return v_str(E, dtype_name(t));
  for (size_t i = 0; i < sizeof dtype_methods / sizeof dtype_methods[0]; i++)
    if (strcmp(dtype_methods[i], name) == 0) {
      Value *f = v_builtin(E, B_DTYPE_METHOD, obj);
      f->s = dtype_methods[i];
      return f;
    }
  ev_error(E, sp, "'DataType' object has no attribute '%s' in tlsc", name);
}

Value *ev_call_dtype_method(Eval *E, Value *fn, Args *a, Span sp) {
  if (a->npos || a->nkw) ev_error(E, sp, "%s() takes no arguments", fn->s);
  DType t = fn->self->dt;
  bool fl = dtype_is_float(t), sub = dtype_is_subbyte(t), r;
  if (strcmp(fn->s, "is_float") == 0)
    r = fl;
  else if (strcmp(fn->s, "is_integer") == 0)
    r = !fl && t != DT_BOOL;
  else if (strcmp(fn->s, "is_any_float16") == 0)
    r = t == DT_FLOAT16 || t == DT_BFLOAT16;
  else if (strcmp(fn->s, "is_integer_subbyte") == 0)
    r = sub && !fl;
  else if (strcmp(fn->s, "is_float_subbyte") == 0)
    r = sub && fl;
  else if (strcmp(fn->s, "is_subbyte") == 0)
    r = sub;
  else if (strcmp(fn->s, "is_boolean") == 0)
    r = t == DT_BOOL;
  else if (strcmp(fn->s, "signedness") == 0)
    r = dtype_is_signed(t) || fl;
  else
    r = false; /* is_vector */
  return v_bool(E, r);
}

void ev_check_cast_to(Eval *E, DType from, DType to, Span sp) {
  if (dtype_is_subbyte(to) && from != to)
    ev_error(E, sp,
             "a conversion into %s is not supported: tlsc converts sub-byte dtypes to wider "
             "ones only (view() reinterprets packed bits)",
             dtype_name(to));
}
