/* eval_int.h: private header of the staged evaluator (the files of eval/).
 *
 * The evaluator runs a .tls script the way Tilus runs its Python: plain
 * values (ints, lists, classes, instances ...) are computed now, at compile
 * time; values that depend on kernel parameters, block indices or run-time
 * variables are IR expressions, and the primitives of tilus.Script append IR
 * statements to the current block. Methods are inlined at their call sites.
 *
 * Errors are reported through ev_error, which prints the diagnostic and the
 * "in call from here" chain and then unwinds to eval_build with longjmp: the
 * first error ends the build (the arena frees everything).
 */
#ifndef TLSC_EVAL_INT_H
#define TLSC_EVAL_INT_H

#include <setjmp.h>

#include "eval/eval.h"

enum {
  EV_MAX_CALL_DEPTH = 64,      /* inlined calls deep */
  EV_MAX_LOOP_ITERS = 1 << 20, /* iterations of one compile-time loop */
  EV_MAX_LIST_LEN = 1 << 20,   /* elements of one compile-time list */
  EV_MAX_STR_LEN = 1 << 20,    /* bytes of one compile-time string */
  EV_MAX_STEPS = 2000000,      /* statements + comprehension steps, all */
  EV_MAX_ARENA_MB = 512,       /* memory the compile may hold by then: Tilus's
                                  Ampere split-K file (384 entries) holds 50 */
  EV_DICT_HASH_MIN = 16,       /* names of a scope before it gets a hash */
  EV_MAX_EXPR_NODES = 1024,    /* nodes of a run-time expression tree before
                                  it is computed into a variable */
  EV_MAX_VALUE_DEPTH = 1000    /* nesting of compile-time values compared */
};

/* Why a V_UNDEF name has no value (its i). */
typedef enum UndefWhy {
  UNDEF_SOME_PATHS, /* bound on only some paths of a run-time if */
  UNDEF_DELETED,    /* del name: lookups say it is not defined */
  UNDEF_LOOP_VAR,   /* a run-time loop's variable after the loop (n: its line) */
} UndefWhy;

typedef enum VKind {
  V_UNDEF, /* a name with no value: i says why (UndefWhy) */
  V_NONE,
  V_BOOL,    /* i */
  V_INT,     /* i */
  V_FLOAT,   /* f */
  V_STR,     /* s */
  V_LIST,    /* items, n */
  V_TUPLE,   /* items, n */
  V_DTYPE,   /* dt: float16, int32 ... */
  V_PTRTYPE, /* dt: ~float16 */
  V_MODULE,  /* s: a module tlsc knows (tilus, tilus.utils, tilus.lang, math) */
  V_HOST,    /* s: an opaque host object (torch, pandas.options, ...), by its
                path from its module; no effect at module level, an error in
                kernel code */
  V_UNSUP,   /* s: a part of Tilus tlsc does not have (layouts ...); its
                attributes are too, and any other use is an error */
  V_SUPER,   /* super(): cls = the class whose bases it searches, self */
  V_DICT,    /* items: n key, value pairs (2n items), i = capacity */
  V_ELLIPSIS,
  V_CLASS,   /* cls */
  V_INST,    /* inst */
  V_FUNC,    /* fn (an N_DEF), cls = the class that defines it */
  V_BOUND,   /* fn bound to self */
  V_BUILTIN, /* bi; self for bound primitives and tensor methods */
  V_NS,      /* bi = a namespace (attrs, blockIdx, mbarrier ...); self */
  V_EXPR,    /* x: a run-time scalar */
  V_TENSOR,  /* t */
  V_REF,     /* ref: a view of a shared tensor or one mbarrier */
  V_LAYOUT   /* layout: a register layout (resolve_dot_config().la ...) */
} VKind;

