/* ir.h: the tile IR, its printer, the structural checks and the passes over
 * it. Everything the later layers (the simulator, the PTX backend) may use
 * is declared here. The evaluator that builds the IR from the AST is in
 * eval/eval.h; this header knows nothing of the AST.
 *
 * A module holds one kernel instance per autotune point. A kernel is:
 * parameters + launch attributes + a structured body of statements over
 * scalar expressions (trees) and tensors. Run-time scalars that change are
 * mutable IR variables (PTX registers); there is no SSA.
 *
 * Integer semantics of run-time arithmetic are C's (as in Tilus, which emits
 * C++): OP_DIV truncates, OP_MOD takes the dividend's sign.
 */
#ifndef TLSC_IR_H
#define TLSC_IR_H

#include "base/base.h"

#define IR_MAX_RANK 4

typedef enum DType {
  DT_VOID,
  DT_BOOL,
  DT_INT32,
  DT_UINT32,
  DT_INT64,
  DT_UINT64,
  DT_FLOAT16,
  DT_BFLOAT16,
  DT_FLOAT32,
  DT_FLOAT64
} DType;

int dtype_bytes(DType t);        /* 0 for void, 1 for bool */
const char *dtype_name(DType t); /* "float16", "int32", ... */
bool dtype_is_float(DType t);
bool dtype_is_signed(DType t); /* int32/int64 */
/* Looks up a Tilus dtype name ("float16", "int32", "uint32", "bool", ...). */
bool dtype_from_name(const char *name, DType *out);

typedef enum MemSpace { MS_GLOBAL, MS_SHARED, MS_REGISTER } MemSpace;

typedef enum IrOp {
  OP_ADD,
  OP_SUB,
  OP_MUL,
  OP_DIV,
  OP_MOD,
  OP_AND,
  OP_OR,
  OP_XOR,
  OP_SHL,
  OP_SHR, /* bitwise */
  OP_EQ,
  OP_NE,
  OP_LT,
  OP_LE,
  OP_GT,
  OP_GE, /* result DT_BOOL */
  OP_LAND,
  OP_LOR, /* bool x bool -> bool */
  OP_MIN,
  OP_MAX,
  OP_NEG,
  OP_BNOT,
  OP_LNOT /* unary */
} IrOp;
const char *ir_op_name(IrOp op); /* "+", "/", "min", "!" ... */

/* ------------------------------------------------------------ scalars */

typedef enum SpecialReg {
  SR_CTAID_X,
  SR_CTAID_Y,
  SR_CTAID_Z, /* blockIdx */
  SR_TID_X,   /* threadIdx.x within the block */
  SR_NCTAID_X
} SpecialReg;

typedef struct IrVar {
  int id;
  char *name; /* user name (for printing and PTX comments) */
  DType type;
} IrVar;

typedef struct IrParam {
  int index;
  char *name;
  DType type; /* DT_UINT64 for pointers */
  bool is_ptr;
  DType elem; /* pointee dtype for pointers */
} IrParam;

typedef enum XKind {
  X_CONST,   /* ival for int/bool types, fval for float types */
  X_VAR,     /* var */
  X_PARAM,   /* param (scalar or pointer kernel parameter) */
  X_SPECIAL, /* sreg */
  X_UNARY,   /* op a */
  X_BINARY,  /* a op b */
  X_SELECT,  /* a ? b : c */
  X_CAST     /* (type) a */
} XKind;

typedef struct IrExpr IrExpr;
struct IrExpr {
  XKind kind;
  DType type;
  IrOp op;
  int64_t ival;
  double fval;
  IrVar *var;
  IrParam *param;
  SpecialReg sreg;
  IrExpr *a, *b, *c;
};

/* Constructors (arena-allocated, never fail). Binary constructors fold
 * constants and apply x+0, x*1, x*0 identities. */
IrExpr *ir_const(Arena *ar, DType t, int64_t v);
IrExpr *ir_const_f(Arena *ar, DType t, double v);
IrExpr *ir_var_ref(Arena *ar, IrVar *v);
IrExpr *ir_param_ref(Arena *ar, IrParam *p);
IrExpr *ir_special(Arena *ar, SpecialReg r);
IrExpr *ir_unary(Arena *ar, IrOp op, IrExpr *a);
IrExpr *ir_binary(Arena *ar, IrOp op, IrExpr *a, IrExpr *b);
IrExpr *ir_select(Arena *ar, IrExpr *cond, IrExpr *a, IrExpr *b);
IrExpr *ir_cast(Arena *ar, DType t, IrExpr *a);
bool ir_is_const(const IrExpr *e, int64_t *value);
/* Prints in the IR text form: `(m_size + 127) / 128`, `%v3`, `blockIdx.x`. */
void ir_print_expr(FILE *out, const IrExpr *e);

