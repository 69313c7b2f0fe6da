/* test_occupancy.c: the code of `occupancy BASE` entries, built at load
 * time from their bases' (runtime/occupancy.c). First the text libtlsrt
 * gives ptxas: the module-level lines, each base's entry renamed and its
 * hint changed. Then, against tests/runtime/fake_cuda.c playing ptxas
 * (each entry's comments `// fake HINT REGS LOCAL` say what a build with
 * that `.minnctapersm` gets), which build each entry keeps: ptxas's own
 * where it adds blocks per SM without local memory, else one block per SM
 * more than the base, else ptxas's own at the base's blocks, else none,
 * and the entry is gone, with the launches of specialised entries linked
 * again; a unit the JIT refuses drops its entries, not the module. Usage:
 * test_occupancy FAKE_LIB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_internal.h"
#include "runtime/tlsrt.h"
#include "tests/runtime/fake_driver.h"
#include "tests/unit.h"

static const char derive_src[] =
    "//@tls version 1\n//@tls end\n\n.version 8.6\n.target sm_90a\n"
    ".global .align 1 .b8 K_fmt0[3] = {104, 105, 0};\n\n"
    ".visible .entry K(\n\t.param .u32 K_param_n,\n\t.param .align 64 .b8 K_tmap0[128]\n)\n"
    ".maxntid 128, 1, 1\n.minnctapersm 1\n{\n\tld.param.u32 %r0, [K_param_n];\n"
    "\tcvta.param.u64 %rd0, K_tmap0;\n\tmov.u64 %rd1, K_fmt0;\n\tret;\n}\n\n"
    ".visible .entry L(\n)\n.maxntid 32, 1, 1\n{\n\tret;\n}\n";

/* The text for K built as K__occupancy asking for 3 blocks, then with no
 * hint; L has no `.minnctapersm 1` to change, M is not there. */
static void test_text(void) {
  const char *bases[] = {"K"}, *names[] = {"K__occupancy"};
  char msg[256] = "";
  size_t len = 0;
  int three = 3, none = 0;
  char *t = rt_occupancy_text(derive_src, bases, names, &three, 1, &len, msg, sizeof msg);
  CHECK(t != NULL, "derive K: %s", msg);
  if (!t) return;
  CHECK(strlen(t) == len, "length %zu, told %zu", strlen(t), len);
  static const char *const want[] = {
      ".version 8.6\n.target sm_90a\n", ".global .align 1 .b8 K_fmt0[3]",
      ".visible .entry K__occupancy(\n\t.param .u32 K__occupancy_param_n,\n"
      "\t.param .align 64 .b8 K__occupancy_tmap0[128]\n)\n.maxntid 128, 1, 1\n"
      ".minnctapersm 3\n{\n\tld.param.u32 %r0, [K__occupancy_param_n];\n"
      "\tcvta.param.u64 %rd0, K__occupancy_tmap0;\n\tmov.u64 %rd1, K_fmt0;\n\tret;\n}\n"};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    CHECK(strstr(t, want[i]) != NULL, "derived text lacks:\n%s\n--- it is:\n%s", want[i], t);
  CHECK(!strstr(t, "//@tls") && !strstr(t, ".entry K(") && !strstr(t, ".entry L("),
        "metadata or a base's own entry copied:\n%s", t);
  free(t);
  t = rt_occupancy_text(derive_src, bases, names, &none, 1, &len, msg, sizeof msg);
  CHECK(t && !strstr(t, ".minnctapersm") && strstr(t, ".maxntid 128, 1, 1\n{\n"),
        "with no hint:\n%s", t ? t : msg);
  free(t);
  const char *l[] = {"L"}, *m[] = {"M"};
  t = rt_occupancy_text(derive_src, l, names, &three, 1, &len, msg, sizeof msg);
  CHECK(!t && strstr(msg, "entry 'L' has no '.minnctapersm 1' line"), "L: %s", msg);
  free(t);
  msg[0] = 0;
  t = rt_occupancy_text(derive_src, m, names, &three, 1, &len, msg, sizeof msg);
  CHECK(!t && strstr(msg, "entry 'M' is not in the PTX text"), "M: %s", msg);
  free(t);
}

/* Entry NAME of the module file: its metadata, `fixed n=4` for the *__n_4
 * ones, `occupancy BASE` for the *__occupancy ones. */
static char *meta(char *p, const char *name) {
  const char *occ = strstr(name, "__occupancy");
  p += sprintf(p, "//@tls entry %s script=S block=128 smem=0\n//@tls config w=1%s\n", name,
               occ ? " registers=occupancy" : "");
  if (strstr(name, "__n_4")) p += sprintf(p, "//@tls fixed n=4\n");
  if (occ) p += sprintf(p, "//@tls occupancy %.*s\n", (int)(occ - name), name);
  return p + sprintf(p, "//@tls param n i32\n//@tls grid n 1 1\n");
}

/* A base entry's code, with what the fake's ptxas makes of it: `builds`
 * is "HINT REGS LOCAL" triples separated by ';'. */
static char *code(char *p, const char *name, const char *builds) {
  p += sprintf(p,
               ".visible .entry %s(\n\t.param .u32 %s_param_n\n)\n.maxntid 128, 1, 1\n"
               ".minnctapersm 1\n{\n",
               name, name);
  for (const char *b = builds; *b;) {
    size_t n = strcspn(b, ";");
    p += sprintf(p, "\t// fake %.*s\n", (int)n, b);
    b += n + (b[n] == ';');
  }
  return p + sprintf(p, "\tret;\n}\n");
}

static const char *name_or_null(const tls_kernel *k) { return k ? tls_kernel_name(k) : "(null)"; }