/* Builtin functions, primitives and namespaces (Value.bi). */
typedef enum Builtin {
  B_RANGE,
  B_LEN,
  B_MIN,
  B_MAX,
  B_CDIV,
  B_TUTIL, /* s: gcd, lcm, prod, idiv, floor_log2, is_power_of_two */
  B_MATH,  /* s: a function of math, on compile-time numbers */
  B_DICT,
  B_DICT_METHOD, /* s: items, keys, values, get, update, pop, setdefault;
                    self = the dict */
  B_SEQ_METHOD,  /* s: a method of a list, tuple or str (eval_methods.c);
                    self = the object */
  B_POW,         /* pow, chr, ord, hex, bin, oct, map, filter: eval_methods.c */
  B_CHR,
  B_ORD,
  B_HEX,
  B_BIN,
  B_OCT,
  B_MAP,
  B_FILTER,
  B_ISINSTANCE,
  B_SUM,
  B_ANY,
  B_ALL,
  B_ROUND,
  B_DIVMOD,
  B_REVERSED,
  B_SORTED,
  B_GETATTR,
  B_HASATTR,
  B_EXCEPTION, /* s: ValueError, RuntimeError ... (raise them) */
  B_INT,
  B_FLOAT,
  B_BOOL,
  B_ABS,
  B_SUPER,
  B_LIST,
  B_TUPLE,
  B_ENUMERATE,
  B_ZIP,
  B_STR,
  B_PRINT,
  B_AUTOTUNE,
  B_NOOP_INIT,
  B_LAYOUT_FN,    /* s: tilus.ir.layout.ops.NAME, or layout.NAME() with self */
  B_DTYPE_METHOD, /* s: is_float, is_integer ...; self = the dtype */
  /* primitives of tilus.Class / tilus.Script instances */
  P_RANGE,
  P_FAST_DIVMOD,
  P_GLOBAL_VIEW,
  P_SHARED_TENSOR,
  P_REGISTER_TENSOR,
  P_THREAD_GROUP,
  P_SINGLE_THREAD,
  P_CAST,
  P_STORE_GLOBAL,
  P_LOAD_GLOBAL,
  P_STORE_SHARED,
  P_LOAD_SHARED,
  P_STORE_GLOBAL_SCATTER,
  P_PRINT_TENSOR,
  P_ATOMIC, /* s: the member of self.atomic */
  P_STORE_SHARED_SCATTER,
  P_SYNC,
  P_PRINTF,
  P_MBAR_ALLOC,
  P_MBAR_WAIT,
  P_MBAR_ARRIVE,
  P_MBAR_EXPECT_TX,
  P_TMA_G2S,
  P_TMA_S2G,
  P_TMA_FENCE,
  P_TMA_COMMIT,
  P_TMA_WAIT,
  P_WGMMA_FENCE,
  P_WGMMA_MMA,
  P_WGMMA_COMMIT,
  P_WGMMA_WAIT,
  P_MBAR_EXPECT_TX_MULTICAST,
  P_MBAR_EXPECT_TX_REMOTE,
  P_CLUSTER_SYNC,
  P_SETMAXNREG,
  P_TRANSPOSE,
  P_SINGLE_WARP,
  P_WARP_GROUP,
  P_STATIC_ASSERT,
  P_ASSUME,
  P_FREE_SHARED,
  P_RESHAPE_SHARED,
  P_FENCE_PROXY_ASYNC,
  P_FENCE_PROXY_RELEASE,
  P_TOLIST,
  P_ITEM,     /* GlobalTensor[i, j].item() */
  P_ITEM_PTR, /* GlobalTensor[i, j].item_ptr() */
  P_REGOP,    /* s: a register-tensor operation (eval_regops.c) */
  P_RESOLVE_DOT_CONFIG,
  P_DEFAULT_REG_LAYOUT, /* self.cuda.default_register_layout */
  P_ANNOTATE_LAYOUT,
  P_MMA_DOT_CONFIG, /* self.cuda.mma_dot_config */
  P_SHARED_LAYOUT,  /* self.cuda.shared_layout */
  P_VIEW,
  P_TENSOR_TO,        /* self: the tensor of x.to(dtype) */
  P_TENSOR_SQUEEZE,   /* x.squeeze(dim) */
  P_TENSOR_UNSQUEEZE, /* x.unsqueeze(dim) */
  /* copy_async and its commit groups (eval_async.c) */
  P_COPY_ASYNC,
  P_COPY_ASYNC_COMMIT,
  P_COPY_ASYNC_WAIT,
  P_COPY_ASYNC_WAIT_ALL,
  P_GLOBAL_TENSOR,
  P_LOCK_SEMAPHORE,
  P_RELEASE_SEMAPHORE,
  /* namespaces (V_NS) */
  NS_ATTRS,
  NS_BLOCKIDX,
  NS_MBARRIER,
  NS_TMA,
  NS_WGMMA,
  NS_CLUSTER,          /* self.cluster */
  NS_CLUSTER_BLOCKIDX, /* self.cluster.blockIdx */
  NS_CLUSTER_DIM,      /* self.cluster.clusterDim */
  NS_FENCE,
  NS_GRIDDIM,
  NS_ATOMIC,      /* self.atomic */
  NS_CUDA,        /* self.cuda */
  NS_DOTCFG,      /* resolve_dot_config()'s result: items la, lb, lc */
  NS_UNSUPPORTED, /* s: a group of Tilus primitives tlsc lacks (tcgen05 ...) */
  NS_ATOMIC_MMAS, /* self.cuda.atomic_mma_configs */
  NS_ATOMIC_MMA,  /* one of them: i = its index (eval_layout.c) */
  /* context managers returned by thread_group() / single_thread() */
  CTX_THREAD_GROUP,
  CTX_SINGLE_THREAD
} Builtin;

