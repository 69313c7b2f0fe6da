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
  DT_FLOAT64,
  /* Storage types: loaded, stored, converted with .to() / cast; no
   * arithmetic (dtype_is_storage). 8-bit and 16-bit integers and the two
   * fp8 formats live in 32-bit registers (integers sign- or zero-extended,
   * fp8 bits in the low byte). */
  DT_INT8,
  DT_UINT8,
  DT_INT16,
  DT_UINT16,
  DT_FLOAT8_E4M3,
  DT_FLOAT8_E5M2,
  /* Tilus's sub-byte types (storage types too): signed and unsigned
   * integers of 1 to 7 bits, and floats of 3 to 7 bits with e exponent and
   * m mantissa bits (bias 2^(e-1) - 1, subnormals at exponent 0, no inf or
   * nan but e = 5's all-ones exponent). In global memory element i is bits
   * [i*n, i*n+n) of the packed bytes, low bits first; in a 32-bit register
   * one element, signed integers sign-extended, the others their bits
   * zero-extended. No shared memory or copy of them: `view` them as uint8. */
  DT_INT1B,
  DT_INT2B,
  DT_INT3B,
  DT_INT4B,
  DT_INT5B,
  DT_INT6B,
  DT_INT7B,
  DT_UINT1B,
  DT_UINT2B,
  DT_UINT3B,
  DT_UINT4B,
  DT_UINT5B,
  DT_UINT6B,
  DT_UINT7B,
  DT_F3E1M1,
  DT_F4E1M2,
  DT_F4E2M1,
  DT_F5E1M3,
  DT_F5E2M2,
  DT_F5E3M1,
  DT_F6E2M3,
  DT_F6E3M2,
  DT_F6E4M1,
  DT_F7E2M4,
  DT_F7E3M3,
  DT_F7E4M2,
  DT_F7E5M1
} DType;

int dtype_bytes(DType t);        /* 0 for void, 1 for bool and sub-byte types */
int dtype_bits(DType t);         /* 8 * bytes, or the sub-byte width */
bool dtype_is_subbyte(DType t);  /* int1b ... uint7b, float3_e1m1 ... */
int dtype_exp_bits(DType t);     /* a sub-byte float's exponent bits; 0 otherwise */
const char *dtype_name(DType t); /* "float16", "int32", ... */
bool dtype_is_float(DType t);
bool dtype_is_signed(DType t); /* int8/int16/int32/int64, int1b..int7b */
bool dtype_is_fp8(DType t);    /* float8_e4m3, float8_e5m2 */
/* Operand dtypes WGMMA takes: a float16 or bfloat16 pair (k16), or any two
 * fp8 types (k32; e4m3 and e5m2 may mix, as the ISA allows). */
bool dtype_wgmma_inputs_ok(DType a, DType b);
/* 8- and 16-bit integers and fp8: tlsc loads, stores and converts them but
 * does no arithmetic in them (Tilus computes in float32 and casts). */
bool dtype_is_storage(DType t);
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
  SR_NCTAID_X,
  SR_CLUSTER_CTARANK, /* self.cluster.blockRank: %cluster_ctarank (uint32) */
  SR_CLUSTER_CTAID_X, /* self.cluster.blockIdx: %cluster_ctaid */
  SR_CLUSTER_CTAID_Y,
  SR_CLUSTER_CTAID_Z,
  SR_NCTAID_Y, /* gridDim.y */
  SR_NCTAID_Z
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
  DType elem;       /* pointee dtype for pointers */
  bool workspace;   /* hidden: the pointer to a global_tensor() workspace,
                     which the runtime allocates (IrKernel.ws); after every
                     user parameter */
  int64_t multiple; /* an integer parameter assume()d a multiple of this
                       (checked at launch); 0 or 1: nothing known */
} IrParam;

typedef enum XKind {
  X_CONST,   /* ival for int/bool types, fval for float types */
  X_VAR,     /* var */
  X_PARAM,   /* param (scalar or pointer kernel parameter) */
  X_SPECIAL, /* sreg */
  X_UNARY,   /* op a */
  X_BINARY,  /* a op b */
  X_SELECT,  /* a ? b : c */
  X_CAST,    /* (type) a */
  X_INDEX,   /* int32: the element's index in dimension ival; only in the
                value of an S_FILL (register_tensor(init=lambda i, j: ..)) */
  X_LOAD,    /* one element of global memory at address a (u64), of dtype
                ival in memory, its value of type `type` (16-bit floats
                and fp8 widened to float32, 8- and 16-bit integers to
                int32): GlobalTensor[i, j].item(); only as the
                value of an S_ASSIGN, so that it is read once, in order */
  X_MATH     /* float32: fn ival (IrMathFn) of a, math.exp(x) of a run-time x */
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
  int nodes;      /* nodes of the tree (shared subtrees counted each time they
                occur), saturating at IR_EXPR_NODES_MAX: set by the
                constructors, so that a DAG's tree size is known in O(1) */
  bool has_index; /* an X_INDEX is in the tree (set by the constructors) */
};
#define IR_EXPR_NODES_MAX (1 << 30)

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
/* The greatest common divisor of |a| and |b| (0 with 0; gcd(INT64_MIN, 0)
 * is INT64_MIN, which callers that can meet it check). */
int64_t ir_gcd(int64_t a, int64_t b);
/* The instructions the runtime compiles x's printed metadata form to
 * (runtime/expr.c): one per integer, name and operator, two per && and ||,
 * a select's condition twice; past IR_META_MAX_CODE, any larger count. A
 * divisor, a requirement or a tensor-map extent the runtime evaluates must
 * stay within it. */
enum { IR_META_MAX_CODE = 64 };
int ir_meta_code_size(const IrExpr *x);
IrExpr *ir_load(Arena *ar, DType mem, IrExpr *addr); /* X_LOAD */
/* X_MATH of fn (an IrMathFn), a converted to float32; folded on a constant */
IrExpr *ir_math(Arena *ar, int fn, IrExpr *a);
IrExpr *ir_index(Arena *ar, int dim);
/* Whether e reads an element index (X_INDEX). */
bool ir_expr_has_index(const IrExpr *e);
bool ir_is_const(const IrExpr *e, int64_t *value);
/* Whether a and b are the same tree (same nodes, variables, parameters). */
bool ir_expr_same(const IrExpr *a, const IrExpr *b);
/* v as a register of integer type t holds it: bool 0/1, 32-bit types
 * wrapped to their range, 64-bit types as they are. */
int64_t ir_int_wrap(DType t, int64_t v);
/* Prints in the IR text form: `(m_size + 127) / 128`, `%v3`, `blockIdx.x`. */
void ir_print_expr(FILE *out, const IrExpr *e);

/* ------------------------------------------------------------ tensors */

typedef enum LayoutKind {
  LAYOUT_NONE,      /* not yet inferred */
  LAYOUT_ROW_MAJOR, /* global, and shared without swizzle */
  LAYOUT_SWIZZLED,  /* shared, TMA/WGMMA swizzle of swizzle_bytes */
  LAYOUT_SPATIAL,   /* register: spread over the owner threads as the
                       tensor's IrRegLayout (reg) says */
  LAYOUT_WGMMA_ACC  /* register: wgmma m64nNk16 accumulator fragments of one
                       128-thread warp group; rank 2 [M, N], M % 64 == 0,
                       fragment r covers rows [64r, 64r+64) */
} LayoutKind;

