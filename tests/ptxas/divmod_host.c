/* divmod_host.c: integer division and remainder by constants as the PTX
 * backend emits them (emit_divmod.c), checked on the host: for each integer
 * type, kernels of `q = x / d` and `r = x % d` over many constants d (powers
 * of two, others, 1, -1, the type's extremes) are emitted, and their PTX is
 * run by a small interpreter of the integer instructions it uses, for
 * dividends of both signs, the type's extremes and the multiples of d and
 * their neighbours, against C's / and % (INT_MIN / -1 wraps to INT_MIN,
 * INT_MIN % -1 is 0). Variants divide a value the backend knows to be
 * non-negative (x & 1023, x & MAX): the unsigned paths and shortened
 * multipliers. Exit 0 when every result matches.
 *
 *   divmod_host [-v]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_ptx/ptx.h"

typedef __int128 i128;
typedef unsigned __int128 u128;

static Arena *ar;
static IrKernel *kern;
static int verbose;

/* ------------------------------------------------------------ kernels */

typedef struct Case {
  IrVar *var; /* holds the result */
  IrOp op;
  int64_t d;
  int mask; /* 0: x; 1: x & 1023; 2: x & MAX (non-negative) */
} Case;

#define MAX_CASES 512
static Case cases[MAX_CASES];
static int ncases;

static Span at(int line) { return (Span){line, 5, line, 40}; }

static void build(IrModule *m, DType t, const int64_t *ds, int nd) {
  kern = arena_alloc(ar, sizeof *kern);
  kern->name = arena_strdup(ar, "DivMod");
  kern->script = kern->name;
  kern->warps = 1;
  kern->span = at(1);
  m->kernels = arena_alloc(ar, sizeof(IrKernel *));
  m->kernels[0] = kern;
  m->nkernels = 1;
  IrParam *p = arena_alloc(ar, sizeof *p);
  p->name = arena_strdup(ar, "x");
  p->type = t;
  kern->params = arena_alloc(ar, sizeof(IrParam *));
  kern->params[0] = p;
  kern->nparams = 1;
  for (int i = 0; i < 3; i++) kern->grid[i] = ir_const(ar, DT_INT32, 1);
  bool wide = dtype_bytes(t) == 8, sgn = dtype_is_signed(t);
  int64_t maxv = wide ? (sgn ? INT64_MAX : -1) : (sgn ? INT32_MAX : (int64_t)UINT32_MAX);
  ncases = 0;
  for (int mask = 0; mask < 3; mask++) {
    IrExpr *x = ir_param_ref(ar, p);
    if (mask == 1) x = ir_binary(ar, OP_AND, x, ir_const(ar, t, 1023));
    if (mask == 2) x = ir_binary(ar, OP_AND, x, ir_const(ar, t, maxv));
    for (int i = 0; i < nd; i++) {
      for (int o = 0; o < 2 && ncases < MAX_CASES; o++) {
        Case *c = &cases[ncases++];
        c->op = o ? OP_MOD : OP_DIV;
        c->d = ds[i];
        c->mask = mask;
        c->var = ir_new_var(ar, kern, o ? "r" : "q", t);
        IrStmt *s = ir_stmt_new(ar, S_ASSIGN, at(10 + ncases));
        s->assign.var = c->var;
        s->assign.value = ir_binary(ar, c->op, x, ir_const(ar, t, ds[i]));
        ir_block_push(ar, &kern->body, s);
      }
    }
  }
}

/* ------------------------------------------------------- interpreter */

#define MAX_REGS 8192
typedef struct Insn {
  char op[24]; /* "mul.hi", "shr", "mov" ... */
  char ty;     /* 's', 'u', 'b', 'p' */
  int bits;    /* 32, 64, 1 */
  int dst;     /* register index */
  int nsrc;    /* register index, or -1 with imm */
  int src[3];
  int64_t imm[3];
  bool param; /* ld.param */
} Insn;

static char *reg_names[MAX_REGS];
static int nreg_names;

/* Forgets the register names of the last kernel parsed. */
static void reset_regs(void) {
  while (nreg_names) free(reg_names[--nreg_names]);
}

static int reg_index(const char *name) {
  for (int i = 0; i < nreg_names; i++)
    if (strcmp(reg_names[i], name) == 0) return i;
  if (nreg_names == MAX_REGS) {
    fprintf(stderr, "divmod_host: too many registers\n");
    exit(2);
  }
  reg_names[nreg_names] = strdup(name);
  return nreg_names++;
}

