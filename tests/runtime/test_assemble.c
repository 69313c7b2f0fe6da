/* test_assemble.c: libtlsrt's ptxas step on the CPU (runtime/assemble.c):
 * a file of seven entries assembled by one, three and more processes than
 * entries, each bundle taken apart into cubins that hold every entry
 * exactly once; an entry the file lacks named; a failing share's
 * ptxas message; damaged bundles refused;
 * the number of processes; each further PTX file split three ways. Usage:
 * test_assemble DATA_DIR PTXAS [PTX...] (exits 77, skipped, without ptxas). */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/rt_internal.h"
#include "tests/unit.h"

enum { MAX_ENTRIES = 16 };

static const char *ptxas;
static char *text; /* the PTX file */
static size_t text_len;
static char tmpdir[] = "/tmp/tlsc-assemble-XXXXXX";

/* The names after ".visible .entry " in the file. */
static int entry_names(const char *text, char names[][128]) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, ".visible .entry ")) && n < MAX_ENTRIES; n++) {
    p += strlen(".visible .entry ");
    size_t len = strcspn(p, "(");
    snprintf(names[n], 128, "%.*s", (int)len, p);
  }
  return n;
}

/* Assembles with `jobs` processes; the image's parts must be `want`
 * cubins, every entry in exactly one. */
static void expect_parts(const char *const *entries, int nentries, int jobs, int want) {
  char out[256], log[4000];
  snprintf(out, sizeof out, "%s/image%d", tmpdir, jobs);
  int rc =
      rt_assemble(ptxas, "sm_90a", text, text_len, entries, nentries, jobs, out, log, sizeof log);
  CHECK(rc == 0, "jobs %d: exit %d: %s", jobs, rc, log);
  size_t len = 0;
  char *image = rt_read_file(out, &len);
  CHECK(image != NULL, "jobs %d: no image", jobs);
  if (!image) return;
  const char *parts[MAX_ENTRIES];
  size_t sizes[MAX_ENTRIES];
  int n = rt_image_parts(image, len, parts, sizes, MAX_ENTRIES);
  CHECK(n == want, "jobs %d: %d parts, want %d", jobs, n, want);
  for (int i = 0; i < n; i++)
    CHECK(sizes[i] > 4 && !memcmp(parts[i], "\177ELF", 4), "jobs %d: part %d is no ELF", jobs, i);
  for (int e = 0; e < nentries; e++) {
    int found = 0;
    /* the name and its NUL, as the cubin's string tables hold it (the
     * file's entries are also each other's prefixes) */
    for (int i = 0; i < n; i++)
      found += memmem(parts[i], sizes[i], entries[e], strlen(entries[e]) + 1) != NULL;
    CHECK(found == 1, "jobs %d: entry %s in %d parts", jobs, entries[e], found);
  }
  free(image);
  unlink(out);
  /* no part, log or temporary file is left beside the image */
  char leftover[300];
  snprintf(leftover, sizeof leftover, "%s.part0", out);
  CHECK(access(leftover, F_OK) != 0, "jobs %d: %s left", jobs, leftover);
  snprintf(leftover, sizeof leftover, "%s.log", out);
  CHECK(access(leftover, F_OK) != 0, "jobs %d: %s left", jobs, leftover);
}

/* A file with line information (.file, .loc), whose text ptxas keeps in
 * the cubin, and blocks nested in the entries' bodies (closed at the start
 * of a line) and braces in comments: each part assembles, and holds its own
 * entries' text only (the
 * marker register of every other entry absent), and the parts together are
 * about the size of one cubin of the whole file. */