/* A register layout: how the elements of a register tensor of `shape` are
 * spread over the `nthreads` threads that own it, `nslots` registers each.
 *
 * Each dimension d is split into modes (digits), listed dimension by
 * dimension, outer to inner inside one: an index i_d is the mixed-radix
 * number of d's modes (mode m adds digit * ir_reglayout_mode_stride(m)).
 * Every mode is one digit of the thread id or one digit of the slot:
 *   thread id = mixed radix over `thread_*`, outer to inner; a digit whose
 *               mode is -1 replicates (the threads that differ only there
 *               hold the same elements);
 *   slot      = mixed radix over `local_mode`, outer to inner.
 * So element (tid, slot) sits at the sum of a part that depends on tid only
 * and a part that depends on the slot only, with no carries.
 *
 * Examples, with 32 threads:
 *   [8, 64] by ir_reglayout_default(vec 4): modes d0:2 d0:4 d1:8 d1:4 ...
 *   the m16n8k16 A operand of mma.sync [16, 16]: modes d0:2 d0:8 d1:2 d1:4
 *   d1:2, threads = [m1 m3] (lane / 4 = row % 8, lane % 4 = column pair),
 *   locals = [m2 m0 m4]. */
#define IR_MAX_MODES 16
/* The mma.sync operand a layout is (ir_reglayout_mma), if it is one. */
typedef enum IrMmaRole { MMA_NONE, MMA_A, MMA_B, MMA_C } IrMmaRole;
typedef struct IrRegLayout {
  int rank;
  int64_t shape[IR_MAX_RANK];
  int nmodes;
  int mode_dim[IR_MAX_MODES];
  int64_t mode_size[IR_MAX_MODES];
  int nthread;
  int thread_mode[IR_MAX_MODES]; /* a mode, or -1: replication */
  int64_t thread_size[IR_MAX_MODES];
  int nlocal;
  int local_mode[IR_MAX_MODES];
  int64_t nthreads, nslots; /* products of the thread and slot digits */
  /* made by ir_reglayout_mma (the backend loads such operands from shared
   * memory with ldmatrix); not part of the layout's identity */
  IrMmaRole mma;
  bool mma_transposed; /* the operand's layout with its dimensions swapped */
  int64_t mma_warps_m, mma_warps_n;
} IrRegLayout;

/* reglayout.c. The default layout: vec (a power of two) consecutive
 * elements of the last dimension per thread, then consecutive threads
 * along the innermost dimensions (coalesced rows), repeated over the
 * slots; threads beyond the elements replicate. */
IrRegLayout *ir_reglayout_default(Arena *ar, int rank, const int64_t *shape, int64_t nthreads,
                                  int64_t vec);
IrRegLayout *ir_reglayout_make(Arena *ar, int rank, const int64_t *shape, int nmodes,
                               const int *mode_dim, const int64_t *mode_size, int nthread,
                               const int *thread_mode, const int64_t *thread_size, int nlocal,
                               const int *local_mode);
int64_t ir_reglayout_mode_stride(const IrRegLayout *L, int m);
int64_t ir_reglayout_thread_stride(const IrRegLayout *L, int i); /* of thread digit i */
/* The coordinates of slot `slot` of thread tid. */
void ir_reglayout_coords(const IrRegLayout *L, int64_t tid, int64_t slot, int64_t *coords);
/* Whether thread tid holds the element at coords, and in which slot. */
bool ir_reglayout_slot_of(const IrRegLayout *L, int64_t tid, const int64_t *coords, int64_t *slot);
/* The layout that a tensor of `shape`, broadcast (numpy's rules) against a
 * tensor with layout full, must have for each thread to hold the elements
 * it needs: full's modes over the dimensions it lacks are dropped. */
IrRegLayout *ir_reglayout_broadcast(Arena *ar, const IrRegLayout *full, int rank,
                                    const int64_t *shape);
/* The layout of a rank-2 tensor transposed: element (i, j) of the result
 * where element (j, i) of L is, in the same thread and slot. */
IrRegLayout *ir_reglayout_transpose(Arena *ar, const IrRegLayout *L);
/* The layout of L's tensor reshaped to `shape` (the same number of
 * elements, row-major order kept), each element in the same thread and
 * slot: each mode of L must split at the boundaries of the new dimensions
 * (a dimension of size a*b into [a, b] where its modes split there, and
 * adjacent dimensions merged likewise). NULL when they do not. */
IrRegLayout *ir_reglayout_reshape(Arena *ar, const IrRegLayout *L, int rank, const int64_t *shape);
/* Whether a tensor of shape `a` can be seen with shape `b` by some layout
 * (ir_reglayout_reshape): the same size, and the products of the
 * dimensions inner to each boundary of either shape, sorted, each divide
 * the next ([6, 4] to [4, 6] cannot: 4 does not divide 6). */
bool ir_shapes_reshapable(int ra, const int64_t *a, int rb, const int64_t *b);
/* The layout of a reduction of src over dim: the dimension kept with size
 * 1 (keepdim), or removed. */
IrRegLayout *ir_reglayout_reduce(Arena *ar, const IrRegLayout *src, int dim, bool keepdim);
bool ir_reglayout_equal(const IrRegLayout *a, const IrRegLayout *b);
/* The operand layouts of mma.sync m16n8kK over warps_m x warps_n warps:
 * A [rows=M, cols=K], B [rows=K, cols=N], C [rows=M, cols=N] (reglayout.c
 * has the fragments). epr is the operands' elements per 32-bit register
 * (ir_mma_epr: 2 for m16n8k16 on 16-bit floats, 4 for m16n8k32 on 8-bit
 * integers; C ignores it). M % (16 warps_m), N % (8 warps_n) and
 * K % (8 epr) are 0. */
IrRegLayout *ir_reglayout_mma(Arena *ar, IrMmaRole role, int64_t rows, int64_t cols,
                              int64_t warps_m, int64_t warps_n, int epr);
/* The mma.sync operand types dot() multiplies: float16 and bfloat16 (into
 * float32, or float16 for float16), int8 and uint8 (into int32). */
bool ir_mma_operand_ok(DType operand, DType acc);
/* Elements of an mma.sync operand of that type per 32-bit register. */
int ir_mma_epr(DType operand);
/* How a reduction over dimension dim of a tensor with layout src crosses
 * threads: a butterfly over the lane bits lane_mask (shfl.bfly), then,
 * when the dimension spreads over warps, `parts` partial results per
 * element exchanged through shared memory. Partial k of a thread is the
 * mixed radix of the terms tid / part_div[i] % part_mod[i]; of the
 * threads with one (k, element) the writer is the one whose lane_mask bits
 * and replica digits (tid / zero_div[i] % zero_mod[i]) are all zero. */