static void trim(char *s) {
  char *p = s;
  while (*p == ' ' || *p == '\t') p++;
  memmove(s, p, strlen(p) + 1);
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == ';' || s[n - 1] == '\n')) s[--n] = 0;
}

/* Parses the body of the kernel into insns; false on an instruction the
 * interpreter does not know (the test then fails: extend it). */
static int parse(char *ptx, Insn *out, int max) {
  int n = 0;
  char *body = strstr(ptx, "ld.param");
  if (!body) return -1;
  for (char *line = strtok(body, "\n"); line; line = strtok(NULL, "\n")) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", line);
    trim(buf);
    if (!buf[0] || buf[0] == '.' || buf[0] == '$' || buf[0] == '}' || strcmp(buf, "ret") == 0)
      continue;
    if (n == max) return -1;
    Insn *in = &out[n++];
    memset(in, 0, sizeof *in);
    char *sp = strchr(buf, ' ');
    if (!sp) return -1;
    *sp = 0;
    char *args = sp + 1;
    /* opcode: name[.mod].type */
    char *ty = strrchr(buf, '.');
    if (!ty) return -1;
    *ty++ = 0;
    if (strlen(buf) >= sizeof in->op) return -1;
    memcpy(in->op, buf, strlen(buf) + 1);
    in->ty = ty[0];
    in->bits = strcmp(ty, "pred") == 0 ? 1 : atoi(ty + 1);
    if (strncmp(in->op, "ld.param", 8) == 0) {
      in->param = true;
      char *comma = strchr(args, ',');
      *comma = 0;
      trim(args);
      in->dst = reg_index(args);
      continue;
    }
    if (strcmp(in->op, "shfl.sync.idx") == 0) { /* the warp index: lane 0's, the same here */
      snprintf(in->op, sizeof in->op, "mov");
    }
    char *tok[5];
    int nt = 0;
    for (char *a = strtok_r(args, ",", &sp); a && nt < 5; a = strtok_r(NULL, ",", &sp)) {
      trim(a);
      tok[nt++] = a;
    }
    if (nt < 2) return -1;
    in->dst = reg_index(tok[0]);
    in->nsrc = nt - 1 > 3 ? 3 : nt - 1;
    for (int i = 0; i < in->nsrc; i++) {
      const char *a = tok[i + 1];
      if (a[0] == '%' && strcmp(a, "%tid.x") != 0) {
        in->src[i] = reg_index(a);
      } else {
        in->src[i] = -1;
        in->imm[i] =
            a[0] == '%' ? 0 : (a[0] == '-' ? strtoll(a, NULL, 0) : (int64_t)strtoull(a, NULL, 0));
      }
    }
  }
  return n;
}

static uint64_t regs[MAX_REGS];

static uint64_t wrap(int bits, u128 v) {
  return bits >= 64 ? (uint64_t)v : bits == 1 ? (uint64_t)(v & 1) : (uint64_t)(v & 0xFFFFFFFFu);
}
static int64_t sext(int bits, uint64_t v) {
  return bits >= 64 ? (int64_t)v : (int64_t)(int32_t)(uint32_t)v;
}

