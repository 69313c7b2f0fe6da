/* emit_int.h: what the files of the PTX backend share (not part of the
 * interface: ptx.h is).
 *
 * One Emitter per kernel. The body is printed into a memory buffer first,
 * because the `.reg` declarations it needs are only known at its end; the
 * whole module is also buffered, so that an error leaves no partial file.
 *
 * Registers: every expression result gets a fresh virtual register of its
 * class (ptxas allocates the real ones). IR variables are named registers
 * %v<id>; register tensors are named register arrays %t<id>_<slot>, so the
 * WGMMA accumulators stay in the same registers across loops.
 */
#ifndef TLSC_PTX_EMIT_INT_H
#define TLSC_PTX_EMIT_INT_H

#include "backend_ptx/ptx.h"

/* Register classes, one `.reg` array each. */
typedef enum RegClass { RC_PRED, RC_B16, RC_B32, RC_B64, RC_F32, RC_F64, RC_COUNT } RegClass;

/* An operand: a register name or an immediate, of a dtype. */
typedef struct Val {
  char s[48];
  DType type;
} Val;

/* The thread group the code being emitted runs in: absolute first thread
 * and size. single is set inside single_thread (one thread runs the code). */
typedef struct Group {
  int64_t begin, size;
  bool single;
} Group;

/* emit_stream.c: a dot whose operand op (0: a, 1: b) ldmatrix reads
 * from shared memory k step by k step, in place of load[op] (and of
 * transpose[op], which only renames its registers); NULL where the
 * operand is emitted as the script says. */
typedef struct StreamedDot {
  const IrStmt *dot, *load[2], *transpose[2];
} StreamedDot;

/* Addresses strength-reduced in the loop being emitted (emit_for): each
 * a u64 register set before the loop (pre) and advanced by `stride`
 * bytes per trip; key says what it addresses (emit_cpasync.c). */
typedef struct LoopIv {
  const char *key;
  Val reg;
  int64_t stride;
} LoopIv;
typedef struct LoopIvs {
  const IrStmt *loop;
  int at;    /* the index in the loop's body of the statement being emitted */
  FILE *pre; /* the code before the loop */
  LoopIv *iv;
  int n, cap;
} LoopIvs;

typedef struct Emitter {
  FILE *out; /* the kernel body buffer */
  const IrModule *m;
  const IrKernel *k;
  Diag *d;
  bool line_info;
  bool failed;
  int nregs[RC_COUNT];
  int nlabels;
  int last_line, last_col; /* last .loc printed */
  Span span;               /* the statement being emitted (for errors) */
  Group group;
  int group_exit;           /* where the thread group about to be emitted jumps when
                             * done (past its disjoint siblings), or -1 */
  IrRanges *ranges;         /* of the variables and the launch (ir_kernel_ranges); emit_for
                             * narrows a loop variable inside its body */
  const IrStmt *loop;       /* the innermost run-time loop whose body is being emitted */
  LoopIvs *ivs;             /* its strength-reduced addresses; NULL: none may be made */
  const int64_t *multiples; /* of the kernel's variables (ir_var_multiples) */
  /* The body is emitted twice when vector accesses of spread register
   * tensors rest on run-time alignment (emit_spread_alignment): 1 while
   * emitting the copy that runs when everything is aligned, 2 the other;
   * 0 when the body is emitted once. */
  int aligned_copy;
  /* while emitting one element of register_tensor(init=lambda i, j: ...):
   * the registers of its indices (X_INDEX) */
  Val index[IR_MAX_RANK];
  /* by tensor id: the 16-bit tensor is written by ldmatrix alone, which
   * also keeps it in pairs (%tp<id>_<pair>, what mma.sync reads) */
  bool *ldm_pairs;
  StreamedDot *streams; /* emit_stream.c */
  int nstreams, streams_cap;
  /* by parameter index: nothing in the kernel writes through it (Tilus's
   * pointers are __restrict__), so loads through it are ld.global.nc,
   * which ptxas may move above stores and branches (spread_plan) */
  bool *ro_params;
  /* by tensor id: a global_tensor() workspace that only WGMMA fragments of
   * one shape are stored to and loaded from, whole blocks of rows, laid out
   * in the fragment's own order (regtile_plan, emit_regtile.c) */
  bool *native_ws;
  struct Prov *prov;   /* the provenance of 64-bit variables (emit_spread.c) */
  const IrStmt *cur;   /* the statement being emitted (emit_block) */
  const IrStmt *prev;  /* the statement emitted just before, in the same block */
  const IrStmt *prev2; /* and the one before that */
  /* The bytes of an 8-bit tensor that statement `stmt` loaded as 32-bit
   * words (unpack_word): slot i is byte byte[i] of register word[i], so a
   * cast can take a byte straight from its word (emit_regtile.c). */
  struct ByteWords {
    const IrStmt *stmt;
    const IrTensor *t;
    Val *word;
    int *byte;
  } words;
  const char *guard;       /* inside a predicated single_thread(): the
                              predicate register of the thread that runs it;
                              its side effects are emitted under @guard */
  const char **param_regs; /* register holding each user parameter */
  FILE *globals;           /* module-scope declarations the kernel needs */
  bool *vprintf_declared;  /* module-wide: `.extern .func vprintf` printed */
  int nprintf;
  /* Values that depend only on the thread index, the shared-memory base,
   * the parameters and constants (lane and warp parts of addresses),
   * computed once per kernel right after the prologue (hoist_begin): a
   * loop then reads them from registers instead of recomputing them. */
  FILE *hoist;
  struct Hoisted *hoisted; /* what is there, by key */
  int nhoisted, hoisted_cap;
} Emitter;

