/* test_verify.c: the sim_run C API on examples/matmul_v5.tls.
 *
 *   test_verify PATH/matmul_v5.tls [N]
 *
 * Checks the statuses (usage errors for missing or unknown parameters and
 * blocks outside the grid, OK with the summary line), and the reports on
 * IR changed after the passes: empty barriers that count 1 (a deadlock),
 * consumers that never wait for their data (a read of bytes a copy is still
 * writing), and a producer left alone (copies in flight at the end).
 * With N, also N random mutations of the planned V5 (statements dropped,
 * wait_group depths and barrier counts changed): the simulation never
 * crashes, and reports a problem exactly when it says so.
 * Exits non-zero when a check failed.
 */
#include "eval/eval.h"
#include "sim/sim.h"
#include "tests/unit.h"

#include <stdlib.h>
#include <string.h>

static const SimParam SIZES_1024[] = {{"m_size", 1024}, {"n_size", 1024}, {"k_size", 1024}};

/* A freshly built and planned module (each test mutates its own). */
static IrModule *build(Arena *ar, const Source *src) {
  Diag d;
  diag_init(&d, src, stderr);
  Node *module = parse_source(ar, src, &d);
  IrModule *m = module ? eval_build(ar, module, src, NULL, 0, &d) : NULL;
  if (!m || !ir_run_passes(m, &d)) {
    fprintf(stderr, "test_verify: cannot build %s\n", src->path);
    exit(2);
  }
  return m;
}

/* Runs sim_run with its diagnostics and summary caught in *text. */
static SimStatus simulate(const IrModule *m, const Source *src, SimOptions opt, char **text) {
  size_t len;
  FILE *f = open_memstream(text, &len);
  Diag d;
  diag_init(&d, src, f);
  opt.summary = f;
  SimStatus st = sim_run(m, &opt, &d);
  fclose(f);
  return st;
}

static void test_usage(const Source *src) {
  Arena *ar = arena_new();
  IrModule *m = build(ar, src);
  char *text;
  SimOptions missing = {.params = SIZES_1024, .nparams = 2};
  CHECK(simulate(m, src, missing, &text) == SIM_USAGE);
  CHECK(strstr(text, "needs a value for the parameter 'k_size'"));
  free(text);
  SimParam unknown[] = {{"m_size", 1}, {"n_size", 1}, {"k_size", 1}, {"q_size", 1}};
  SimOptions extra = {.params = unknown, .nparams = 4};
  CHECK(simulate(m, src, extra, &text) == SIM_USAGE);
  CHECK(strstr(text, "no kernel has a run-time parameter 'q_size'"));
  free(text);
  int64_t outside[] = {32};
  SimOptions far = {.params = SIZES_1024, .nparams = 3, .blocks = outside, .nblocks = 1};
  CHECK(simulate(m, src, far, &text) == SIM_USAGE);
  CHECK(strstr(text, "block 32 is outside the grid"));
  free(text);
  arena_free(ar);
}

static void test_sound(const Source *src) {
  Arena *ar = arena_new();
  IrModule *m = build(ar, src);
  char *text;
  int64_t blocks[] = {0, 7, 31};
  SimOptions opt = {.params = SIZES_1024, .nparams = 3, .blocks = blocks, .nblocks = 3};
  CHECK(simulate(m, src, opt, &text) == SIM_OK);
  CHECK(strncmp(text, "verify: MatmulWGMMAV5: no problem in blocks 0, 7, 31 of 32", 58) == 0);
  free(text);
  arena_free(ar);
}

static IrTensor *tensor_named(IrKernel *k, const char *name) {
  for (int i = 0; i < k->ntensors; i++)
    if (strcmp(k->tensors[i]->name, name) == 0) return k->tensors[i];
  return NULL;
}

static void test_deadlock(const Source *src) {
  Arena *ar = arena_new();
  IrModule *m = build(ar, src);
  IrTensor *empty = tensor_named(m->kernels[0], "empty_barriers");
  CHECK(empty != NULL);
  for (int64_t i = 0; empty && i < empty->shape[0]; i++) empty->mbar_counts[i] = 1;
  char *text;
  SimOptions opt = {.params = SIZES_1024, .nparams = 3};
  CHECK(simulate(m, src, opt, &text) == SIM_PROBLEM);
  CHECK(strstr(text, "error: deadlock in block 0 of MatmulWGMMAV5"));
  free(text);
  arena_free(ar);
}

/* Removes every statement of kind `kind` under block b, recursively. */
static void drop_kind(IrBlock *b, SKind kind) {
  int n = 0;
  for (int i = 0; i < b->len; i++) {
    IrStmt *s = b->items[i];
    if (s->kind == kind) continue;
    drop_kind(&s->body, kind);
    drop_kind(&s->orelse, kind);
    b->items[n++] = s;
  }
  b->len = n;
}