/* ------------------------------------------------------------ tensors */

typedef enum LayoutKind {
  LAYOUT_NONE,      /* not yet inferred */
  LAYOUT_ROW_MAJOR, /* global, and shared without swizzle */
  LAYOUT_SWIZZLED,  /* shared, TMA/WGMMA swizzle of swizzle_bytes */
  LAYOUT_SPATIAL,   /* register: flat row-major element i lives in thread
                       i % nthreads, slot i / nthreads */
  LAYOUT_WGMMA_ACC  /* register: wgmma m64nNk16 accumulator fragments of one
                       128-thread warp group; rank 2 [M, N], M % 64 == 0,
                       fragment r covers rows [64r, 64r+64) */
} LayoutKind;

typedef struct IrTensor {
  int id;
  char *name;
  Span span; /* where it was created */
  MemSpace space;
  DType dtype; /* DT_UINT64 for mbarrier arrays */
  int rank;
  int64_t shape[IR_MAX_RANK];

  /* MS_GLOBAL (global_view): base pointer and run-time shape, row-major */
  IrExpr *gptr;
  IrExpr *gshape[IR_MAX_RANK];

  /* MS_SHARED */
  bool is_mbarrier;     /* from mbarrier.alloc: rank 1, 8 bytes each */
  int64_t *mbar_counts; /* arrival count of each barrier */
  int swizzle_bytes;    /* 0, 32, 64, 128: set by layout inference */
  int64_t smem_offset;  /* byte offset in dynamic smem: set by planning */
  int64_t align;        /* bytes: set by planning */

  /* MS_REGISTER */
  int nthreads;  /* threads of the group that owns it */
  bool has_init; /* register_tensor(init=...) */
  double init;

  LayoutKind layout;
} IrTensor;

int64_t ir_tensor_numel(const IrTensor *t);
int64_t ir_tensor_nbytes(const IrTensor *t); /* numel * dtype bytes */

/* A view of a tensor: the first nidx dimensions fixed by run-time indices
 * (sa[stage, 0] -> nidx = 2), the rest is the view's shape. transposed swaps
 * the last two dimensions of the view (sb[stage].transpose()). */
typedef struct IrRef {
  IrTensor *t;
  int nidx;
  IrExpr *idx[IR_MAX_RANK];
  bool transposed;
} IrRef;

/* Byte offset of a view inside its tensor (row-major over the full shape). */
IrExpr *ir_ref_byte_offset(Arena *ar, const IrRef *r);
int ir_ref_rank(const IrRef *r);
int64_t ir_ref_dim(const IrRef *r, int i); /* view dims, transpose applied */
int64_t ir_ref_nbytes(const IrRef *r);

/* A TMA tensor map: built on the host by the runtime from the metadata. */
typedef struct IrTmap {
  int index;
  IrTensor *global;         /* the global view it describes */
  int64_t box[IR_MAX_RANK]; /* box, outermost dimension first */
  int swizzle_bytes;        /* 0, 32, 64 or 128 */
} IrTmap;

/* ---------------------------------------------------------- statements */

typedef struct IrStmt IrStmt;
typedef struct IrBlock {
  IrStmt **items;
  int len, cap;
} IrBlock;