/* ---- emit.c: printing helpers */
void emit(Emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An instruction with a side effect: under `@guard` inside a predicated
 * single-thread region, plain elsewhere. */
void emit_effect(Emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void emit_label(Emitter *e, int label);
int new_label(Emitter *e);
void emit_loc(Emitter *e, Span sp);
/* Reports "not supported by the PTX backend yet: ..." at the statement. */
void unsupported(Emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Kernel-invariant values (Emitter.hoist). hoist_find: the registers
 * computed under key before (true), else nothing. Between hoist_begin and
 * hoist_end the instructions emitted go to the kernel's start, where only
 * the prologue's registers (%tidx, %smem, the parameters) are defined;
 * hoist_end remembers n registers under key. */
bool hoist_find(Emitter *e, const char *key, Val *v, int n);
FILE *hoist_begin(Emitter *e);
void hoist_end(Emitter *e, FILE *saved, const char *key, const Val *v, int n);

/* ---- expr.c: scalars */
RegClass dtype_class(DType t);
Val emit_math_fn(Emitter *e, IrMathFn fn, Val x); /* emit_spread.c: fn of an f32 register */
const char *ptx_type(DType t);                    /* ".s32", ".u64", ".f16", ".pred" ... */
const char *ptx_btype(DType t);                   /* ".b32", ".b16" ... (bit type of the class) */
Val new_reg(Emitter *e, DType t);
Val val_imm(DType t, int64_t v);
Val emit_expr(Emitter *e, const IrExpr *x);     /* register or immediate */
Val emit_expr_reg(Emitter *e, const IrExpr *x); /* always a register */
Val val_convert(Emitter *e, Val v, DType to);
/* fp8 pairs (emit_expr.c): two fp8 values (low bytes of 32-bit registers)
 * to an f16x2 pair, lo in the low half; two f32 values to fp8 (satfinite),
 * lo's byte then hi's in the low 16 bits of a 32-bit register. */
Val emit_fp8x2_to_f16x2(Emitter *e, Val lo, Val hi, DType fp8);
Val emit_f32x2_to_fp8x2(Emitter *e, Val lo, Val hi, DType fp8);
Val val_to_reg(Emitter *e, Val v);
/* a op b computed in type t (operands converted to t). */
Val emit_binop(Emitter *e, IrOp op, Val a, Val b, DType t);
/* The IR variable's register (%v<id>). */
Val var_reg(const IrVar *v);
/* A shared-memory address (32-bit) of a view: tensor base + view offset. */
Val emit_smem_addr(Emitter *e, const IrRef *r);
/* The thread index inside the current group (tid - group begin). */
Val emit_group_tid(Emitter *e);

/* ---- emit_divmod.c: a / b and a % b of integer type t (C's), ranges of
 * the operands where known (NULL: nothing known) */
Val emit_int_divmod(Emitter *e, IrOp op, Val a, Val b, DType t, const IrRange *ra,
                    const IrRange *rb);
/* An int32 division node x (/ or %) by a launch-invariant divisor, through
 * its hidden parameter's magic numbers (ir_divisor_of) */
Val emit_divisor_divmod(Emitter *e, const IrExpr *x, const IrDivisor *dv);

/* ---- emit_stmt.c: statements and control flow */
void emit_block(Emitter *e, const IrBlock *b);
/* bar.sync over the threads of the current group: barrier 0 for the whole
 * block, else the named barrier id (ir_assign_barriers); false after
 * reporting a group that cannot meet at one (`what` names the statement). */
bool emit_barrier(Emitter *e, int id, const char *what);
/* Runs body(e, arg) in exactly one thread of the current group (elected).
 * predicable: body's only side effects are emit_effect instructions (its
 * other instructions compute fresh registers), so every thread may run it
 * with those under the election's predicate, without a branch. */
void emit_one_thread(Emitter *e, void (*body)(Emitter *, const void *), const void *arg,
                     bool predicable);

/* ---- async.c: mbarrier and TMA */
void emit_mbar_init(Emitter *e);
void emit_mbar_stmt(Emitter *e, const IrStmt *s);
void emit_tma_stmt(Emitter *e, const IrStmt *s);

/* ---- emit_cpasync.c: copy_async (cp.async) and its commit groups */
void emit_cpasync_stmt(Emitter *e, const IrStmt *s);
/* Adds to *pred that copy_async s's chunks are aligned, when that is the
 * same for the whole kernel (emit_spread_alignment's predicate; the copy
 * then tests nothing in the aligned copy of the body). */
void emit_cpasync_alignment(Emitter *e, const IrStmt *s, Val *pred);

/* ---- printf.c */
void emit_printf(Emitter *e, const IrStmt *s);

/* ---- wgmma.c */
void emit_wgmma_stmt(Emitter *e, const IrStmt *s);

/* ---- emit_regtile.c: register tensors */
void tensor_reg_decls(Emitter *e, FILE *out);
void emit_regtile_stmt(Emitter *e, const IrStmt *s);
int64_t tensor_nslots(const IrTensor *t); /* registers per thread */
/* The register of slot i (for 16-bit WGMMA fragments: of the pair). */
Val tensor_slot_reg(const IrTensor *t, int64_t i);
/* false after reporting a tensor without registers (no layout). */
bool tensor_check_regs(Emitter *e, const IrTensor *t);
/* Register operands of a global tensor: base pointer (global space) and
 * its run-time shape (s32). */
typedef struct GView {
  Val base;
  Val dims[IR_MAX_RANK];
  int rank;
  int bytes;
  /* by dimension: no coordinate of the access can leave the shape there
   * (global_view_inside), so global_index does not test it */
  bool inside[IR_MAX_RANK];
} GView;
GView global_view(Emitter *e, const IrTensor *g);
/* Whether a tile of `extent` elements at offset (NULL: 0) along a
 * dimension of size `size` lies inside it for every value the offset can
 * take (ranges.c: a loop variable inside its loop, blockIdx below a
 * constant grid): a constant size, 0 <= offset <= size - extent. */
bool emit_tile_inside(const Emitter *e, const IrExpr *size, const IrExpr *offset, int64_t extent);
/* Whether one test of the offset alone decides a tile of `extent`
 * elements along a dimension of size `size`: both are multiples of a
 * number g >= extent, so the tile lies wholly inside or wholly outside
 * (x + c < size for 0 <= c < extent holds exactly when x < size). */
bool emit_tile_uniform(const Emitter *e, const IrExpr *size, const IrExpr *offset, int64_t extent);
/* The predicate offset < size (unsigned: a negative offset is outside),
 * off and dim holding their values; an offset x // 2^s against a constant
 * size is tested as x < size << s, so that the tests of copies whose
 * offsets are one variable scaled (a K loop's A, B and scale tiles) are
 * one predicate that ptxas computes once. */
Val emit_offset_below(Emitter *e, const IrExpr *offset, Val off, const IrExpr *size, Val dim);
/* Marks g's dimensions where the tile of a load/store statement (at its
 * offsets, of its register tensor's shape) cannot leave the shape. */
void global_view_inside(const Emitter *e, GView *g, const IrStmt *s);
/* Address (u64) of the element at coords (s32 registers, outermost
 * first), and in *inb whether every coordinate is inside the shape
 * (negative ones are out: unsigned compare). */
Val global_elem(Emitter *e, const GView *g, const Val *coords, Val *inb);
Val global_index(Emitter *e, const GView *g, const Val *coords, Val *inb);
/* Whether coords are inside g's first ndims dimensions (those not proved
 * inside): a predicate, or "" when none is tested. */
Val global_inside(Emitter *e, const GView *g, const Val *coords, int ndims);
/* The row-major element index (s64) of coords in g: the first two
 * dimensions in one widening multiply-add (coordinates and shape are s32). */
Val global_linear(Emitter *e, const GView *g, const Val *coords);
/* A shared tensor's swizzle: the 16-byte chunk index of a byte offset
 * (bits 4 up, `bits` of them) XORs the row's place in its group of 8 rows
 * (the bits from `shift` up); bits 0: none. TMA and WGMMA tiles have rows
 * of the swizzle's bytes (shift 7, as the hardware lays them out); tiles
 * only ldmatrix reads may have longer rows (of 2^shift bytes), which the
 * 128-byte pattern with shift 7 would leave with 2-way bank conflicts. */
typedef struct Swizzle {
  int bits, shift;
} Swizzle;
Swizzle tensor_swizzle(const IrTensor *t);
/* The bytes after which the pattern repeats: 2^(shift + bits); 1 for none.
 * swizzle(x + k * period) = swizzle(x) + k * period. */
int64_t swizzle_period(Swizzle z);
/* What %smem, the dynamic shared base, is rounded up to (emit.c): a
 * multiple of it and no more, so an address may be xored after adding
 * %smem only with a constant below it. */
enum { SMEM_BASE_ALIGN = 1024 };
/* Whether adding %smem (a multiple of 1024) before the swizzle gives the
 * same as adding it after (the period divides 1024). */
bool swizzle_commutes(Swizzle z);
/* A byte offset inside a shared tensor after its swizzle. */
Val smem_swizzle(Emitter *e, Val off, Swizzle z);

/* ---- emit_spread.c: register tensors with spread layouts (IrRegLayout):
 * loads and stores, element-wise arithmetic with broadcasting, unary
 * functions, reductions */
void emit_spread_stmt(Emitter *e, const IrStmt *s);
/* What emit_spread.c lends its neighbours: whether the group running here
 * owns t (else an error); (tid / div) % mod; the thread part of each
 * coordinate under L; row-major element strides. */
bool spread_owned(Emitter *e, const IrTensor *t);
Val spread_tid_digit(Emitter *e, Val tid, int64_t div, int64_t mod);
void spread_thread_coords(Emitter *e, const IrRegLayout *L, Val tid, Val *tc);
void spread_row_major(const int64_t *shape, int rank, int64_t *stride);
/* The element strides of a shared view's dimensions in the row-major tile
 * under it (a transposed view's tile has its last two dimensions swapped). */
void spread_view_strides(const IrRef *ref, int64_t *stride);
/* Whether this thread is the first of its replicas under L (a predicate;
 * "" when L has none); the ld/st type of one element of dtype t. */
Val spread_first_replica(Emitter *e, const IrRegLayout *L, Val tid);
const char *spread_mem_type(DType t);
/* emit_scatter.c: store_global_scatter, store_shared_scatter and the
 * self.atomic group (a store with scatter or atomic set) */
void emit_scatter(Emitter *e, const IrStmt *s);
/* emit_printf.c: print_tensor (an S_PRINTF of a tensor) */
void emit_print_tensor(Emitter *e, const IrStmt *s);
/* emit_scan.c: a prefix scan (an S_REDUCE with scan set) */
void emit_scan(Emitter *e, const IrStmt *s);
/* The predicate (a register; "" when the kernel has no such access) that
 * every global vector access of a spread tensor whose alignment is
 * kernel-invariant is aligned: the base pointers and row lengths are
 * multiples of the vectors (the tile offsets are, statically). */
Val emit_spread_alignment(Emitter *e);
/* Whether x is the same in every thread for the whole kernel: parameters,
 * constants and block indices. */
bool emit_invariant(const IrExpr *x);
/* Marks the tensors that ldmatrix alone writes (e->ldm_pairs) and
 * declares their pair registers into out. */
void spread_plan(Emitter *e);
/* emit_regtile.c: which workspaces get the fragment order (Emitter.native_ws) */
void regtile_plan(Emitter *e);
/* ".nc" when global address addr (u64) points only into buffers the kernel
 * never writes (Emitter.ro_params), else "" */
const char *emit_nc(const Emitter *e, const IrExpr *addr);
void spread_pair_decls(Emitter *e, FILE *out);
/* Whether ldmatrix can read shared view ref into mma operand tensor t. */
bool spread_ldmatrix_fits(const Emitter *e, const IrRef *ref, const IrTensor *t);

/* ---- emit_stream.c: dot operands read from shared memory per k step */
/* Finds the dots whose operands may be read where the dot runs instead of
 * where the script loads them (Emitter.streams). */
void stream_plan(Emitter *e);
const StreamedDot *stream_of_dot(const Emitter *e, const IrStmt *dot);
/* Whether s is a load or transpose that a streamed dot emits instead. */
bool stream_skips(const Emitter *e, const IrStmt *s);
/* Every register of a spread tensor = 0. */
void emit_spread_zero(Emitter *e, const IrTensor *t);

/* ---- emit_meta.c: the //@tls metadata block */
bool emit_metadata(FILE *out, const IrModule *m, Diag *d);

#endif