typedef struct IrReducePlan {
  unsigned lane_mask;
  int64_t parts;
  int nparts_terms;
  int64_t part_div[IR_MAX_MODES], part_mod[IR_MAX_MODES];
  int nzero;
  int64_t zero_div[IR_MAX_MODES], zero_mod[IR_MAX_MODES];
} IrReducePlan;
void ir_reduce_plan(const IrRegLayout *src, int dim, IrReducePlan *p);
/* How a scan along dimension dim of a tensor of layout L runs: one level
 * per digit of the dimension, innermost first. A level combines the
 * running totals of the levels inside it across its digit: in a thread's
 * slots (SCAN_LOCAL), across lanes with shuffles (SCAN_LANE: power-of-two
 * digits inside a warp), or through the reduction scratch between two
 * barriers (SCAN_SHARED: the rest; a digit that spans lanes and warps is
 * split into a lane level and a shared one). stride is the digit's step in
 * the slot index (local) or in the owner thread index; coord what one step
 * adds to the coordinate along dim. Returns the number of levels. */
typedef enum IrScanKind { SCAN_LOCAL, SCAN_LANE, SCAN_SHARED } IrScanKind;
typedef struct IrScanLevel {
  IrScanKind kind;
  int64_t size, stride, coord;
} IrScanLevel;
#define IR_MAX_SCAN_LEVELS (2 * IR_MAX_MODES)
int ir_scan_plan(const IrRegLayout *L, int dim, IrScanLevel *levels);
void ir_reglayout_print(FILE *out, const IrRegLayout *L);
/* layout_ops.c: Tilus's layout algebra (tilus.ir.layout.ops) for the
 * layouts a script writes: spatial(*shape, ranks=) / local(...) (ranks
 * NULL: row-major), outer * inner, reduce over the dimensions whose bits
 * are set in `reduced`, concat. NULL past IR_MAX_RANK or IR_MAX_MODES. */
IrRegLayout *ir_rl_atom(Arena *ar, int rank, const int64_t *shape, const int *ranks, bool spatial);
IrRegLayout *ir_rl_compose(Arena *ar, const IrRegLayout *outer, const IrRegLayout *inner);
IrRegLayout *ir_rl_reduce(Arena *ar, const IrRegLayout *L, unsigned reduced, bool keepdims);
IrRegLayout *ir_rl_concat(Arena *ar, const IrRegLayout *a, const IrRegLayout *b);

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
  int own_swizzle;      /* a pass's tile (stage.c): the swizzle inference keeps */
  int fragment_swizzle; /* offered to a staging tile of mma.sync fragments
                           (layout.c, stage.c); taken by planning (smem.c)
                           where the tile's place already meets its atom */
  int64_t smem_offset;  /* byte offset in dynamic smem: set by planning */
  int64_t align;        /* bytes: set by planning */
  /* reshape_shared(): the tensor whose bytes this one is, the same
   * elements in the same row-major order under another shape (never
   * itself an alias). It takes no bytes of its own: layout inference
   * gives both one swizzle, planning both one offset, and a free of that
   * tensor ends both. NULL for a tensor with bytes of its own. */
  struct IrTensor *alias_of;
  /* Its lifetime, in the order tensors are created (their ids), which is
   * program order: from its creation to free_shared(), whose call is
   * freed_at (line 0: never freed). The tensors from id freed_before on
   * were created after the free, so planning may give them its bytes.
   * Set by the evaluator (a free inside a run-time if counts at the end of
   * the if); mbarriers are never freed. */
  Span freed_at;
  int freed_before;

  /* MS_REGISTER */
  int nthreads;  /* threads of the group that owns it */
  bool has_init; /* register_tensor(init=...) */
  double init;
  IrRegLayout *reg;  /* LAYOUT_SPATIAL: set by layout inference */
  IrRegLayout *want; /* annotate_layout(): the layout it must get */
  Span want_span;

  LayoutKind layout;
} IrTensor;

int64_t ir_tensor_numel(const IrTensor *t);
int64_t ir_tensor_nbytes(const IrTensor *t); /* numel * dtype bytes */
/* The elements each owning thread of register tensor t holds (a spatial
 * layout's slots, replicas included), and the 32-bit registers the
 * backend gives them: 16-bit ones two to a register, narrower ones one
 * each. */
int64_t ir_tensor_thread_elems(const IrTensor *t);
int64_t ir_tensor_thread_regs(const IrTensor *t);
/* The registers a thread may hold in all (sm_90). */
#define IR_MAX_THREAD_REGS 255

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
  S_ASSIGN,         /* assign: var = value */
  S_FOR,            /* loop: for var in range(start, stop, step): body */
  S_IF,             /* branch: if cond: body else orelse */
  S_THREAD_GROUP,   /* group: a subset of the enclosing group runs body */
  S_SINGLE_THREAD,  /* one thread of the enclosing group runs body */
  S_SYNC,           /* sync: a barrier over the threads running here */
  S_MBAR_WAIT,      /* mbar: wait for a phase of one mbarrier */
  S_MBAR_ARRIVE,    /* mbar: arrive on one mbarrier */
  S_MBAR_EXPECT_TX, /* mbar: arrive and expect transaction bytes */
  S_TMA_LOAD,       /* tma: global -> shared, completing on an mbarrier */
  S_TMA_STORE,      /* tma: shared -> global, in a bulk async-group */
  S_TMA_FENCE,      /* fence.proxy.async: IrFenceStmt */
  S_TMA_COMMIT,     /* cp.async.bulk.commit_group (no fields) */
  S_TMA_WAIT,       /* wait: cp.async.bulk.wait_group[.read] */
  S_CP_ASYNC,       /* cpasync: global -> shared by the group's threads */
  S_CP_COMMIT,      /* cp.async.commit_group (no fields) */
  S_CP_WAIT,        /* wait: cp.async.wait_group */
  S_CP_WAIT_ALL,    /* cp.async.wait_all (no fields) */
  S_WGMMA_FENCE,    /* wgmma.fence (no fields) */
  S_WGMMA_MMA,      /* wgmma: acc += a @ b */
  S_WGMMA_COMMIT,   /* wgmma.commit_group (no fields) */
  S_WGMMA_WAIT,     /* wait: wgmma.wait_group */
  S_FILL,           /* fill: every element of a register tensor = value */
  S_CAST,           /* cast: dst = (dst->dtype) src */
  S_ELEMWISE,       /* elemwise: dst = a op (b or scalar) */
  S_LOAD_GLOBAL,    /* gmem: reg = global[offsets...] */
  S_STORE_GLOBAL,   /* gmem: global[offsets...] = reg */
  S_LOAD_SHARED,    /* smem: reg = shared view */
  S_STORE_SHARED,   /* smem: shared view = reg */
  S_PRINTF,         /* print: printf(format, args...) */
  S_SLICE,          /* slice: dst = src[:, begin:end] */
  S_CLUSTER_SYNC,   /* barrier.cluster.arrive + wait (no fields) */
  S_MBAR_REMOTE,    /* cmbar: arrive (and expect tx) on one peer CTA's barrier */
  S_MBAR_MULTICAST, /* cmbar: arrive (and expect tx) on the CTAs of a mask */
  S_SETMAXNREG,     /* nreg: setmaxnreg.inc/dec.sync.aligned.u32 count */
  S_UNARY,          /* unary: dst = fn(src) element by element */
  S_REDUCE,         /* reduce: dst = reduction of src over one dimension */
  S_WHERE,          /* where: dst = cond ? a : b element by element */
  S_DOT,            /* dot: dst = a @ b + c with mma.sync */
  S_TRANSPOSE,      /* cast: dst = src transposed (rank 2; the same registers) */
  S_RESHAPE,        /* cast: dst = src with another shape of the same size,
                       row-major order kept (reshape, squeeze, unsqueeze;
                       the same registers: ir_reglayout_reshape) */
  S_CONVERT,        /* cast: dst = src, another register layout: through the
                       kernel's scratch in shared memory between barriers
                       (made by layout inference where the layouts a
                       statement needs differ) */
  S_SEM_WAIT,       /* sem: spin until the int32 at addr equals value */
  S_SEM_RELEASE,    /* sem: store value into the int32 at addr, releasing */
  S_VIEW            /* cast: dst = src's bits seen as another dtype and layout:
                       each thread's slots, in order, as one bit string
                       (slot 0 lowest), cut into dst's elements; both sides
                       of one thread count and as many bits per thread */
} SKind;