typedef struct Value Value;
typedef struct ClassDef ClassDef;
typedef struct Instance Instance;
typedef struct Dict Dict;

/* The scopes around a nested function or lambda, innermost first: the
 * locals of the functions it was defined in (Python's closures). */
typedef struct Env {
  Dict *d;
  struct Env *up;
} Env;

/* One binding: a name in a scope or an attribute of an instance. A slot
 * whose var is set is a run-time variable: assignments emit S_ASSIGN. depth
 * is the run-time control-flow depth at which the slot was created. */
typedef struct Slot {
  const char *name;
  Value *val;
  IrVar *var;
  int depth;
} Slot;

struct Dict {
  Slot *items;
  int len, cap;
  /* Past EV_DICT_HASH_MIN names, a hash index over items (open addressing,
   * item index + 1, 0 = empty; index_cap a power of two): a script with
   * 300000 names must not take 300000^2 string compares. */
  int *index;
  int index_cap;
};

struct Value {
  VKind kind;
  int64_t i;
  double f;
  const char *s;
  Value **items;
  int n;
  DType dt;
  ClassDef *cls;
  Instance *inst;
  Node *fn;
  Value *self;
  Builtin bi;
  IrExpr *x;
  IrTensor *t;
  IrRef ref;
  IrRegLayout *layout;
  Env *env;   /* V_FUNC defined in a function (or a lambda): its closure */
  bool owned; /* x is a variable of a finished call: the first binding may
                 adopt it instead of copying it */
  /* a V_INT computed from an `int` kernel parameter that -D or
   * --specialize fixes: range() over it is a run-time loop (with constant
   * bounds), as in the entry that takes the parameter at run time and as
   * in Tilus, not thousands of unrolled copies */
  bool from_param;
};

typedef enum ClassKind { CK_USER, CK_SCRIPT_BASE, CK_CLASS_BASE } ClassKind;

typedef struct Autotune {
  int nnames;
  const char **names;
  int npoints;
  Value ***points; /* npoints rows of nnames compile-time values: numbers,
                      strings, dtypes, lists and tuples of them */
} Autotune;

struct ClassDef {
  ClassKind ck;
  const char *name;
  Node *node;
  ClassDef *base;
  Dict members; /* methods and class attributes */
  bool is_script;
  Autotune **tunes; /* outermost decorator first */
  int ntunes;
};

struct Instance {
  ClassDef *cls;
  Dict attrs;
};

/* Positional and keyword arguments of one call. */
typedef struct Args {
  Value **pos;
  Span *pos_span;
  int npos;
  const char **kw_name;
  Value **kw;
  Span *kw_span;
  int nkw;
} Args;