typedef enum SKind {
  S_ASSIGN,         /* var = e[0] */
  S_FOR,            /* for var in range(e[0], e[1], e[2]) unroll n: body */
  S_IF,             /* if e[0]: body else orelse */
  S_THREAD_GROUP,   /* threads [n, n + n2) of the enclosing group: body;
                       thread ids inside are relative to n */
  S_SINGLE_THREAD,  /* one thread of the enclosing group: body */
  S_SYNC,           /* barrier over all threads of the block */
  S_MBAR_WAIT,      /* wait on barrier ref[0] for phase parity e[0];
                       str = "relaxed"/"acquire", str2 = "cta"/"cluster" */
  S_MBAR_ARRIVE,    /* arrive on ref[0] */
  S_MBAR_EXPECT_TX, /* arrive on ref[0] and expect e[0] transaction bytes */
  S_TMA_LOAD,       /* t[0] (global) -> ref[0] (shared) at offsets (outermost
                       first), completing on barrier ref[1]; tmap = index */
  S_TMA_STORE,      /* ref[0] (shared) -> t[0] (global) at offsets; tmap */
  S_TMA_FENCE,      /* fence.proxy.async.shared::cta */
  S_TMA_COMMIT,     /* cp.async.bulk.commit_group */
  S_TMA_WAIT,       /* cp.async.bulk.wait_group.read n */
  S_WGMMA_FENCE,
  S_WGMMA_MMA, /* t[0] (register acc) += ref[0] (shared A) @ ref[1]
                       (shared B, usually transposed view) */
  S_WGMMA_COMMIT,
  S_WGMMA_WAIT,   /* wait_group n */
  S_FILL,         /* every element of t[0] = e[0] */
  S_CAST,         /* t[0] = (t[0]->dtype) t[1] */
  S_ELEMWISE,     /* t[0] = t[1] op (t[2] or scalar e[0]); op */
  S_LOAD_GLOBAL,  /* t[0] (register) = t[1] (global)[offsets...] */
  S_STORE_GLOBAL, /* t[0] (global)[offsets...] = t[1] (register) */
  S_LOAD_SHARED,  /* t[0] (register) = ref[0] (shared) */
  S_STORE_SHARED, /* ref[0] (shared) = t[1] (register) */
  S_PRINTF,       /* printf(str, e[0..nargs)) */
  S_SLICE         /* t[0] = t[1][:, n:n2]: columns [n, n2) of a rank-2
                       register tensor with the WGMMA accumulator layout,
                       n and n2 multiples of 8 (whole column octets of the
                       fragment); t[0] gets the same layout with N = n2 - n.
                       A copy of the registers that hold those columns,
                       which ptxas folds away (no data moves) */
} SKind;

struct IrStmt {
  SKind kind;
  Span span; /* the user's line (for .loc and diagnostics) */
  IrVar *var;
  IrExpr *e[4];
  int64_t n, n2;
  IrBlock body, orelse;
  IrRef ref[2];
  IrTensor *t[3];
  IrExpr **offsets; /* outermost first, one per global dimension */
  int noffsets;
  IrOp op;
  char *str, *str2;
  int tmap;      /* index into kernel->tmaps, or -1 */
  IrExpr **args; /* S_PRINTF */
  int nargs;
};

IrStmt *ir_stmt_new(Arena *ar, SKind kind, Span span);
void ir_block_push(Arena *ar, IrBlock *b, IrStmt *s);

/* -------------------------------------------------------------- kernel */

typedef struct IrKernel {
  char *name;   /* PTX entry name */
  char *script; /* the tilus.Script class name */
  int nconfig;  /* the autotune point: name = value */
  char **config_names;
  int64_t *config_values;
  IrParam **params;
  int nparams;
  IrExpr *grid[3]; /* attrs.blocks, over parameters only */
  int warps;       /* attrs.warps */
  IrTensor **tensors;
  int ntensors;
  IrVar **vars;
  int nvars;
  IrTmap **tmaps; /* filled by layout inference */
  int ntmaps;
  IrBlock body;
  int64_t smem_bytes; /* dynamic shared memory: set by planning */
  Span span;
} IrKernel;

typedef struct IrModule {
  Arena *ar;
  const Source *src;
  IrKernel **kernels;
  int nkernels;
} IrModule;

IrVar *ir_new_var(Arena *ar, IrKernel *k, const char *name, DType t);
IrTensor *ir_new_tensor(Arena *ar, IrKernel *k, const char *name, MemSpace space, DType dt,
                        int rank, const int64_t *shape, Span span);

/* Passes, one per file. Each returns false after reporting errors. */
bool ir_check(IrModule *m, Diag *d);         /* check.c */
bool ir_infer_layouts(IrModule *m, Diag *d); /* layout.c: swizzles, tmaps,
                                                register layouts */
bool ir_plan_smem(IrModule *m, Diag *d);     /* smem.c: offsets, limit */

/* Runs verify, layouts, verify, smem planning, verify. */
bool ir_run_passes(IrModule *m, Diag *d);

/* Stable text form (`tlsc --emit=ir`). */
void ir_print(FILE *out, const IrModule *m);

#define TLS_SMEM_LIMIT (227 * 1024) /* max dynamic smem per block, sm_90 */

#endif