/* The fields of each statement kind, one struct each. IrStmt holds them in
 * an anonymous union: the word before the colon in each SKind's comment
 * above is the kind's member (s->tma for S_TMA_LOAD, s->mbar for
 * S_MBAR_WAIT, ...). Reading another kind's member is a bug: the union gives
 * it no meaning. */

/* S_ASSIGN: var = value, value of var's type. */
typedef struct IrAssignStmt {
  IrVar *var;
  IrExpr *value;
} IrAssignStmt;

/* S_FOR: for var in range(start, stop, step): body. stop is evaluated once
 * (Python's range); the backend needs step to be a non-zero constant. The
 * body is emitted `unroll` times per trip (0 or 1: once). */
typedef struct IrForStmt {
  IrVar *var;
  IrExpr *start, *stop, *step;
  int64_t unroll;
} IrForStmt;

/* S_IF: if cond (bool): body else orelse (either may be empty). */
typedef struct IrIfStmt {
  IrExpr *cond;
} IrIfStmt;

/* S_THREAD_GROUP: threads [begin, begin + count) of the enclosing group run
 * body; thread ids inside are relative to begin. */
typedef struct IrGroupStmt {
  int64_t begin, count;
} IrGroupStmt;

/* Named barriers the GPU has beside barrier 0 (the block's): bar.sync 1..15.
 * A kernel may sync() in at most this many distinct thread groups. */
#define IR_MAX_NAMED_BARRIERS 15
/* Statements of one kernel once its loops are unrolled (the emitter writes
 * each one): the evaluator stops at it, ir_check counts the unrolled total. */
#define IR_MAX_UNROLLED_STMTS (1 << 16)

/* S_SYNC: bar.sync over the threads running here. barrier_id is set by
 * ir_assign_barriers (barriers.c): 0 when they are the whole block (barrier
 * 0), else the named barrier of their thread group, 1 for the first
 * distinct group that syncs (in text order), 2 for the next...; over
 * IR_MAX_NAMED_BARRIERS for a group beyond the limit, which the checker
 * reports. The simulator and the backend only read it. */
typedef struct IrSyncStmt {
  int barrier_id;
} IrSyncStmt;

/* The memory semantics and scope of mbarrier.try_wait (the sem= and scope=
 * of mbarrier.wait). */
typedef enum MbarSem { MBAR_SEM_RELAXED, MBAR_SEM_ACQUIRE, MBAR_SEM_RELEASE } MbarSem;
typedef enum MbarScope { MBAR_SCOPE_CTA, MBAR_SCOPE_CLUSTER } MbarScope;
const char *mbar_sem_name(MbarSem s);     /* "relaxed", "acquire", "release"; "?" */
const char *mbar_scope_name(MbarScope s); /* "cta", "cluster"; "?" */

/* S_MBAR_WAIT, S_MBAR_ARRIVE, S_MBAR_EXPECT_TX on one mbarrier (a view
 * bars[i] of an mbarrier array). */
typedef struct IrMbarStmt {
  IrRef barrier;
  IrExpr *parity;   /* S_MBAR_WAIT: the phase parity waited for */
  MbarSem sem;      /* S_MBAR_WAIT */
  MbarScope scope;  /* S_MBAR_WAIT */
  IrExpr *tx_bytes; /* S_MBAR_EXPECT_TX: the transaction bytes expected */
} IrMbarStmt;

/* S_TMA_LOAD (global -> shared) and S_TMA_STORE (shared -> global): a box
 * of the shared view's shape at offsets of the global tensor. A load with a
 * multicast mask (Tilus's multicast_mask=) writes the box at the view's
 * offset in the shared memory of every CTA of the cluster whose rank's bit
 * is set, and completes on the barrier at the barrier's offset in each. */
typedef struct IrTmaStmt {
  IrTensor *global;
  IrRef shared;     /* not transposed; its shape is the box */
  IrRef barrier;    /* S_TMA_LOAD: the mbarrier it completes on */
  IrExpr **offsets; /* outermost first, one per global dimension */
  int noffsets;
  int tmap; /* index into kernel->tmaps (layout inference), or -1 */
  /* S_TMA_LOAD: the multicast mask, a uint32 of cluster ranks (PTX's
   * 16-bit ctaMask); NULL for a copy into this CTA alone */
  IrExpr *mcast;
} IrTmaStmt;

/* S_CP_ASYNC (Tilus's copy_async): the threads of the group copy the tile
 * of the global tensor at offsets into the shared view with cp.async,
 * zero-filling the elements outside the global shape when check_bounds.
 * View dimension i is global dimension dims[i] (increasing, the last one
 * the global tensor's last: rows are contiguous in both); the other global
 * dimensions stay at their offsets. Each thread's copies complete in its
 * commit groups: S_CP_COMMIT closes one, S_CP_WAIT waits until
 * at most max_pending are in flight, S_CP_WAIT_ALL commits and waits
 * for every one. A thread sees its own copies after the wait; the others
 * see them after a barrier with it. */
typedef struct IrCpAsyncStmt {
  IrTensor *global;
  IrRef shared;     /* not transposed */
  IrExpr **offsets; /* outermost first, one per global dimension */
  int noffsets;
  int dims[IR_MAX_RANK]; /* one per view dimension */
  bool check_bounds;
  bool evict_first; /* evict="evict_first": an L2 evict-first policy */
} IrCpAsyncStmt;

/* S_MBAR_REMOTE and S_MBAR_MULTICAST (Tilus's
 * mbarrier.arrive_and_expect_tx_remote / _multicast): an arrival, after
 * adding tx_bytes to the transaction count, on the barrier at the offset of
 * `barrier` in other CTAs of the cluster (mapa.shared::cluster, then
 * mbarrier.arrive[.expect_tx].SEM.SCOPE.shared::cluster). REMOTE: every
 * thread of the region arrives on the barrier of CTA rank `ctas`.
 * MULTICAST: thread i of the region (at least 16 threads) arrives on the
 * barrier of CTA rank i when bit i of the mask `ctas` is set: one arrival
 * per CTA of the mask. */
typedef struct IrClusterMbarStmt {
  IrRef barrier;
  IrExpr *tx_bytes; /* uint32 */
  IrExpr *ctas;     /* uint32: REMOTE the target rank, MULTICAST the mask */
  MbarSem sem;      /* MBAR_SEM_RELAXED or MBAR_SEM_RELEASE */
  MbarScope scope;
} IrClusterMbarStmt;