/* Blocks of 128 threads; registers for 2 blocks per SM up to 255, 3 up
 * to 168, 4 up to 128.
 *   A: ptxas's own build spills, the one for 3 blocks does not: kept.
 *   B: ptxas's own build gives 4 blocks where B has 3: kept.
 *   C: both spill: dropped.
 *   D: ptxas's own build is clean at D's 2 blocks, the one for 3 spills:
 *      the same blocks kept.
 *   E, E__n_4 (specialised): E's own build kept, E__n_4's dropped, so a
 *      launch of E__occupancy with n = 4 runs E__occupancy itself. */
static void test_builds(tls_context *ctx) {
  static const struct {
    const char *name, *builds;
  } bases[] = {{"A", "1 233 0;0 168 8;3 165 0"},  {"B", "1 148 0;0 128 0"},
               {"C", "1 255 0;0 255 8;3 168 40"}, {"D", "1 228 0;0 226 0;3 168 200"},
               {"E", "1 233 0;0 128 0"},          {"E__n_4", "1 233 0;0 255 8;3 168 40"}};
  enum { N = sizeof bases / sizeof bases[0] };
  char *text = malloc(1 << 16), *p = text, twin[64];
  p += sprintf(p, "//@tls version 1\n");
  for (int i = 0; i < N; i++) {
    p = meta(p, bases[i].name);
    snprintf(twin, sizeof twin, "%s__occupancy", bases[i].name);
    p = meta(p, twin);
  }
  p += sprintf(p, "//@tls end\n.version 8.6\n.target sm_90a\n");
  for (int i = 0; i < N; i++) p = code(p, bases[i].name, bases[i].builds);
  tls_module *mod = NULL;
  fake_log_clear();
  tls_status st = tls_module_load_string(ctx, text, "twins", &mod);
  free(text);
  CHECK(st == TLS_OK, "load: %s", tls_last_error(ctx));
  if (!mod) return;
  /* the file's entries; all twins by ptxas's choice; then for 3 blocks
   * those it did not give more blocks without spilling */
  const char *want_log = "load A B C D E E__n_4\n"
                         "load A__occupancy B__occupancy C__occupancy D__occupancy E__occupancy "
                         "E__n_4__occupancy\n"
                         "load A__occupancy C__occupancy D__occupancy E__n_4__occupancy\n";
  CHECK(!strcmp(fake_log, want_log), "the driver loaded:\n%s--- want:\n%s", fake_log, want_log);
  static const char *const kept[] = {"A", "A__occupancy", "B", "B__occupancy", "C",
                                     "D", "D__occupancy", "E", "E__occupancy", "E__n_4"};
  enum { NKEPT = sizeof kept / sizeof kept[0] };
  CHECK(tls_module_num_kernels(mod) == NKEPT, "%d entries kept, want %d",
        tls_module_num_kernels(mod), NKEPT);
  for (int i = 0; i < NKEPT && i < tls_module_num_kernels(mod); i++)
    CHECK(!strcmp(tls_kernel_name(tls_module_kernel(mod, i)), kept[i]), "entry %d is %s, want %s",
          i, tls_kernel_name(tls_module_kernel(mod, i)), kept[i]);
  CHECK(!tls_kernel_find(mod, "C__occupancy") && strstr(tls_last_error(ctx), "C__occupancy"),
        "C__occupancy is gone: %s", tls_last_error(ctx));
  tls_arg n4 = tls_i32(4);
  const tls_kernel *e = tls_kernel_find(mod, "E"), *eo = tls_kernel_find(mod, "E__occupancy");
  const tls_kernel *ran = e ? tls_kernel_resolve(e, &n4, 1) : NULL;
  CHECK(ran && !strcmp(tls_kernel_name(ran), "E__n_4"), "E with n=4 runs %s", name_or_null(ran));
  ran = eo ? tls_kernel_resolve(eo, &n4, 1) : NULL;
  CHECK(ran && !strcmp(tls_kernel_name(ran), "E__occupancy"), "E__occupancy with n=4 runs %s",
        name_or_null(ran));
  tls_module_free(mod);
}

/* A unit the JIT refuses: F's build for 3 blocks. Its twin is dropped;
 * the file's entries and G's twin (ptxas's own build) load. */
static void test_refused(tls_context *ctx) {
  char *text = malloc(1 << 14), *p = text;
  p += sprintf(p, "//@tls version 1\n");
  p = meta(p, "F");
  p = meta(p, "F__occupancy");
  p = meta(p, "G");
  p = meta(p, "G__occupancy");
  p += sprintf(p, "//@tls end\n.version 8.6\n.target sm_90a\n");
  p = code(p, "F", "1 233 0;0 168 8;3 165 0;refuse 3");
  p = code(p, "G", "1 148 0;0 128 0");
  tls_module *mod = NULL;
  fake_log_clear();
  tls_status st = tls_module_load_string(ctx, text, "refused", &mod);
  free(text);
  CHECK(st == TLS_OK, "load with a refused unit: %s", tls_last_error(ctx));
  const char *want = "load F G\nload F__occupancy G__occupancy\nrefuse\n";
  CHECK(!strcmp(fake_log, want), "the driver saw:\n%s--- want:\n%s", fake_log, want);
  CHECK(mod && tls_module_num_kernels(mod) == 3 && tls_kernel_find(mod, "G__occupancy") &&
            !tls_kernel_find(mod, "F__occupancy"),
        "F, G and G__occupancy kept, F__occupancy dropped");
  tls_module_free(mod);
}

int main(int argc, char **argv) {
  if (argc != 2) return fprintf(stderr, "usage: test_occupancy FAKE_LIB\n"), 2;
  test_text();
  tls_context *ctx = fake_context(argv[1]);
  if (ctx) test_builds(ctx);
  if (ctx) test_refused(ctx);
  tls_context_free(ctx);
  printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
