/* eval_tune.c: autotune values and -D values as text.
 *
 * An autotune value is any compile-time value Tilus passes to __init__
 * that tlsc can name an entry after and write in the metadata (None,
 * bools, ints, floats, plain strings, dtypes, lists and tuples of them;
 * eval_module.c checks each). Here: its text (the metadata's `config`
 * line, the IR, the notes), its part of an entry name, whether a -D value
 * selects it, and the Python literals -D gives an __init__ parameter. */
#include <stdlib.h>
#include <string.h>

#include "eval/eval_int.h"

enum { LITERAL_MAX_NESTING = 8 }; /* lists in lists of one -D value */

/* Python's repr without spaces ([1,4], (2,), True, None, 0.5, float16,
 * 'tn'): one field of the `config` line (docs/format.md). The value was
 * checked, so it has a repr and its strings hold no space. */
const char *ev_tune_text(Eval *E, const Value *v) {
  const char *r = ev_repr(E, v, (Span){0});
  char *out = arena_alloc(E->ar, strlen(r) + 1), *q = out;
  for (; *r; r++)
    if (*r != ' ') *q++ = *r;
  *q = 0;
  return out;
}

static const char *name_at(Eval *E, const Value *v, int depth) {
  if (v->kind == V_INT) {
    uint64_t mag = v->i < 0 ? 0 - (uint64_t)v->i : (uint64_t)v->i;
    return arena_printf(E->ar, "%s%llu", v->i < 0 ? "m" : "", (unsigned long long)mag);
  }
  if (v->kind == V_LIST || v->kind == V_TUPLE) {
    const char *s = v->n ? "" : "empty";
    for (int i = 0; i < v->n; i++)
      s = arena_printf(E->ar, "%s%.*s%s", s, i ? depth + 1 : 0, "xxxxxxxxxx",
                       name_at(E, v->items[i], depth + 1));
    return s;
  }
  const char *t = ev_tune_text(E, v);
  char *out = arena_alloc(E->ar, strlen(t) + 1), *q = out;
  for (; *t; t++)
    if (*t == '.' || *t == '-')
      *q++ = *t == '.' ? 'p' : 'm';
    else if (*t != '\'' && *t != '"' && *t != '+')
      *q++ = *t;
  *q = 0;
  return out;
}

/* PTX names hold letters, digits and `_`: an int as before (-5 is m5); a
 * list or tuple its items joined by x (1x4), by xx inside a nested one;
 * anything else its text with p for a point and m for a minus (0p5,
 * 1em05, True, float16), quotes and `+` dropped. The driver refuses two
 * entries that end up with one name. */
const char *ev_tune_name(Eval *E, const Value *v) { return name_at(E, v, 0); }

/* Spaces and quotes dropped, a tuple's parentheses read as a list's
 * brackets: how a -D text is compared with a value's text. */
static const char *normal_text(Eval *E, const char *s) {
  char *out = arena_alloc(E->ar, strlen(s) + 1), *q = out;
  for (; *s; s++) {
    if (*s == ' ' || *s == '\'' || *s == '"') continue;
    if ((*s == ')' || *s == ']') && q > out && q[-1] == ',') q--; /* (1,) */
    *q++ = *s == '(' ? '[' : *s == ')' ? ']' : *s;
  }
  *q = 0;
  return out;
}

/* An integer -D as Python compares it (1 == True == 1.0); a word or a
 * literal (True, float16, [1, 4], 0.50) by the text of its value, so that
 * `-D warp_spatial=(1,4)` selects the point [1, 4] too. */
bool ev_define_selects(Eval *E, const EvalDefine *d, const Value *v) {
  if (!d->word) {
    if (v->kind == V_FLOAT) return v->f == (double)d->value;
    return (v->kind == V_INT || v->kind == V_BOOL) && v->i == d->value;
  }
  Value *lit = ev_define_literal(E, d->word);
  const char *want = lit ? ev_tune_text(E, lit) : d->word;
  return strcmp(normal_text(E, want), normal_text(E, ev_tune_text(E, v))) == 0;
}

/* ------------------------------------------------------------ literals */

static const char *skip_blanks(const char *s) {
  while (*s == ' ') s++;
  return s;
}

static Value *parse_literal(Eval *E, const char **p, int depth);

/* [a, b] or (a, b) at *p; (a) is a; NULL when malformed. */
static Value *parse_seq(Eval *E, const char **p, int depth) {
  const char *s = *p;
  char close = *s == '[' ? ']' : ')';
  VKind kind = *s == '[' ? V_LIST : V_TUPLE;
  Value *items[64];
  int n = 0;
  bool comma = false;
  s = skip_blanks(s + 1);
  while (*s != close) {
    if (n == (int)(sizeof items / sizeof items[0])) return NULL;
    Value *x = parse_literal(E, &s, depth + 1);
    if (!x) return NULL;
    items[n++] = x;
    s = skip_blanks(s);
    if (*s == ',') {
      comma = true;
      s = skip_blanks(s + 1);
    } else if (*s != close) {
      return NULL;
    }
  }
  *p = s + 1;
  if (kind == V_TUPLE && n == 1 && !comma) return items[0];
  Value *v = v_seq(E, kind, n);
  memcpy(v->items, items, sizeof(Value *) * (size_t)n);
  return v;
}

/* A word: True, False, None or a dtype name. */
static Value *parse_word(Eval *E, const char **p) {
  const char *s = *p;
  size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
  const char *w = arena_strndup(E->ar, s, n);
  *p = s + n;
  if (strcmp(w, "True") == 0 || strcmp(w, "False") == 0) return v_bool(E, w[0] == 'T');
  if (strcmp(w, "None") == 0) return v_none(E);
  return ev_dtype_named(E, w);
}

/* A decimal int, or a float (1.5, 1e-5, -2.0). */
static Value *parse_number(Eval *E, const char **p) {
  const char *s = *p;
  char *end;
  long long i = strtoll(s, &end, 10);
  if (end > s && !strchr(".eE", *end)) {
    *p = end;
    return v_int(E, i);
  }
  double f = strtod(s, &end);
  if (end == s) return NULL;
  *p = end;
  return v_float(E, f);
}

static Value *parse_literal(Eval *E, const char **p, int depth) {
  const char *s = skip_blanks(*p);
  if (depth > LITERAL_MAX_NESTING) return NULL;
  Value *v = NULL;
  if (*s == '[' || *s == '(') {
    v = parse_seq(E, &s, depth);
  } else if (*s == '\'' || *s == '"') {
    const char *end = strchr(s + 1, *s);
    if (!end) return NULL;
    v = v_str(E, arena_strndup(E->ar, s + 1, (size_t)(end - s - 1)));
    s = end + 1;
  } else if (*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')) {
    v = parse_word(E, &s);
  } else {
    v = parse_number(E, &s);
  }
  *p = s;
  return v;
}

/* The value of a -D text that is a Python literal (1.5, True, None,
 * 'tn', (16, 16), [float16, 4], a dtype name), or NULL. */
Value *ev_define_literal(Eval *E, const char *text) {
  const char *s = text;
  Value *v = parse_literal(E, &s, 0);
  return v && *skip_blanks(s) == 0 ? v : NULL;
}