/* One inlined call: the call site (for notes) and its local scope. */
typedef struct Frame {
  struct Frame *up;
  Span call_site;
  bool has_site;
  Dict *locals;
  int rt_base; /* run-time depth at entry: deeper returns are run-time ones */
  Value *ret;
  bool returned;
  /* A `return` under a run-time branch sets ret_var, and the statements
   * after it run under `if not ret_var` (a guard, opened at the first
   * statement of each enclosing block: bit i of guards_due for the block
   * nest_base + i deep). entry/entry_len: where ret_var = False goes. */
  IrVar *ret_var;
  uint64_t guards_due;
  int nest_base, loops_base;
  IrBlock *entry;
  int entry_len;
  ClassDef *cls;                 /* a method: the class defining it (for super()) */
  Value *self;                   /* a method: its first argument */
  Env *env;                      /* the scopes around the function (a closure), or NULL */
  NodeList *globals, *nonlocals; /* its `global` and `nonlocal` names */
} Frame;

typedef enum Ctrl { C_NEXT, C_BREAK, C_CONTINUE, C_RETURN } Ctrl;

/* An open `with self.thread_group(...)`: its statement, the run-time depth
 * where it stands and its threads (absolute). */
typedef struct TgFrame {
  struct TgFrame *up;
  IrStmt *st;
  int rt_depth, begin, count;
} TgFrame;

/* An open run-time `for` or `if` (eval_stmt.c): the tensors made before
 * it (ids below first_tensor) are outside it. free_shared() of one of them
 * inside a loop is refused; inside an if, its bytes are given back when
 * the if ends (`deferred`): the other branch still holds the tensor. */
/* A compile-time name bound before a run-time loop or branch and assigned
 * inside it: its value on entry and the first assignment's place. */
typedef struct Restore {
  const char *name;
  Value *entry;
  Span at;
} Restore;

typedef struct RtFrame {
  struct RtFrame *up;
  bool loop;
  int first_tensor;
  IrTensor **deferred;
  int ndeferred;
  Restore *restores; /* checked at the end of a body (ev_rt_check_restored) */
  int nrestores;
} RtFrame;

/* What the evaluator knows of one tensor of the kernel being built, beside
 * the IR (eval_tensor.c): where a register tensor was made and filled, and
 * whether anything else used it yet (a WGMMA accumulator made at block
 * scope moves into the warp group that first uses it); the variables of a
 * register tensor used element by element (phases[stage]); whether a
 * shared tensor was freed. */
typedef struct TensorRec {
  IrBlock *blk; /* the block holding fill, NULL when the tensor has none */
  IrStmt *fill; /* its register_tensor(init=...) */
  int rt_depth; /* run-time depth where it was made */
  int tg_begin, tg_count;
  bool used;     /* a statement besides its fill reads or writes it */
  IrVar **elems; /* element by element: one variable per element */
  Span freed;    /* free_shared(): where (line 0: not freed) */
} TensorRec;

typedef struct Eval {
  Arena *ar;
  Diag *d;
  const Source *src;
  jmp_buf fail;
  Dict globals;
  Frame *frame;     /* NULL at module level */
  int depth;        /* frames on the stack */
  IrKernel *k;      /* kernel being built (NULL at module level) */
  IrBlock *cur;     /* where statements are appended */
  int rt_depth;     /* nesting of run-time for/if */
  int nest;         /* nesting of IR blocks (run-time for/if, with) */
  int rt_loops;     /* nesting of run-time for */
  int tg_begin;     /* current thread group, absolute thread ids */
  int tg_count;     /* 0 = the whole block (warps not known yet) */
  bool tg_explicit; /* inside a thread_group or single_thread */
  int loop_kind;    /* innermost loop: 0 none, 1 compile time, 2 run time */
  const char *hint; /* name for the next tensor or variable created */
  EvalDefine *defs;
  int ndefs;
  EvalOptions opt;
  long steps;         /* evaluation work done: nested loops cannot hang */
  long kernel_stmts;  /* statements emitted into the kernel being built */
  ClassDef **classes; /* user classes in definition order */
  int nclasses;
  int in_annotation;     /* evaluating an annotation: host types allowed */
  IrParam **void_params; /* the kernel's void_p parameters (eval.c) */
  int nvoid;
  TgFrame *groups;    /* the thread groups open here, innermost first */
  RtFrame *rt_frames; /* the run-time for/if open here, innermost first */
  IrKernel *recs_k;   /* the kernel recs describes; recs[t->id] */
  TensorRec **recs;
  int nrecs;
} Eval;