/* The thread group statement of the body that starts at thread `begin`. */
static IrStmt *group_at(IrKernel *k, int64_t begin) {
  for (int i = 0; i < k->body.len; i++)
    if (k->body.items[i]->kind == S_THREAD_GROUP && k->body.items[i]->group.begin == begin)
      return k->body.items[i];
  return NULL;
}

static void test_read_before_copy(const Source *src) {
  Arena *ar = arena_new();
  IrModule *m = build(ar, src);
  IrStmt *consumer = group_at(m->kernels[0], 0);
  CHECK(consumer != NULL);
  if (consumer) drop_kind(&consumer->body, S_MBAR_WAIT);
  char *text;
  SimOptions opt = {.params = SIZES_1024, .nparams = 3};
  CHECK(simulate(m, src, opt, &text) == SIM_PROBLEM);
  CHECK(strstr(text, "error: shared-memory race in block 0 of MatmulWGMMAV5: this wgmma reads "
                     "sa[0, 0] (bytes 0..8191) while a TMA copy still writes sa[0, 0]"));
  free(text);
  arena_free(ar);
}

static void test_copies_left(const Source *src) {
  Arena *ar = arena_new();
  IrModule *m = build(ar, src);
  IrKernel *k = m->kernels[0];
  IrStmt *producer = group_at(k, 256);
  /* the K loop (unrolled: main loop and remainder), then the drain loop */
  CHECK(producer != NULL && producer->body.len >= 2 &&
        producer->body.items[producer->body.len - 1]->kind == S_FOR);
  if (producer) producer->body.len--; /* no drain loop */
  int n = 0;
  for (int i = 0; i < k->body.len; i++)
    if (k->body.items[i]->kind != S_THREAD_GROUP || k->body.items[i]->group.begin == 256)
      k->body.items[n++] = k->body.items[i];
  k->body.len = n; /* no consumers */
  SimParam sizes[] = {{"m_size", 1024}, {"n_size", 1024}, {"k_size", 256}};
  char *text;
  SimOptions opt = {.params = sizes, .nparams = 3};
  CHECK(simulate(m, src, opt, &text) == SIM_PROBLEM);
  CHECK(strstr(text, "this TMA copy into sa[0, 0] is still in flight when every warp has exited"));
  free(text);
  arena_free(ar);
}

/* Every block of statements under b, into blocks[*n] (up to max). */
static void collect_blocks(IrBlock *b, IrBlock **blocks, int *n, int max) {
  if (*n < max) blocks[(*n)++] = b;
  for (int i = 0; i < b->len; i++) {
    collect_blocks(&b->items[i]->body, blocks, n, max);
    collect_blocks(&b->items[i]->orelse, blocks, n, max);
  }
}

/* One random change of the kernel's synchronisation. */
static void mutate(IrKernel *k, unsigned *seed) {
  IrBlock *blocks[256];
  int n = 0;
  collect_blocks(&k->body, blocks, &n, 256);
  IrBlock *b = blocks[rand_r(seed) % n];
  if (b->len == 0) return;
  int i = rand_r(seed) % b->len;
  IrStmt *s = b->items[i];
  switch (rand_r(seed) % 3) {
  case 0: /* drop the statement */
    memmove(&b->items[i], &b->items[i + 1], sizeof *b->items * (size_t)(b->len - i - 1));
    b->len--;
    break;
  case 1:
    if (s->kind == S_WGMMA_WAIT || s->kind == S_TMA_WAIT) s->wait.max_pending = rand_r(seed) % 3;
    break;
  default:
    for (int t = 0; t < k->ntensors; t++)
      if (k->tensors[t]->is_mbarrier)
        k->tensors[t]->mbar_counts[rand_r(seed) % k->tensors[t]->shape[0]] = rand_r(seed) % 4;
  }
}

/* N mutated kernels: a problem is reported iff an error was printed. */
static void test_mutations(const Source *src, int runs) {
  unsigned seed = 12345;
  SimParam sizes[] = {{"m_size", 300}, {"n_size", 700}, {"k_size", 520}};
  for (int r = 0; r < runs; r++) {
    Arena *ar = arena_new();
    IrModule *m = build(ar, src);
    for (int c = 1 + rand_r(&seed) % 3; c > 0; c--) mutate(m->kernels[0], &seed);
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    Diag d;
    diag_init(&d, src, f);
    SimOptions opt = {.params = sizes, .nparams = 3};
    SimStatus st = sim_run(m, &opt, &d);
    fclose(f);
    CHECK(st != SIM_USAGE);
    CHECK((st == SIM_PROBLEM) == (d.nerrors > 0));
    free(text);
    arena_free(ar);
  }
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: test_verify PATH/matmul_v5.tls [N]\n");
    return 2;
  }
  Source *src = source_read(argv[1]);
  if (!src) return 2;
  test_usage(src);
  test_sound(src);
  test_deadlock(src);
  test_read_before_copy(src);
  test_copies_left(src);
  if (argc == 3) test_mutations(src, atoi(argv[2]));
  source_free(src);
  if (failures) fprintf(stderr, "test_verify: %d check(s) failed\n", failures);
  return failures != 0;
}