static void test_line_info(void) {
  static char file[1 << 16];
  const char *names[6] = {"K0", "K1", "K2", "K3", "K4", "K5"};
  int n = snprintf(file, sizeof file,
                   "//@tls version 1\n.version 8.0\n.target sm_90a\n.address_size 64\n"
                   ".file 1 \"assemble.tls\"\n");
  for (int e = 0; e < 6; e++) {
    n += snprintf(file + n, sizeof file - (size_t)n,
                  ".visible .entry %s(\n\t.param .u64 p\n)\n{\n\t.reg .b64 %%rd<3>;\n"
                  "\t.reg .b32 %%marker_of_%s;\n\t.loc 1 %d 1\n\tld.param.u64 %%rd1, [p];\n"
                  /* a nested block closed at the start of a line, braces in comments */
                  "\t{ .reg .b32 %%t;\n\tmov.b32 %%t, 1; // }}\n}\n\t/* } */\n"
                  "\tcvta.to.global.u64 %%rd2, %%rd1;\n\tst.global.u32 [%%rd2], %d;\n\tret;\n}\n",
                  names[e], names[e], 10 + e, e);
  }
  char one[256], many[256], log[4000];
  snprintf(one, sizeof one, "%s/lines1", tmpdir);
  snprintf(many, sizeof many, "%s/lines3", tmpdir);
  CHECK(!rt_assemble(ptxas, "sm_90a", file, (size_t)n, names, 6, 1, one, log, sizeof log), "%s",
        log);
  CHECK(!rt_assemble(ptxas, "sm_90a", file, (size_t)n, names, 6, 3, many, log, sizeof log), "%s",
        log);
  size_t len1 = 0, len3 = 0;
  char *image1 = rt_read_file(one, &len1), *image3 = rt_read_file(many, &len3);
  CHECK(image1 && image3);
  if (!image1 || !image3) return;
  CHECK(memmem(image1, len1, "marker_of_K5", 12) != NULL, "no line information kept");
  const char *parts[4];
  size_t sizes[4], total = 0;
  int nparts = rt_image_parts(image3, len3, parts, sizes, 4);
  CHECK(nparts == 3, "%d parts", nparts);
  for (int i = 0; i < nparts; i++) {
    total += sizes[i];
    for (int e = 0; e < 6; e++) {
      char marker[32];
      snprintf(marker, sizeof marker, "marker_of_%s", names[e]);
      bool mine = e % 3 == i, there = memmem(parts[i], sizes[i], marker, strlen(marker)) != NULL;
      CHECK(mine == there, "part %d: %s %s", i, marker, there ? "present" : "absent");
    }
    CHECK(!memmem(parts[i], sizes[i], "//@tls", 6), "part %d holds the metadata", i);
  }
  CHECK(total < 3 * len1, "parts %zu bytes, one cubin %zu", total, len1);
  free(image1);
  free(image3);
  unlink(one);
  unlink(many);
}

/* A share whose ptxas fails: its exit status and ptxas's message. */
static void test_ptxas_error(void) {
  const char *bad = ".version 8.0\n.target sm_90a\n.address_size 64\n"
                    ".visible .entry A()\n{\n\tret;\n}\n"
                    ".visible .entry B()\n{\n\tbogus_instruction_here;\n\tret;\n}\n";
  const char *names[] = {"A", "B"};
  char out[256], log[4000];
  snprintf(out, sizeof out, "%s/bad", tmpdir);
  int rc = rt_assemble(ptxas, "sm_90a", bad, strlen(bad), names, 2, 2, out, log, sizeof log);
  CHECK(rc > 0, "exit %d", rc);
  CHECK(strstr(log, "bogus_instruction_here") != NULL, "log: %s", log);
  CHECK(access(out, F_OK) != 0, "an image was written");
}

static void test_missing_entry(const char *const *entries) {
  const char *names[] = {entries[0], "NoSuchEntry", entries[1]};
  char out[256], log[4000];
  snprintf(out, sizeof out, "%s/missing", tmpdir);
  int rc = rt_assemble(ptxas, "sm_90a", text, text_len, names, 3, 3, out, log, sizeof log);
  CHECK(rc != 0, "exit %d", rc);
  CHECK(strstr(log, "entry 'NoSuchEntry' is not in the PTX text") != NULL, "log: %s", log);
  CHECK(access(out, F_OK) != 0, "an image was written");
}