/* S_SETMAXNREG: setmaxnreg.inc/dec.sync.aligned.u32 count, run by a whole
 * warp group: the per-thread register limit of its warps becomes count (24
 * to 256, a multiple of 8). ptxas honours it only with a register count at
 * entry, which the backend's .maxntid and .minnctapersm 1 give. */
typedef struct IrSetmaxnregStmt {
  int64_t count;
  bool inc; /* .inc (raise), else .dec (release registers) */
} IrSetmaxnregStmt;

/* S_TMA_FENCE: the generic proxy's writes to shared memory ordered before
 * the async proxy's (a TMA store's) reads. Both directions
 * (fence.proxy.async.shared::cta, Tilus's fence.proxy_async), or with
 * release the generic-to-async direction only, the lighter
 * fence.proxy.async::generic.release (Tilus's proxy_async_release). */
typedef struct IrFenceStmt {
  bool release;
} IrFenceStmt;

/* S_TMA_WAIT, S_WGMMA_WAIT and S_CP_WAIT: wait_group N, until at most
 * N groups (bulk async-groups, wgmma groups of the warp group, cp.async
 * groups of the thread) are still pending. */
typedef struct IrWaitStmt {
  int64_t max_pending;
  /* S_TMA_WAIT: only until the groups' reads of shared memory are done
   * (Tilus's read=True, cp.async.bulk.wait_group.read); else until their
   * writes are done and visible to this thread (read=False, the default) */
  bool read;
} IrWaitStmt;

/* S_WGMMA_MMA: acc (register, WGMMA accumulator layout) += a @ b, b a
 * shared view (usually a transposed one). A is the shared view a, or, in
 * wgmma's register form, the register tensor ra (16-bit, in the WGMMA
 * fragment layout, a.t NULL); ir_wgmma_a_dim / ir_wgmma_a_dtype read
 * either. */
typedef struct IrWgmmaStmt {
  IrTensor *acc, *ra;
  IrRef a, b;
} IrWgmmaStmt;

int64_t ir_wgmma_a_dim(const IrWgmmaStmt *w, int i);
DType ir_wgmma_a_dtype(const IrWgmmaStmt *w);

/* S_FILL: every element of the register tensor dst = value. */
typedef struct IrFillStmt {
  IrTensor *dst;
  IrExpr *value;
} IrFillStmt;

/* S_CAST: dst = (dst->dtype) src, register tensors of one shape. */
typedef struct IrCastStmt {
  IrTensor *dst, *src;
  int barrier_id; /* S_CONVERT: set by ir_assign_barriers like S_SYNC's */
} IrCastStmt;

/* S_ELEMWISE: dst = a op b, or a op scalar when b is NULL (scalar op a
 * when scalar_first); register tensors of one dtype (a comparison's dst is
 * bool). a and b broadcast to dst's shape by numpy's rules (shapes aligned
 * on the right, a dimension of size 1 or missing repeats). */
typedef struct IrElemwiseStmt {
  IrTensor *dst, *a, *b;
  IrExpr *scalar;
  IrOp op;
  bool scalar_first;
} IrElemwiseStmt;

/* S_UNARY: dst = fn(src) element by element, one shape. */
typedef enum IrMathFn {
  FN_EXP,
  FN_EXP2,
  FN_LOG,
  FN_LOG2,
  FN_SQRT,
  FN_RSQRT,
  FN_ABS,
  FN_NEG,
  FN_SQUARE,
  FN_SIN,
  FN_COS,
  FN_TANH,
  FN_RECIP,
  FN_ROUND /* to the nearest integer, ties to even; integers unchanged */
} IrMathFn;
const char *ir_fn_name(IrMathFn fn); /* "exp", "rsqrt" ... */
typedef struct IrUnaryStmt {
  IrTensor *dst, *src;
  IrMathFn fn;
} IrUnaryStmt;

/* S_REDUCE: dst = op (OP_ADD, OP_MAX or OP_MIN) over dimension dim of src;
 * dst has src's shape with dim of size 1 (keepdim) or without dim.
 * Collective over the owner threads: when
 * the reduced dimension spreads over warps it exchanges partial results
 * through the kernel's reduction scratch in shared memory between two
 * barriers (barrier_id, set by ir_assign_barriers like S_SYNC's).
 *
 * With scan set it is a prefix scan instead (Tilus's scan, cumsum,
 * cumprod): dst has src's shape and layout, element i along dim the
 * combination of elements [0, i] (or [0, i) with exclusive, the op's
 * identity at 0); op is also OP_MUL, OP_AND, OP_OR or OP_XOR (the last
 * three for integers). keepdim is unused. It shares the reduction's
 * scratch and barriers (ir_scan_plan says when it exchanges). */
typedef struct IrReduceStmt {
  IrTensor *dst, *src;
  int dim;
  bool keepdim;
  bool scan, exclusive;
  IrOp op;
  int barrier_id;
} IrReduceStmt;

/* An atomic store (Tilus's self.atomic group): each element of the values
 * combines into its destination element with `op` (sub: an add of the
 * negated value) as one atom / red instruction with the PTX qualifiers
 * sem and scope; old (a register tensor of the values' shape and layout)
 * receives each destination's value before, compare the cas operands. */
typedef enum IrAtomicOp { ATOM_ADD, ATOM_SUB, ATOM_MIN, ATOM_MAX, ATOM_EXCH, ATOM_CAS } IrAtomicOp;
typedef struct IrAtomic {
  IrAtomicOp op;
  const char *sem, *scope; /* "relaxed" ... "acq_rel"; "cta" ... "sys" */
  IrTensor *old, *compare;
} IrAtomic;
/* Whether PTX has the atomic op on dt: add, sub, exch and cas on 32- and
 * 64-bit integers and float32/float64 (cas and exch: their bits), min and
 * max on the integers. */
bool ir_atomic_ok(IrAtomicOp op, DType dt);

/* S_LOAD_GLOBAL (reg = global[offsets...]) and S_STORE_GLOBAL
 * (global[offsets...] = reg): a register tile at offsets of a global
 * tensor of the same rank. */
typedef struct IrGlobalCopyStmt {
  IrTensor *global, *reg;
  IrExpr **offsets; /* outermost first, one per global dimension */
  int noffsets;
  /* Tilus's dims=: the global dimensions the tile's dimensions run along,
   * in order (ndims == reg->rank); the others stay at their offsets. 0
   * ndims: the tile's dimensions are the innermost global ones. */
  int ndims;
  int dims[IR_MAX_RANK];
  /* store_global_scatter (S_STORE_GLOBAL only): an integer register tensor
   * of reg's shape and layout; element k of reg goes to the global element
   * at k's coordinates with the one along scatter_dim replaced by
   * scatter[k] (skipped when that is outside the dimension). The tile
   * covers the other dimensions whole; offsets are 0. NULL otherwise. */
  IrTensor *scatter;
  int scatter_dim;
  IrAtomic *atomic; /* S_STORE_GLOBAL of self.atomic.global_*: NULL otherwise */
} IrGlobalCopyStmt;
/* The tile dimension over global dimension gdim, -1 for none. */
int ir_gcopy_tile_dim(const IrGlobalCopyStmt *c, int gdim);

