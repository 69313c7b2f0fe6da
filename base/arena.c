/* arena.c: memory helpers shared by every layer.
 *
 * The arena hands out zeroed, 16-byte aligned blocks carved from large
 * chunks; everything is released at once by arena_free. AST and IR nodes
 * never need freeing one by one, so this is both simpler and faster than
 * malloc/free per node.
 */
#include "base/base.h"

#include <stdlib.h>
#include <string.h>

enum { CHUNK_SIZE = 64 * 1024, ALIGN = 16 };

typedef struct Chunk {
  struct Chunk *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
} Chunk;

struct Arena {
  Chunk *head;
  size_t bytes; /* the chunks' capacities, all together */
};

/* Out of memory is the one fatal error: there is nothing sensible to do. */
static void out_of_memory(size_t size) {
  fprintf(stderr, "tlsc: fatal error: out of memory (%zu bytes)\n", size);
  abort();
}

void *xmalloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) out_of_memory(size);
  return p;
}

void *xrealloc(void *p, size_t size) {
  void *q = realloc(p, size ? size : 1);
  if (!q) out_of_memory(size);
  return q;
}

Arena *arena_new(void) {
  Arena *a = xmalloc(sizeof *a);
  a->head = NULL;
  a->bytes = 0;
  return a;
}

void arena_free(Arena *a) {
  if (!a) return;
  for (Chunk *c = a->head, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  free(a);
}

/* Starts a new chunk big enough for `size` (large requests get their own). */
static Chunk *new_chunk(Arena *a, size_t size) {
  size_t cap = size > CHUNK_SIZE ? size : CHUNK_SIZE;
  Chunk *c = xmalloc(sizeof(Chunk) + cap);
  c->used = 0;
  c->cap = cap;
  c->next = a->head;
  a->head = c;
  a->bytes += cap;
  return c;
}

void *arena_alloc(Arena *a, size_t size) {
  size = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
  if (size == 0) size = ALIGN;
  Chunk *c = a->head;
  if (!c || c->cap - c->used < size) c = new_chunk(a, size);
  void *p = c->data + c->used;
  c->used += size;
  memset(p, 0, size);
  return p;
}

size_t arena_bytes(const Arena *a) { return a->bytes; }

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(Arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return arena_strdup(a, "");
  char *p = arena_alloc(a, (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}