/* Runs the program; false on an unknown instruction. */
static bool run(const Insn *p, int n, uint64_t x) {
  for (int i = 0; i < n; i++) {
    const Insn *in = &p[i];
    int N = in->bits;
    if (in->param) {
      regs[in->dst] = wrap(N, x);
      continue;
    }
    uint64_t s[3] = {0, 0, 0};
    for (int j = 0; j < in->nsrc; j++)
      s[j] = wrap(N, in->src[j] >= 0 ? regs[in->src[j]] : (uint64_t)in->imm[j]);
    int64_t a = sext(N, s[0]), b = in->nsrc > 1 ? sext(N, s[1]) : 0;
    uint64_t ua = s[0], ub = in->nsrc > 1 ? s[1] : 0;
    bool sg = in->ty == 's';
    u128 r;
    const char *op = in->op;
    if (strcmp(op, "mov") == 0)
      r = ua;
    else if (strcmp(op, "add") == 0)
      r = (u128)ua + ub;
    else if (strcmp(op, "sub") == 0)
      r = (u128)ua - ub;
    else if (strcmp(op, "mul.lo") == 0)
      r = (u128)ua * ub;
    else if (strcmp(op, "mul.hi") == 0)
      r = sg ? (u128)(((i128)a * b) >> N) : ((u128)ua * ub) >> N;
    else if (strcmp(op, "shr") == 0)
      r = sg ? (u128)(i128)(a >> (ub & 63)) : (u128)(ua >> (ub & 63));
    else if (strcmp(op, "shl") == 0)
      r = (u128)ua << (ub & 63);
    else if (strcmp(op, "and") == 0)
      r = ua & ub;
    else if (strcmp(op, "or") == 0)
      r = ua | ub;
    else if (strcmp(op, "xor") == 0)
      r = ua ^ ub;
    else if (strncmp(op, "setp.", 5) == 0) {
      const char *c = op + 5;
      bool lt = sg ? a < b : ua < ub, eq = ua == ub;
      r = strcmp(c, "eq") == 0   ? eq
          : strcmp(c, "ne") == 0 ? !eq
          : strcmp(c, "lt") == 0 ? lt
          : strcmp(c, "le") == 0 ? lt || eq
          : strcmp(c, "gt") == 0 ? !lt && !eq
                                 : !lt;
      regs[in->dst] = (uint64_t)r;
      continue;
    } else if (strcmp(op, "selp") == 0)
      r = regs[in->src[2]] & 1 ? ua : ub;
    else if (strcmp(op, "neg") == 0)
      r = (u128)0 - ua;
    else if (strcmp(op, "div") == 0 || strcmp(op, "rem") == 0) {
      bool div = op[0] == 'd';
      if (ub == 0) return false;
      if (sg) {
        int64_t lim = N == 64 ? INT64_MIN : INT32_MIN;
        if (a == lim && b == -1)
          r = div ? (u128)(uint64_t)a : 0;
        else
          r = (u128)(i128)(div ? a / b : a % b);
      } else {
        r = div ? ua / ub : ua % ub;
      }
    } else {
      fprintf(stderr, "divmod_host: unknown instruction %s\n", op);
      return false;
    }
    regs[in->dst] = wrap(N, r);
  }
  return true;
}

/* ------------------------------------------------------------- checks */

/* C's x op d over type t (INT_MIN / -1 wraps). */
static uint64_t expect(DType t, IrOp op, uint64_t x, int64_t d) {
  int N = dtype_bytes(t) * 8;
  if (dtype_is_signed(t)) {
    int64_t a = sext(N, wrap(N, x)), b = sext(N, wrap(N, (uint64_t)d));
    int64_t lim = N == 64 ? INT64_MIN : INT32_MIN;
    if (a == lim && b == -1) return op == OP_DIV ? wrap(N, (uint64_t)a) : 0;
    return wrap(N, (uint64_t)(op == OP_DIV ? a / b : a % b));
  }
  uint64_t a = wrap(N, x), b = wrap(N, (uint64_t)d);
  return op == OP_DIV ? a / b : a % b;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static int check_type(DType t, const int64_t *ds, int nd) {
  ar = arena_new();
  IrModule m = {.ar = ar};
  build(&m, t, ds, nd);
  Diag dg, *d = &dg;
  diag_init(d, NULL, stderr);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  PtxOptions opt = {.line_info = false};
  if (!ptx_emit(f, &m, &opt, d)) {
    fprintf(stderr, "divmod_host: %s: the backend failed\n", dtype_name(t));
    return 1;
  }
  fclose(f);
  static Insn prog[1 << 16];
  reset_regs();
  int n = parse(text, prog, 1 << 16);
  if (n < 0) {
    fprintf(stderr, "divmod_host: %s: cannot parse the PTX\n", dtype_name(t));
    return 1;
  }
  int vreg[MAX_CASES];
  for (int c = 0; c < ncases; c++) {
    char name[32];
    snprintf(name, sizeof name, "%%v%d", cases[c].var->id);
    vreg[c] = reg_index(name);
  }
  int N = dtype_bytes(t) * 8;
  uint64_t top = N == 64 ? ~(uint64_t)0 : 0xFFFFFFFFu;
  uint64_t sbit = (uint64_t)1 << (N - 1);
  /* dividends: extremes, small values of both signs, random ones, and the
   * multiples of each divisor near zero and near the extremes, +-1 */
  uint64_t xs[4096];
  int nx = 0;
  uint64_t fixed[] = {0, 1, 2, 3, 7, top, top - 1, top - 6, sbit, sbit + 1, sbit - 1, sbit - 2};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) xs[nx++] = fixed[i];
  for (int i = 0; i < 600; i++) xs[nx++] = next() & top;
  for (int i = 0; i < 200; i++) xs[nx++] = (next() & 0xFFFF) - 0x8000;
  for (int i = 0; i < nd && nx < 4000; i++) {
    uint64_t ad = (uint64_t)(ds[i] < 0 ? -(u128)ds[i] : (u128)ds[i]) & top;
    uint64_t bases[4] = {0, ad * 3, sbit - (sbit % (ad ? ad : 1)), top - (top % (ad ? ad : 1))};
    for (int b = 0; b < 4; b++)
      for (int k = -1; k <= 1; k++) {
        xs[nx++] = (bases[b] + (uint64_t)k) & top;
        xs[nx++] = (0 - bases[b] + (uint64_t)k) & top;
      }
  }
  int bad = 0;
  long checked = 0;
  for (int i = 0; i < nx; i++) {
    if (!run(prog, n, xs[i])) return 1;
    for (int c = 0; c < ncases; c++) {
      uint64_t x = xs[i];
      if (cases[c].mask == 1) x &= 1023;
      if (cases[c].mask == 2) x &= top >> (dtype_is_signed(t) ? 1 : 0);
      uint64_t want = expect(t, cases[c].op, x, cases[c].d), got = wrap(N, regs[vreg[c]]);
      checked++;
      if (got != want && bad++ < 10)
        fprintf(stderr,
                "divmod_host: %s (x%s) %s %" PRId64 " for x = 0x%" PRIx64 ": got 0x%" PRIx64
                ", want 0x%" PRIx64 "\n",
                dtype_name(t),
                cases[c].mask == 1   ? " & 1023"
                : cases[c].mask == 2 ? " & MAX"
                                     : "",
                cases[c].op == OP_DIV ? "/" : "%", cases[c].d, x, got, want);
    }
  }
  if (verbose || bad)
    printf("%s: %d divisors, %d dividends, %ld results, %d wrong\n", dtype_name(t), nd, nx, checked,
           bad);
  /* no division instruction is left for a constant divisor */
  if (strstr(text, "div.") || strstr(text, "rem.")) {
    fprintf(stderr, "divmod_host: %s: a div or rem instruction is left\n", dtype_name(t));
    bad++;
  }
  free(text);
  arena_free(ar);
  return bad != 0;
}