/* S_LOAD_SHARED (reg = shared) and S_STORE_SHARED (shared = reg): a
 * register tile and a shared view of one shape. */
typedef struct IrSharedCopyStmt {
  IrRef shared;
  IrTensor *reg;
  IrTensor *scatter; /* store_shared_scatter (S_STORE_SHARED): as in
                        IrGlobalCopyStmt, along scatter_dim of the view */
  int scatter_dim;
  IrAtomic *atomic; /* S_STORE_SHARED of self.atomic.shared_* */
} IrSharedCopyStmt;

/* S_PRINTF: printf(format, args[0..nargs)).
 *
 * With reg or shared.t set it is print_tensor(format, tensor, fmt=elem):
 * the group's first thread prints format, a header and every element,
 * row by row in brackets, each with elem (a C conversion for one element;
 * NULL: the dtype's default). A register tensor first goes through the
 * reduction scratch; both run between two barriers (barrier_id). */
typedef struct IrPrintfStmt {
  char *format;
  IrExpr **args;
  int nargs;
  IrTensor *reg;
  IrRef shared;
  char *elem;
  int barrier_id;
} IrPrintfStmt;
/* Whether s is a print_tensor (an S_PRINTF of a tensor). */
bool ir_is_print_tensor(const IrStmt *s);

/* S_SLICE: dst = src[:, begin:end], the columns [begin, end) of a rank-2
 * register tensor with the WGMMA accumulator layout, begin and end
 * multiples of 8 (whole column octets of the fragment); dst gets the same
 * layout with N = end - begin. A copy of the registers that hold those
 * columns, which ptxas folds away (no data moves). */
typedef struct IrSliceStmt {
  IrTensor *dst, *src;
  int64_t begin, end;
} IrSliceStmt;

/* S_WHERE: dst = cond ? a : b (Tilus's self.where), each operand a
 * register tensor broadcasting to dst's shape or, for a and b, a scalar
 * (the tensor NULL, the expression set); cond is bool, a and b dst's
 * dtype. */
typedef struct IrWhereStmt {
  IrTensor *dst, *cond, *a, *b;
  IrExpr *sa, *sb;
} IrWhereStmt;

/* S_DOT: dst = a @ b + c (Tilus's self.dot), a [M, K] and b [K, N] of
 * float16 or bfloat16, c (NULL: zeros) and dst [M, N] of float32 (or
 * float16 with float16 operands), by mma.sync m16n8k16 over warps_m x
 * warps_n warps of the owner threads: layout inference gives the operands
 * the fragments of ir_reglayout_mma. */
typedef struct IrDotStmt {
  IrTensor *dst, *a, *b, *c;
  int64_t warps_m, warps_n;
} IrDotStmt;

/* S_SEM_WAIT and S_SEM_RELEASE: Tilus's lock_semaphore and
 * release_semaphore on a global int32 semaphore at addr (uint64), each
 * run by every thread that reaches it; the evaluator puts them in a
 * single-thread region (and the wait before a sync() of the group), as
 * Tilus does. WAIT reads with ld.acquire.gpu until the value equals
 * `value`; RELEASE writes `value` with st.release.gpu. */
typedef struct IrSemStmt {
  IrExpr *addr;  /* uint64: a global address (GlobalTensor[...].item_ptr()) */
  IrExpr *value; /* int32 */
} IrSemStmt;

struct IrStmt {
  SKind kind;
  Span span;      /* the user's line (for .loc and diagnostics) */
  IrBlock body;   /* S_FOR, S_IF (then), S_THREAD_GROUP, S_SINGLE_THREAD */
  IrBlock orelse; /* S_IF (else); empty for the other kinds */
  union {
    IrAssignStmt assign;     /* S_ASSIGN */
    IrForStmt loop;          /* S_FOR */
    IrIfStmt branch;         /* S_IF */
    IrGroupStmt group;       /* S_THREAD_GROUP */
    IrSyncStmt sync;         /* S_SYNC */
    IrMbarStmt mbar;         /* S_MBAR_WAIT, S_MBAR_ARRIVE, S_MBAR_EXPECT_TX */
    IrTmaStmt tma;           /* S_TMA_LOAD, S_TMA_STORE */
    IrWaitStmt wait;         /* S_TMA_WAIT, S_WGMMA_WAIT, S_CP_WAIT */
    IrFenceStmt fence;       /* S_TMA_FENCE */
    IrCpAsyncStmt cpasync;   /* S_CP_ASYNC */
    IrWgmmaStmt wgmma;       /* S_WGMMA_MMA */
    IrFillStmt fill;         /* S_FILL */
    IrCastStmt cast;         /* S_CAST */
    IrElemwiseStmt elemwise; /* S_ELEMWISE */
    IrGlobalCopyStmt gmem;   /* S_LOAD_GLOBAL, S_STORE_GLOBAL */
    IrSharedCopyStmt smem;   /* S_LOAD_SHARED, S_STORE_SHARED */
    IrPrintfStmt print;      /* S_PRINTF */
    IrSliceStmt slice;       /* S_SLICE */
    IrClusterMbarStmt cmbar; /* S_MBAR_REMOTE, S_MBAR_MULTICAST */
    IrSetmaxnregStmt nreg;   /* S_SETMAXNREG */
    IrUnaryStmt unary;       /* S_UNARY */
    IrReduceStmt reduce;     /* S_REDUCE */
    IrWhereStmt where;       /* S_WHERE */
    IrDotStmt dot;           /* S_DOT */
    IrSemStmt sem;           /* S_SEM_WAIT, S_SEM_RELEASE */
  };
};

/* Bytes of reduction scratch an S_REDUCE needs (0 without an exchange
 * across warps); known once layouts are inferred. */
int64_t ir_reduce_scratch_bytes(const IrStmt *s);

/* The register tensors statement s itself names (not those of its nested
 * blocks): t[0] the one it writes (NULL if none), then those it reads (NULL
 * for an absent optional operand); returns how many t holds, at most
 * IR_STMT_MAX_TENSORS. Global and shared views (IrRef) are not included. */
#define IR_STMT_MAX_TENSORS 4
int ir_stmt_tensors(const IrStmt *s, const IrTensor **t);
/* The global tensor statement s itself copies to or from (TMA copies,
 * cp.async, load_global, store_global), NULL for none; *stores says whether
 * s writes it. */
const IrTensor *ir_stmt_global(const IrStmt *s, bool *stores);
/* Whether s itself names register tensor t (ir_stmt_tensors). */
bool ir_stmt_names(const IrStmt *s, const IrTensor *t);
/* uses[id] += 1 for every operand of a statement of b (nested blocks
 * included) that names tensor id, read or written. */
void ir_count_tensor_uses(const IrBlock *b, int *uses);

/* A zeroed statement of that kind (tma.tmap = -1 for TMA copies). */
IrStmt *ir_stmt_new(Arena *ar, SKind kind, Span span);
void ir_block_push(Arena *ar, IrBlock *b, IrStmt *s);

/* -------------------------------------------------------------- kernel */