/* eval_value.c: values, dictionaries, conversions, errors */
_Noreturn void ev_error(Eval *E, Span sp, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Unwinds to eval_build after errors already reported. */
_Noreturn void ev_error_quiet(Eval *E);
Value *v_new(Eval *E, VKind k);
Value *v_int(Eval *E, int64_t i);
Value *v_bool(Eval *E, bool b);
Value *v_float(Eval *E, double f);
Value *v_str(Eval *E, const char *s);
Value *v_none(Eval *E);
Value *v_expr(Eval *E, IrExpr *x);
Value *v_tensor(Eval *E, IrTensor *t);
Value *v_seq(Eval *E, VKind k, int n);
Value *v_builtin(Eval *E, Builtin bi, Value *self);
const char *v_type_name(const Value *v);
Slot *ev_dict_find(Dict *dct, const char *name);
Slot *ev_dict_set(Eval *E, Dict *dct, const char *name, Value *v);
bool v_truthy(Eval *E, Value *v, Span sp);
bool v_is_number(const Value *v);     /* bool, int, float (compile time) */
bool v_is_scalar(const Value *v);     /* a number or a run-time scalar */
bool v_is_int_scalar(const Value *v); /* an int, a bool or one at run time */
/* Same compile-time value (==): lists and tuples item by item, charged to
 * the step budget; an error at sp past EV_MAX_VALUE_DEPTH levels (a
 * 300000-deep tuple, or a list that contains itself). */
bool v_same(Eval *E, const Value *a, const Value *b, Span sp);
int64_t v_to_int(Eval *E, Value *v, Span sp, const char *what);
IrExpr *v_to_expr(Eval *E, Value *v, Span sp);
IrExpr *ev_expr_convert(Eval *E, IrExpr *x, DType t);
/* Whether the compile-time integer v is a value of type t (no wrapping:
 * 2**32 is not an int32; bool takes any integer as its truth value). */
bool ev_int_fits(int64_t v, DType t);
/* A run-time scalar value; an expression tree past EV_MAX_EXPR_NODES nodes
 * is first computed into a fresh variable (an S_ASSIGN here), so that a
 * DAG like x = x + x repeated cannot make later walks exponential. */
Value *ev_rt_value(Eval *E, IrExpr *x, Span sp);
DType ev_promote(DType a, DType b);
bool ev_expr_uses_var(const IrExpr *x);
bool ev_expr_only_params(const IrExpr *x);
IrRef v_to_ref(Eval *E, Value *v, Span sp, const char *what);
IrTensor *v_to_tensor(Eval *E, Value *v, Span sp, MemSpace space, const char *what);
DType v_to_dtype(Eval *E, Value *v, Span sp, const char *what);
/* An error at sp for a Tilus dtype tlsc does not have (tfloat32, sub-byte
 * ...). */
void ev_check_dtype(Eval *E, const Value *v, Span sp);
/* An error at sp when t is a storage dtype (ir.h: 8- and 16-bit integers,
 * fp8) used for a scalar or for arithmetic; `what` names the use, "sum()
 * of" (the dtype's name follows). */
void ev_check_compute_dtype(Eval *E, DType t, Span sp, const char *what);
const char *ev_hint(Eval *E, const char *fallback);
/* Python's repr() and str() of a compile-time value (an error at sp for a
 * value that has none: tensors, run-time values). */
const char *ev_repr(Eval *E, const Value *v, Span sp);
const char *ev_str(Eval *E, const Value *v, Span sp);
const char *ev_float_repr(Eval *E, double f);
/* format(v, spec), Python's format mini-language, for compile-time values. */
const char *ev_format(Eval *E, const Value *v, const char *spec, Span sp);
/* fmt % arg, Python's printf-style formatting (arg: a tuple of the
 * arguments, a dict for %(name)s keys, or the one argument). */
const char *ev_percent_format(Eval *E, const char *fmt, Value *arg, Span sp);
/* chr(c): the UTF-8 text of code point c (an error at sp outside
 * 0 ... 0x10FFFF); whether s is exactly one character. */
const char *ev_chr(Eval *E, int64_t c, Span sp);
bool ev_one_char(const char *s);
/* The items seq[idx] selects (idx an N_SLICE, evaluated here; n items):
 * count of them, from start, stride apart (Python's slice.indices). */
void ev_slice_bounds(Eval *E, Node *idx, int64_t n, int64_t *start, int64_t *stride,
                     uint64_t *count);
/* xs[slice] = src for a compile-time list (in place: Python's list
 * assignment, which grows or shrinks the list for a step of 1). */
void ev_list_set_slice(Eval *E, Value *l, int64_t start, int64_t stride, uint64_t count, Value *src,
                       Span sp);

/* Counts one unit of compile-time work; an error past EV_MAX_STEPS. */
void ev_step(Eval *E, Span sp);
/* Counts `units` + 1 steps of work for building a sequence, so that a loop
 * that builds big lists or strings each time is bounded in time and memory
 * like any other: callers charge one unit per new value, per 8 copied
 * pointers, per 64 copied bytes (at most some 350 MB in all). */
void ev_charge(Eval *E, int64_t units, Span sp);

/* eval_expr.c: expressions */
Value *ev_eval_expr(Eval *E, Node *n);
Value *ev_eval_binop(Eval *E, int op, Value *a, Value *b, Span sp);
/* a + b of compile-time strings: an error past EV_MAX_STR_LEN, charged. */
const char *ev_str_concat(Eval *E, const char *a, const char *b, Span sp);
Value *ev_get_attr(Eval *E, Value *obj, const char *name, Span sp);
Value *ev_lookup_name(Eval *E, const char *name, Span sp);
Value *ev_iterate_list(Eval *E, Value *v, Span sp); /* compile-time items */
/* a < b and a == b between compile-time values, as Python compares them. */
bool ev_less(Eval *E, Value *a, Value *b, Span sp);
bool ev_equal(Eval *E, Value *a, Value *b, Span sp);
IrExpr *ev_scalar_as(Eval *E, Value *v, DType t, Span sp);
IrExpr *ev_to_bool_expr(Eval *E, Value *v, Span sp);

/* eval_call.c: calls, inlining, instances */
Value *ev_call_value(Eval *E, Value *fn, Args *a, Span sp);
Value *ev_call_user(Eval *E, Node *def, Value *self, Args *a, Span sp);
/* A function value made here (def or lambda): it sees the scopes around. */
Value *ev_func_here(Eval *E, Node *def, ClassDef *cls);
/* The scope a name is assigned in: the locals, or the globals / an outer
 * function's for a `global` / `nonlocal` name. */
Dict *ev_assign_scope(Eval *E, const char *name);
Value *ev_instantiate(Eval *E, ClassDef *c, Args *a, Span sp);
Value *ev_find_member(ClassDef *c, const char *name);
bool ev_bind_args(Eval *E, Args *a, Span sp, const char *fname, const char *const *names, int nreq,
                  Value **out);
/* Where the argument for names[i] (bound by ev_bind_args) was written; sp
 * when it was not given. */
Span ev_arg_span(const Args *a, const char *const *names, int i, Span sp);

/* Whether word is one of the space-separated words of list (" a b c "). */
bool ev_word_in(const char *list, const char *word);

/* eval_regops.c: self.exp(x), self.sum(x, dim=) ..., x.to(dtype) */
bool ev_is_regop(const char *name);
Value *ev_call_regop(Eval *E, const char *name, Args *a, Span sp);
Value *ev_tensor_to(Eval *E, Value *self, Args *a, Span sp);
Value *ev_index_init(Eval *E, Value *fn, int rank, Span sp);
Value *ev_resolve_dot_config(Eval *E, Args *a, Span sp);
Value *ev_annotate_layout(Eval *E, Args *a, Span sp);

/* eval_layout.c: layouts a script builds (tilus.ir.layout.ops), the mma
 * configs, self.view */
Value *ev_layout_module_attr(Eval *E, const char *path, const char *name);
Value *ev_call_layout_fn(Eval *E, Value *fn, Args *a, Span sp);
Value *ev_layout_product(Eval *E, Value *a, Value *b, Span sp);
Value *ev_layout_attr(Eval *E, Value *obj, const char *name, Span sp);
Value *ev_atomic_mma_attr(Eval *E, Value *obj, const char *name, Span sp);
Value *ev_mma_dot_config(Eval *E, Args *a, Span sp);
Value *ev_view(Eval *E, Args *a, Span sp);
/* Refuses a conversion into a sub-byte dtype (tlsc converts out of them
 * only; a view reinterprets bits). */
void ev_check_cast_to(Eval *E, DType from, DType to, Span sp);
/* dtype.nbits, .nbytes, .is_float() ... (a dtype's attributes) */
Value *ev_dtype_attr(Eval *E, Value *obj, const char *name, Span sp);
Value *ev_call_dtype_method(Eval *E, Value *fn, Args *a, Span sp);
/* a op b element by element, register tensors (broadcasting) or a tensor
 * and a scalar (either side). */
Value *ev_tensor_elemwise(Eval *E, IrOp op, Value *a, Value *b, Span sp);

/* eval_stmt.c: statements */
Ctrl ev_exec_block(Eval *E, NodeList *body);
Ctrl ev_exec_stmt(Eval *E, Node *s);
void ev_assign_to(Eval *E, Node *target, Value *v, Node *annotation, Span sp);
void ev_emit(Eval *E, IrStmt *s);
Dict *ev_cur_scope(Eval *E);
void ev_bind_slot(Eval *E, Slot *s, Value *v, DType ann, Span sp);

/* eval_builtin.c: Python's builtins, compile-time dicts */
Value *ev_call_builtin(Eval *E, Value *fn, Args *a, Span sp);
Value *v_dict(Eval *E);
/* d[key], or NULL when d has no such key; an error for a key that cannot
 * be one (a list, a run-time value). */
Value *ev_dict_get(Eval *E, Value *d, Value *key, Span sp);
void ev_dict_put(Eval *E, Value *d, Value *key, Value *val, Span sp);
Value *ev_dict_attr(Eval *E, Value *d, const char *name, Span sp);
/* fname() takes lo to hi positional arguments and no keywords. */
void ev_arg_count(Eval *E, Args *a, Span sp, const char *fname, int lo, int hi);
/* Sorts n items in place, stably, by key(item) (key NULL or None: the
 * items), as list.sort and sorted do. */
void ev_sort_items(Eval *E, Value **items, int n, Value *key, bool reverse, Span sp);

/* eval_methods.c: the methods of lists, tuples and strings */
Value *ev_seq_attr(Eval *E, Value *obj, const char *name, Span sp);
Value *ev_call_seq_method(Eval *E, Value *fn, Args *a, Span sp);
/* sep.join(seq): seq's strings (an error at item_sp for another item). */
Value *ev_str_join(Eval *E, Value *seq, const char *sep, Span item_sp, Span sp);
/* pow(), chr(), ord(), hex(), bin(), oct(), map(), filter() */
Value *ev_call_seq_builtin(Eval *E, Builtin bi, Args *a, Span sp);
/* cur op= rhs for compile-time values: a list extends (+=) or repeats (*=)
 * in place, as Python's list does, and is returned; the rest is cur op rhs. */
Value *ev_inplace_binop(Eval *E, int op, Value *cur, Value *rhs, Span sp);

/* eval_prims.c: the Tilus primitives */
Value *ev_call_prim(Eval *E, Value *fn, Args *a, Span sp);
Value *ev_ns_attr(Eval *E, Value *ns, const char *name, Span sp);
void ev_ns_set_attr(Eval *E, Value *ns, const char *name, Value *v, Span sp);
Value *ev_tensor_attr(Eval *E, Value *t, const char *name, Span sp);
Value *ev_tensor_transpose(Eval *E, Value *tv, Span sp);
Value *ev_tensor_index(Eval *E, Value *t, Value *idx, Span sp);
/* x[:, c0:c1] of a register tensor; idx is the subscript node. */
Value *ev_tensor_slice(Eval *E, Value *tv, Node *idx, Span sp);
Value *ev_tensor_binop(Eval *E, int op, Value *a, Value *b, Span sp);
/* a op b into dst (a register tensor), or into a new tensor when NULL. */
Value *ev_tensor_binop_to(Eval *E, int op, Value *a, Value *b, IrTensor *dst, Span sp);
Ctrl ev_exec_with(Eval *E, Node *s, Value *ctx);
/* The record of tensor t of the kernel being built (made on first use). */
TensorRec *ev_tensor_rec(Eval *E, const IrTensor *t);
/* A register tensor used by a statement (as a whole): an error for one used
 * element by element. */
void ev_reg_use(Eval *E, IrTensor *t, Span sp);
void ev_free_shared(Eval *E, IrTensor *t, Span sp);
/* Enters a run-time for or if (f on the caller's stack), and leaves it:
 * frees deferred to the end of an if take effect there. */
void ev_rt_enter(Eval *E, RtFrame *f, bool loop);
void ev_rt_leave(Eval *E, RtFrame *f);
/* A compile-time name bound before the innermost run-time construct takes
 * another compile-time value inside it: allowed (Python rebinds it) when
 * the body ends with the value it had on entry, which
 * ev_rt_check_restored checks; false when no construct is open. */
bool ev_rt_note_rebind(Eval *E, const char *name, Value *entry, Span sp);
void ev_rt_check_restored(Eval *E, RtFrame *f);
/* An error for a shared tensor used after free_shared(). */
void ev_check_not_freed(Eval *E, const IrTensor *t, Span sp);
/* t[idx] = v for a register tensor used element by element. */
void ev_tensor_elem_set(Eval *E, Value *tv, Value *idx, Value *v, Span sp);
Value *ev_tensor_tolist(Eval *E, Value *tv, Args *a, Span sp);
Value *ev_global_item(Eval *E, Value *ref, bool ptr, Args *a, Span sp);
Value *ev_tensor_squeeze(Eval *E, Value *self, bool unsqueeze, Args *a, Span sp);
Value *ev_default_register_layout(Eval *E, Args *a, Span sp);

/* eval_async.c: copy_async and its commit groups (fn: P_COPY_ASYNC ...) */
Value *ev_call_cp_async(Eval *E, Builtin fn, Args *a, Span sp);

/* eval.c: kernels */
bool ev_is_void_param(const Eval *E, const IrParam *p);

/* eval_tune.c: an autotune value's text ("[1,4]", "True": the metadata,
 * the IR, the notes) and its part of an entry name ("1x4"); whether -D
 * NAME=VALUE selects it; the value of a -D text that is a Python literal
 * ("(16, 16)", "1.5", "float16"), or NULL. */
const char *ev_tune_text(Eval *E, const Value *v);
const char *ev_tune_name(Eval *E, const Value *v);
bool ev_define_selects(Eval *E, const EvalDefine *d, const Value *v);
Value *ev_define_literal(Eval *E, const char *text);

/* eval_module.c: the module's top level (imports, classes, functions,
 * host code) */
void ev_exec_module(Eval *E, const Node *module);
void ev_exec_import(Eval *E, Node *s);
/* A def's value with its decorators applied (cls: the class defining it). */
Value *ev_def_value(Eval *E, Node *s, ClassDef *cls);
bool ev_class_has_tune(const ClassDef *c, const char *name);
/* mod.name for a module value (V_MODULE, V_HOST, V_UNSUP). */
Value *ev_module_attr(Eval *E, Value *mod, const char *name, Span sp);
Value *v_host(Eval *E, const char *path);
/* A host object (V_HOST) used at sp: its value at module level (host
 * code, no effect), an error naming its module inside kernel code. */
Value *ev_host_use(Eval *E, Value *v, Span sp);
/* Another host object derived from host: host.s + suffix ("(...)"). */
Value *ev_host_derived(Eval *E, Value *host, const char *suffix);
/* A part of Tilus tlsc does not support, used at sp: an error. */
_Noreturn void ev_unsupported(Eval *E, Value *v, Span sp);
Value *ev_call_math(Eval *E, Value *fn, Args *a, Span sp);
Value *ev_call_tutil(Eval *E, Value *fn, Args *a, Span sp);
/* An annotation's value; host types (Optional[...]) are allowed in it. */
Value *ev_eval_annotation(Eval *E, Node *ann);
Value *ev_dtype_named(Eval *E, const char *name);
bool ev_binop_code(int op, IrOp *out); /* eval_expr.c */
/* The run-time dtype an annotation asks for (int32, uint32, float32, bool
 * ...), or DT_VOID for a compile-time annotation (int, float, classes). */
DType ev_annotation_rt_type(const Value *ann);

#endif