int main(int argc, char **argv) {
  verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
  static const int64_t s32[] = {1,
                                -1,
                                2,
                                -2,
                                3,
                                -3,
                                4,
                                5,
                                6,
                                7,
                                -7,
                                8,
                                9,
                                10,
                                11,
                                12,
                                13,
                                16,
                                -16,
                                25,
                                60,
                                64,
                                100,
                                125,
                                128,
                                641,
                                1000,
                                1024,
                                4096,
                                65535,
                                65536,
                                65537,
                                1000003,
                                -1000003,
                                0x40000000,
                                INT32_MAX,
                                INT32_MAX - 1,
                                INT32_MIN,
                                INT32_MIN + 1,
                                -0x40000000};
  static const int64_t u32[] = {
      1,          2,          3,          4,          5,          6,         7,
      10,         11,         12,         13,         25,         64,        100,
      641,        1000,       65535,      65536,      65537,      1000003,   0x7FFFFFFF,
      0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF, 0x40000000, 0x12345679};
  static const int64_t s64[] = {1,
                                -1,
                                2,
                                3,
                                -3,
                                4,
                                7,
                                10,
                                -10,
                                64,
                                100,
                                641,
                                1000003,
                                10000000019LL,
                                1LL << 40,
                                -(1LL << 40),
                                INT64_MAX,
                                INT64_MIN,
                                INT64_MIN + 1,
                                0x123456789ABCDEFLL,
                                -7};
  static const int64_t u64[] = {1,         2,
                                3,         7,
                                10,        641,
                                1000003,   10000000019LL,
                                1LL << 40, INT64_MAX,
                                INT64_MIN, -1,
                                -2,        0x123456789ABCDEFLL};
  int bad = check_type(DT_INT32, s32, sizeof s32 / sizeof s32[0]);
  bad += check_type(DT_UINT32, u32, sizeof u32 / sizeof u32[0]);
  bad += check_type(DT_INT64, s64, sizeof s64 / sizeof s64[0]);
  bad += check_type(DT_UINT64, u64, sizeof u64 / sizeof u64[0]);
  reset_regs();
  if (!bad) printf("divmod_host: every quotient and remainder matches C's\n");
  return bad != 0;
}