/* A launch-time requirement: a static_assert() whose condition reads `int`
 * kernel parameters. Tilus compiles one kernel per value of such a
 * parameter and checks the assertion then; tlsc's generic entry takes it
 * at run time, so the runtime checks the condition at each launch and
 * refuses arguments that break it (docs/format.md, `require`). */
typedef struct IrRequire {
  IrExpr *cond; /* bool, over constants and scalar integer parameters */
  char *text;   /* cond as ir_print_expr writes it: the key of duplicates */
  char *msg;    /* the assertion's message */
  Span span;    /* the static_assert() call */
} IrRequire;

/* A global-memory workspace (Tilus's self.global_tensor()): the runtime
 * allocates tensor's bytes for each launch (zeroed when clean), from the
 * dimensions of `tensor` (gshape: integer parameters and constants), and
 * passes the address as the hidden pointer parameter `param`, whose
 * global tensor `tensor` is. */
#define IR_MAX_WORKSPACES 8
typedef struct IrWorkspace {
  IrParam *param;
  IrTensor *tensor;
  bool clean; /* requires_clean=True: all zeros at the launch */
} IrWorkspace;

/* magic.c: a division by a launch-invariant value (built from kernel
 * parameters and constants only) reads hidden parameter `param`, which the
 * runtime fills in at each launch from `value` (the divisor over the
 * parameters, as the metadata says it): the multiplier m in its low 32
 * bits, the divisor d in its high 32 (docs/format.md, `divisor`). The
 * parameter is a 64-bit value marked is_ptr (elem uint64), so that what
 * binds user scalars (--verify's -p, --specialize) passes it by. */
typedef struct IrDivisor {
  IrParam *param;
  IrExpr *value;
} IrDivisor;
#define IR_MAX_DIVISORS 8

typedef struct IrKernel {
  char *name;   /* PTX entry name */
  char *script; /* the tilus.Script class name */
  int nconfig;  /* the autotune point: name = value */
  char **config_names;
  int64_t *config_values;
  /* NULL, or per entry NULL for an int (config_values) or the text of any
   * other value: "[1,4]", "True", "float16" (docs/format.md) */
  char **config_texts;
  IrParam **params;
  int nparams;
  IrExpr *grid[3]; /* attrs.blocks, over parameters only */
  int warps;       /* attrs.warps */
  /* attrs.cluster_blocks: CTAs per cluster in x, y, z (compile time; 0 or
   * 1 where not set) */
  int64_t cluster[3];
  IrTensor **tensors;
  int ntensors;
  IrVar **vars;
  int nvars;
  IrTmap **tmaps; /* filled by layout inference */
  int ntmaps;
  IrBlock body;
  int64_t smem_bytes; /* dynamic shared memory: set by planning */
  /* where S_REDUCE statements exchange partial results across warps, and
   * how many bytes the largest needs: set by planning */
  int64_t reduce_scratch_offset, reduce_scratch_bytes;
  IrRequire *reqs; /* launch-time requirements, in source order, distinct */
  int nreqs;
  IrWorkspace *ws; /* global_tensor() workspaces, in creation order: ws[i]
                      is hidden parameter params[nparams - nws + i] */
  int nws;
  /* magic.c: the launch-invariant divisors (their hidden parameters come
   * after the user's, before the workspaces'), and the division nodes
   * (X_BINARY / and % of int32) that divide by them: div_sites sorted by
   * address, div_site_of[i] the index in divs of site i */
  IrDivisor *divs;
  int ndivs;
  const IrExpr **div_sites;
  int *div_site_of;
  int ndiv_sites;
  Span span;
  /* the backend's second entry of a kernel that multiplies with mma.sync:
   * NULL, or the name of the entry whose code it is. The file holds its
   * metadata only (`occupancy NAME`); libtlsrt builds its code from that
   * entry's at load time, for more blocks per SM, and keeps it only where
   * ptxas fits it without spilling (ptx_emit, docs/format.md) */
  const char *occupancy_of;
  /* pressure.c: NULL, or why the kernel will likely spill though it fits
   * the sound bound: the register tensors live after one of its dots need
   * over IR_CROWDED_REGS registers per thread. The evaluator skips an
   * autotune point so marked when another point is not. */
  const char *crowded;
  Span crowded_span; /* the dot */
} IrKernel;

typedef struct IrModule {
  Arena *ar;
  const Source *src;
  IrKernel **kernels;
  int nkernels;
} IrModule;

IrVar *ir_new_var(Arena *ar, IrKernel *k, const char *name, DType t);
/* require.c: NULL when cond can be a launch-time requirement (integer
 * constants and non-pointer integer or bool parameters, casts between
 * them, - ! + - * / % comparisons && || min max and selects: what the
 * metadata's expressions say); else the first node that cannot. */
const IrExpr *ir_require_unsupported(const IrExpr *cond);
/* Adds `require cond` (a bool) to k unless k has the same condition
 * (by its printed text) already. */
void ir_add_require(Arena *ar, IrKernel *k, IrExpr *cond, const char *msg, Span span);
IrTensor *ir_new_tensor(Arena *ar, IrKernel *k, const char *name, MemSpace space, DType dt,
                        int rank, const int64_t *shape, Span span);

/* Passes, one per file. Each returns false after reporting errors. */
bool ir_check(IrModule *m, Diag *d); /* check.c */
/* pressure.c: register tensors held across a loop over IR_MAX_THREAD_REGS
 * (an error), and the kernels crowded after a dot (IrKernel.crowded). */
bool ir_check_pressure(IrModule *m, Diag *d);
/* The registers per thread that the register tensors live after a dot may
 * take before ptxas likely spills: 255 less 31 for what is not a register
 * tensor (addresses, indices, predicates, the operands' fragments as they
 * stream in). A heuristic, not a bound: it only ever skips an autotune
 * point that has a sibling below it. */
#define IR_CROWDED_REGS 224
bool ir_infer_layouts(IrModule *m, Diag *d); /* layout.c: swizzles, tmaps,
                                                register layouts */
bool ir_plan_smem(IrModule *m, Diag *d);     /* smem.c: offsets, limit */
/* layout.c: the swizzle of a staging tile's row size (32, 64 or 128
 * bytes), where its 8-row atoms tile it; 0 for none. */
int ir_staging_swizzle(const IrTensor *t);
/* smem.c: the bytes the shared tensors of k would take if planned now (a
 * query: offsets and alignments are left as they were). */
int64_t ir_smem_high(IrKernel *k);
/* smem.c: k's freed shared tensors in the order of their frees
 * (freed_before, then id), *n of them; free() the array. */
IrTensor **ir_freed_tensors(const IrKernel *k, int *n);
/* reginfer.c: the layouts of register tensors that are not WGMMA
 * fragments, called by ir_infer_layouts once those are known. */
bool ir_infer_reg_layouts(IrKernel *k, Arena *ar, Diag *d);
/* barriers.c: the barrier_id of every S_SYNC. It never fails and reads only
 * the nesting of thread groups, so it runs first: the checker reports a
 * group past IR_MAX_NAMED_BARRIERS at its first sync(). */
void ir_assign_barriers(IrModule *m);