/* A bundle of two parts, then its damaged forms. */
static void test_damaged_bundles(void) {
  char b[64] = "TLSCBNDL";
  uint32_t count = 2;
  uint64_t s1 = 3, s2 = 5;
  memcpy(b + 8, &count, 4);
  memcpy(b + 12, &s1, 8);
  memcpy(b + 20, "abc", 3);
  memcpy(b + 23, &s2, 8);
  memcpy(b + 31, "defgh", 5);
  const char *parts[4];
  size_t sizes[4];
  CHECK(rt_image_parts(b, 36, parts, sizes, 4) == 2);
  CHECK(sizes[0] == 3 && !memcmp(parts[0], "abc", 3) && sizes[1] == 5 &&
        !memcmp(parts[1], "defgh", 5));
  CHECK(rt_image_parts(b, 35, parts, sizes, 4) == -1, "truncated");
  CHECK(rt_image_parts(b, 37, parts, sizes, 4) == -1, "trailing bytes");
  CHECK(rt_image_parts(b, 36, parts, sizes, 1) == -1, "more parts than room");
  uint64_t huge = UINT64_MAX;
  memcpy(b + 12, &huge, 8);
  CHECK(rt_image_parts(b, 36, parts, sizes, 4) == -1, "a size past the end");
  count = 0;
  memcpy(b + 8, &count, 4);
  CHECK(rt_image_parts(b, 36, parts, sizes, 4) == -1, "no part");
  CHECK(rt_image_parts("\177ELFxyz", 7, parts, sizes, 4) == 1 && sizes[0] == 7, "a cubin");
}

static void test_jobs(void) {
  setenv("TLSC_PTXAS_JOBS", "3", 1);
  CHECK(rt_assemble_jobs(7) == 3);
  CHECK(rt_assemble_jobs(2) == 2);
  setenv("TLSC_PTXAS_JOBS", "500", 1);
  CHECK(rt_assemble_jobs(7) == 7);
  CHECK(rt_assemble_jobs(200) == 64);
  setenv("TLSC_PTXAS_JOBS", "0", 1);
  CHECK(rt_assemble_jobs(7) == 1);
  setenv("TLSC_PTXAS_JOBS", "x", 1);
  CHECK(rt_assemble_jobs(7) == 1);
  unsetenv("TLSC_PTXAS_JOBS");
  CHECK(rt_assemble_jobs(1) == 1);
  CHECK(rt_assemble_jobs(0) == 1);
}

/* Another file split three ways (tests/gpu/fixtures: hand-written PTX
 * with nested blocks and a tensor-map kernel): every entry in one part. */
static void test_file(const char *path) {
  size_t len = 0;
  char *file = rt_read_file(path, &len);
  CHECK(file != NULL, "cannot read %s", path);
  if (!file) return;
  static char names[MAX_ENTRIES][128];
  const char *entries[MAX_ENTRIES];
  int n = entry_names(file, names);
  for (int i = 0; i < n; i++) entries[i] = names[i];
  char *saved = text;
  size_t saved_len = text_len;
  text = file, text_len = len;
  expect_parts(entries, n, 3, n < 3 ? n : 3);
  text = saved, text_len = saved_len;
  free(file);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_assemble DATA_DIR PTXAS [PTX...]\n");
    return 2;
  }
  ptxas = argv[2];
  if (!*ptxas || access(ptxas, X_OK)) {
    printf("no ptxas: skipped\n");
    return 77;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/specialized.ptx", argv[1]);
  text = rt_read_file(path, &text_len);
  if (!text || !mkdtemp(tmpdir)) {
    printf("cannot read %s or make a temporary folder\n", path);
    return 1;
  }
  char names[MAX_ENTRIES][128];
  const char *entries[MAX_ENTRIES];
  int n = entry_names(text, names);
  for (int i = 0; i < n; i++) entries[i] = names[i];
  CHECK(n == 7, "%d entries", n);
  expect_parts(entries, n, 1, 1);
  expect_parts(entries, n, 3, 3);
  expect_parts(entries, n, 12, 7);
  test_line_info();
  for (int i = 3; i < argc; i++) test_file(argv[i]);
  test_missing_entry(entries);
  test_ptxas_error();
  test_damaged_bundles();
  test_jobs();
  rmdir(tmpdir);
  free(text);
  printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