/* rewrite.c: what the transforming passes share. ir_stmt_map_exprs
 * replaces each expression slot of s (not of its nested blocks) by
 * fn(ctx, slot); ir_stmt_clone copies s and its blocks (expressions are
 * shared: they are never changed in place); ir_expr_substitute rebuilds e
 * with each variable node x replaced by leaf(ctx, x) (x itself to keep
 * it), folding through the constructors; ir_expr_reads says whether e
 * reads v. Each costs the distinct nodes of e (a DAG), not its tree. */
typedef IrExpr *(*IrExprFn)(void *ctx, IrExpr *e);
void ir_stmt_map_exprs(IrStmt *s, IrExprFn fn, void *ctx);
IrStmt *ir_stmt_clone(Arena *ar, const IrStmt *s);
IrExpr *ir_expr_substitute(Arena *ar, IrExpr *e, IrExpr *(*leaf)(void *ctx, IrExpr *var),
                           void *ctx);
bool ir_expr_reads(const IrExpr *e, const IrVar *v);
/* Whether e has the same value on every trip of `loop` (a S_FOR): it
 * reads no memory, not the loop's variable, no variable its body assigns. */
bool ir_expr_loop_invariant(const IrExpr *e, const IrStmt *loop);
/* Sets read[id] for every variable e reads. */
void ir_expr_mark_vars(const IrExpr *e, bool *read);
/* Sets named[index] for every kernel parameter e names. */
void ir_expr_mark_params(const IrExpr *e, bool *named);

/* unroll.c: each run-time loop with an unroll factor U > 1 (and a constant
 * step) becomes a main loop of U copies of its body with one exit test per
 * trip, then a remainder of at most U - 1 copies, each under a test (nested:
 * a failed test skips the rest). The loops left have unroll 0 or 1, except
 * those it cannot rewrite (their variable read after the loop, a step that
 * is not a constant): the backend still emits those with a test per copy. */
void ir_unroll_loops(IrModule *m);
/* constprop.c: constant propagation over the structured body (a loop
 * variable that comes back to its entry value after the main loop's copies
 * is a constant in each copy; thread groups of disjoint threads do not see
 * each other's assignments), folding, and the removal of assignments to
 * variables nothing reads. */
void ir_propagate_constants(IrModule *m);

/* ranges.c: value ranges of integer expressions. */
typedef struct IrRange {
  int64_t lo, hi; /* every value v of the expression has lo <= v <= hi */
} IrRange;
#define IR_NUM_SPECIAL (SR_NCTAID_Z + 1)
typedef struct IrRanges {
  /* One range per variable (indexed by id) holding every value the
   * variable is assigned anywhere in the kernel (flow-insensitive,
   * optimistic); a reader may narrow a loop variable's range while it is
   * inside the loop's body (ir_loop_body_range). */
  IrRange *vars;
  /* by SpecialReg: what the launch gives (blockIdx below the grid's
   * attrs.blocks, threadIdx below the block's threads) */
  IrRange special[IR_NUM_SPECIAL];
} IrRanges;
IrRanges *ir_kernel_ranges(Arena *ar, const IrKernel *k);
/* The range of an integer expression over those ranges (NULL: nothing
 * known of variables or the launch); false for a non-integer or a uint64
 * that may pass 2^63. */
bool ir_expr_range(const IrExpr *e, const IrRanges *r, IrRange *out);
/* The values the variable of a range() loop (a S_FOR statement) holds
 * inside its body, over the ranges r; false when nothing better than its
 * kernel-wide range is known (the body assigns it, the step is not a
 * constant). */
bool ir_loop_body_range(const IrStmt *loop, const IrRanges *r, IrRange *out);
/* Narrows the loop variable's range in r to its body's (intersected with
 * what r holds) and returns the range it had, which the caller puts back
 * after the body. */
IrRange ir_enter_loop_body(const IrStmt *loop, IrRanges *r);
/* Whether b (or a block nested in it) assigns v, a loop's variable
 * included. */
bool ir_block_assigns(const IrBlock *b, const IrVar *v);
/* Whether b (or a block nested in it) holds a statement of this kind. */
bool ir_block_holds(const IrBlock *b, SKind kind);
/* unroll.c: whether a loop's body only moves tiles and multiplies them
 * with mma.sync (dots, and nothing that computes in registers besides:
 * the matmul K loops, not attention's), nested blocks included. */
bool ir_copy_multiply_loop(const IrStmt *loop);

/* induction.c: e (int32), read at statement `at` of loop's body (an
 * index into loop->body.items: the one that holds the use), as
 * (num / den) * var + rest + k, var the loop's variable, rest
 * loop-invariant (NULL: 0), num/den in lowest terms with (num / den) * var
 * an integer for every value var takes. False when e is not of that form
 * (or it cannot be shown: a division over parts not known non-negative, a
 * variable whose value there is not known). */
typedef struct IrAffine {
  int64_t num, den;
  IrExpr *rest;
  int64_t k;
} IrAffine;
bool ir_loop_affine(Arena *ar, const IrStmt *loop, int at, const IrExpr *e, const IrRanges *ranges,
                    const int64_t *multiples, IrAffine *out);

/* multiples.c: what integer expressions are always multiples of (0: the
 * value is always 0). One number per variable (indexed by id): the gcd of
 * all its assignments (flow-insensitive). */
int64_t *ir_var_multiples(Arena *ar, const IrKernel *k);
/* A number the integer expression e is always a multiple of, over those
 * variable multiples (NULL: nothing known of variables); 1 when nothing is
 * known. */
int64_t ir_expr_multiple(const IrExpr *e, const int64_t *vars);

/* magic.c: for each kernel, the int32 divisions and remainders whose
 * divisor is launch-invariant (not a constant; every variable it reads is
 * assigned only that same value, over parameters and constants, in a form
 * the metadata's expressions can say) get a hidden parameter per distinct
 * divisor (IrKernel.divs), at most IR_MAX_DIVISORS; the IR's statements
 * are unchanged (the simulator still divides). Runs last, once. */
void ir_plan_divisors(IrModule *m);
/* The divisor a division node x divides by through its hidden parameter
 * (ir_plan_divisors), or NULL: a plain division. */
const IrDivisor *ir_divisor_of(const IrKernel *k, const IrExpr *x);

/* Runs barrier assignment, verify, layouts, verify, smem planning,
 * verify, then loop unrolling and constant propagation, verify. */
bool ir_run_passes(IrModule *m, Diag *d);

/* Stable text form (`tlsc --emit=ir`). */
void ir_print(FILE *out, const IrModule *m);

#define TLS_SMEM_LIMIT (227 * 1024) /* max dynamic smem per block, sm_90 */
/* CTAs of a cluster the hardware runs without the non-portable opt-in. */
#define IR_MAX_CLUSTER_CTAS 8
/* CTAs in a cluster of kernel k (1 without attrs.cluster_blocks). */
int64_t ir_cluster_size(const IrKernel *k);
/* 32-bit registers of the sm_90 register file, per SM (setmaxnreg's budget). */
#define IR_REGISTER_FILE 65536
/* Entries in one PTX file: what libtlsrt loads (runtime/meta.c,
 * MAX_KERNELS). Kernels (autotune points, specialised siblings) are
 * checked against it in ir_check, and the entries they become (with their
 * occupancy variants) in ptx_emit. */
#define TLS_MAX_ENTRIES 2048

#endif
