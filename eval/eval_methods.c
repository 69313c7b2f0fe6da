/* eval_methods.c: the methods of compile-time lists, tuples and strings,
 * with Python's meanings: xs.append(x), xs.sort(key=, reverse=),
 * t.index(x), ",".join(names), "{}x{}".format(m, n) ..., and the builtins
 * around them: map, filter, pow, chr, ord, hex, bin, oct.
 *
 * A list is mutable and shared, as in Python: `ys = xs; ys.append(1)`
 * changes xs too, and so do `xs += other` and `xs *= n`
 * (ev_inplace_binop). Its items array grows by doubling; Value.i holds the
 * capacity (0: exactly n, as every other list is made). A `for` over a
 * list reads its length and items at each step, so a loop that appends to
 * the list it walks sees the new items, as Python's list iterator does
 * (and the step budget ends one that never stops).
 */
#include <ctype.h>
#include <string.h>

#include "eval/eval_int.h"

static const char *const LIST_METHODS[] = {"append", "extend", "insert",  "pop",  "remove", "clear",
                                           "index",  "count",  "reverse", "sort", "copy",   NULL};
static const char *const TUPLE_METHODS[] = {"index", "count", NULL};
static const char *const STR_METHODS[] = {
    "join",     "split",   "strip", "lstrip", "rstrip", "upper",  "lower",   "startswith",
    "endswith", "replace", "find",  "index",  "count",  "format", "isdigit", NULL};

Value *ev_seq_attr(Eval *E, Value *obj, const char *name, Span sp) {
  const char *const *names = obj->kind == V_LIST    ? LIST_METHODS
                             : obj->kind == V_TUPLE ? TUPLE_METHODS
                                                    : STR_METHODS;
  for (int i = 0; names[i]; i++)
    if (strcmp(name, names[i]) == 0) {
      Value *m = v_builtin(E, B_SEQ_METHOD, obj);
      m->s = names[i];
      return m;
    }
  ev_error(E, sp, "'%s' object has no attribute '%s'", v_type_name(obj), name);
}

/* ------------------------------------------------------------ lists */

/* Room for `more` items after the list's n. */
static void list_reserve(Eval *E, Value *l, int64_t more, Span sp) {
  int64_t cap = l->i > l->n ? l->i : l->n, need = (int64_t)l->n + more;
  if (need <= cap) return;
  if (need > EV_MAX_LIST_LEN)
    ev_error(E, sp, "compile-time list is too long (over %d items)", EV_MAX_LIST_LEN);
  int64_t grown = cap * 2 > need ? cap * 2 : need;
  if (grown > EV_MAX_LIST_LEN) grown = EV_MAX_LIST_LEN;
  ev_charge(E, l->n / 8, sp); /* the copy */
  Value **items = arena_alloc(E->ar, sizeof(Value *) * (size_t)grown);
  memcpy(items, l->items, sizeof(Value *) * (size_t)l->n);
  l->items = items;
  l->i = grown;
}

/* An index argument of a list method (negative: from the end), clamped to
 * [0, n] as list.insert and slicing clamp. */
static int64_t clamp_index(Eval *E, Value *v, int64_t n, Span sp) {
  int64_t i = v_to_int(E, v, sp, "list index");
  if (i < 0) i += n;
  return i < 0 ? 0 : i > n ? n : i;
}

/* The first position in [lo, hi) of items equal to x, or -1. */
static int64_t find_item(Eval *E, Value **items, int64_t lo, int64_t hi, Value *x, Span sp) {
  for (int64_t i = lo; i < hi; i++) {
    ev_step(E, sp);
    if (ev_equal(E, items[i], x, sp)) return i;
  }
  return -1;
}

/* xs.index(x[, start[, end]]) and xs.count(x), of a list or a tuple. */
static Value *seq_index_count(Eval *E, Value *seq, const char *m, Args *a, Span sp) {
  bool index = m[0] == 'i';
  ev_arg_count(E, a, sp, m, 1, index ? 3 : 1);
  if (!index) {
    int64_t c = 0;
    for (int i = 0; i < seq->n; i++) {
      ev_step(E, sp);
      c += ev_equal(E, seq->items[i], a->pos[0], sp);
    }
    return v_int(E, c);
  }
  int64_t lo = a->npos > 1 ? clamp_index(E, a->pos[1], seq->n, a->pos_span[1]) : 0;
  int64_t hi = a->npos > 2 ? clamp_index(E, a->pos[2], seq->n, a->pos_span[2]) : seq->n;
  int64_t at = find_item(E, seq->items, lo, hi, a->pos[0], sp);
  if (at < 0)
    ev_error(E, a->pos_span[0], "ValueError: %s is not in %s", ev_repr(E, a->pos[0], sp),
             seq->kind == V_LIST ? "list" : "tuple");
  return v_int(E, at);
}

/* Appends the first n items of src (a list or tuple; l itself too) to l. */
static void list_append_from(Eval *E, Value *l, Value *src, int n, Span sp) {
  list_reserve(E, l, n, sp);
  ev_charge(E, n / 8, sp);
  memcpy(&l->items[l->n], src->items, sizeof(Value *) * (size_t)n);
  l->n += n;
}

static void list_insert(Eval *E, Value *l, int64_t at, Value *x, Span sp) {
  list_reserve(E, l, 1, sp);
  memmove(&l->items[at + 1], &l->items[at], sizeof(Value *) * (size_t)(l->n - at));
  l->items[at] = x;
  l->n++;
}

void ev_list_set_slice(Eval *E, Value *l, int64_t start, int64_t stride, uint64_t count, Value *src,
                       Span sp) {
  Value *from = ev_iterate_list(E, src, sp);
  int64_t m = from->n;
  Value **items = arena_alloc(E->ar, sizeof(Value *) * (size_t)(m ? m : 1));
  memcpy(items, from->items, sizeof(Value *) * (size_t)m); /* xs[1:2] = xs */
  ev_charge(E, (int64_t)(count + (uint64_t)m) / 8, sp);
  if (stride != 1) {
    if ((uint64_t)m != count)
      ev_error(E, sp,
               "ValueError: attempt to assign sequence of size %lld to extended slice of size "
               "%llu",
               (long long)m, (unsigned long long)count);
    for (uint64_t k = 0; k < count; k++) l->items[start + (int64_t)k * stride] = items[k];
    return;
  }
  int64_t tail = l->n - start - (int64_t)count;
  if (m > (int64_t)count) list_reserve(E, l, m - (int64_t)count, sp);
  memmove(&l->items[start + m], &l->items[start + (int64_t)count], sizeof(Value *) * (size_t)tail);
  memcpy(&l->items[start], items, sizeof(Value *) * (size_t)m);
  l->n = (int)(start + m + tail);
}

static Value *list_remove_at(Value *l, int64_t at) {
  Value *x = l->items[at];
  memmove(&l->items[at], &l->items[at + 1], sizeof(Value *) * (size_t)(l->n - at - 1));
  l->n--;
  return x;
}

/* xs.sort(key=None, reverse=False): sorted() in place. */
static Value *list_sort(Eval *E, Value *l, Args *a, Span sp) {
  static const char *const names[] = {"key", "reverse", NULL};
  if (a->npos) ev_error(E, sp, "sort() takes no positional arguments");
  Value *v[2];
  ev_bind_args(E, a, sp, "sort", names, 0, v);
  ev_charge(E, l->n, sp);
  ev_sort_items(E, l->items, l->n, v[0], v[1] && v_truthy(E, v[1], sp), sp);
  return v_none(E);
}

static Value *list_method(Eval *E, Value *l, const char *m, Args *a, Span sp) {
  if (!strcmp(m, "index") || !strcmp(m, "count")) return seq_index_count(E, l, m, a, sp);
  if (!strcmp(m, "sort")) return list_sort(E, l, a, sp);
  if (!strcmp(m, "append")) {
    ev_arg_count(E, a, sp, m, 1, 1);
    list_insert(E, l, l->n, a->pos[0], sp);
  } else if (!strcmp(m, "extend")) {
    ev_arg_count(E, a, sp, m, 1, 1);
    Value *src = ev_iterate_list(E, a->pos[0], a->pos_span[0]);
    list_append_from(E, l, src, src->n, sp); /* xs.extend(xs) adds the items it had */
  } else if (!strcmp(m, "insert")) {
    ev_arg_count(E, a, sp, m, 2, 2);
    list_insert(E, l, clamp_index(E, a->pos[0], l->n, a->pos_span[0]), a->pos[1], sp);
  } else if (!strcmp(m, "pop")) {
    ev_arg_count(E, a, sp, m, 0, 1);
    if (l->n == 0) ev_error(E, sp, "IndexError: pop from empty list");
    int64_t at = a->npos ? v_to_int(E, a->pos[0], a->pos_span[0], "list index") : -1;
    if (at < 0) at += l->n;
    if (at < 0 || at >= l->n) ev_error(E, a->pos_span[0], "IndexError: pop index out of range");
    return list_remove_at(l, at);
  } else if (!strcmp(m, "remove")) {
    ev_arg_count(E, a, sp, m, 1, 1);
    int64_t at = find_item(E, l->items, 0, l->n, a->pos[0], sp);
    if (at < 0) ev_error(E, a->pos_span[0], "ValueError: list.remove(x): x not in list");
    list_remove_at(l, at);
  } else if (!strcmp(m, "clear")) {
    ev_arg_count(E, a, sp, m, 0, 0);
    l->n = 0;
  } else if (!strcmp(m, "reverse")) {
    ev_arg_count(E, a, sp, m, 0, 0);
    for (int i = 0, j = l->n - 1; i < j; i++, j--) {
      Value *t = l->items[i];
      l->items[i] = l->items[j], l->items[j] = t;
    }
  } else { /* copy */
    ev_arg_count(E, a, sp, m, 0, 0);
    ev_charge(E, l->n / 8, sp);
    Value *r = v_seq(E, V_LIST, l->n);
    memcpy(r->items, l->items, sizeof(Value *) * (size_t)l->n);
    return r;
  }
  return v_none(E);
}

Value *ev_inplace_binop(Eval *E, int op, Value *cur, Value *rhs, Span sp) {
  if (cur->kind != V_LIST || (op != '+' && op != '*')) return ev_eval_binop(E, op, cur, rhs, sp);
  if (op == '+') { /* xs += iterable: extend, as list.__iadd__ */
    Value *src = ev_iterate_list(E, rhs, sp);
    list_append_from(E, cur, src, src->n, sp);
    return cur;
  }
  if (rhs->kind != V_INT && rhs->kind != V_BOOL) /* a run-time count, a float ... */
    return ev_eval_binop(E, op, cur, rhs, sp);
  int64_t times = rhs->i < 0 ? 0 : rhs->i, n = cur->n;
  if (times > 1 && n * times > EV_MAX_LIST_LEN)
    ev_error(E, sp, "compile-time list is too long (over %d items)", EV_MAX_LIST_LEN);
  if (times == 0) cur->n = 0;
  for (int64_t k = 1; k < times; k++) list_append_from(E, cur, cur, (int)n, sp);
  return cur;
}

/* ------------------------------------------------------------ strings */

static const char *str_arg(Eval *E, Args *a, int i, const char *m) {
  if (a->pos[i]->kind != V_STR)
    ev_error(E, a->pos_span[i], "%s() argument must be str, not '%s'", m, v_type_name(a->pos[i]));
  return a->pos[i]->s;
}

static Value *new_str(Eval *E, const char *s, size_t len, Span sp) {
  if (len > EV_MAX_STR_LEN)
    ev_error(E, sp, "compile-time string is too long (over %d bytes)", EV_MAX_STR_LEN);
  ev_charge(E, (int64_t)len / 64, sp);
  char *t = arena_alloc(E->ar, len + 1);
  memcpy(t, s, len);
  t[len] = 0;
  return v_str(E, t);
}

Value *ev_str_join(Eval *E, Value *seq, const char *sep, Span item_sp, Span sp) {
  size_t len = 0, ls = strlen(sep);
  for (int i = 0; i < seq->n; i++) {
    if (seq->items[i]->kind != V_STR)
      ev_error(E, item_sp, "sequence item %d: expected str instance, %s found", i,
               v_type_name(seq->items[i]));
    len += strlen(seq->items[i]->s) + (i ? ls : 0);
    if (len > EV_MAX_STR_LEN)
      ev_error(E, sp, "compile-time string is too long (over %d bytes)", EV_MAX_STR_LEN);
  }
  ev_charge(E, (int64_t)len / 64, sp);
  char *t = arena_alloc(E->ar, len + 1), *p = t;
  for (int i = 0; i < seq->n; i++) {
    if (i) memcpy(p, sep, ls), p += ls;
    size_t n = strlen(seq->items[i]->s);
    memcpy(p, seq->items[i]->s, n), p += n;
  }
  *p = 0;
  return v_str(E, t);
}

/* sep.join(strings) */
static Value *str_join(Eval *E, const char *sep, Args *a, Span sp) {
  ev_arg_count(E, a, sp, "join", 1, 1);
  return ev_str_join(E, ev_iterate_list(E, a->pos[0], a->pos_span[0]), sep, a->pos_span[0], sp);
}

/* s.split(sep=None, maxsplit=-1): by runs of whitespace without sep. */
static Value *str_split(Eval *E, const char *s, Args *a, Span sp) {
  static const char *const names[] = {"sep", "maxsplit", NULL};
  Value *v[2];
  ev_bind_args(E, a, sp, "split", names, 0, v);
  const char *sep = NULL;
  if (v[0] && v[0]->kind != V_NONE) {
    if (v[0]->kind != V_STR) ev_error(E, sp, "must be str or None, not %s", v_type_name(v[0]));
    sep = v[0]->s;
    if (!*sep) ev_error(E, sp, "ValueError: empty separator");
  }
  int64_t max = v[1] ? v_to_int(E, v[1], sp, "maxsplit") : -1;
  Value *r = v_seq(E, V_LIST, 0);
  const char *p = s;
  if (!sep) {
    while (*p) {
      while (*p && isspace((unsigned char)*p)) p++;
      if (!*p) break;
      const char *q = p;
      if (max >= 0 && r->n >= max) {
        q = p + strlen(p); /* the rest, trailing blanks dropped */
        while (q > p && isspace((unsigned char)q[-1])) q--;
      } else {
        while (*q && !isspace((unsigned char)*q)) q++;
      }
      list_insert(E, r, r->n, new_str(E, p, (size_t)(q - p), sp), sp);
      p = q;
      if (max >= 0 && r->n > max) break;
    }
    return r;
  }
  size_t ls = strlen(sep);
  for (;;) {
    const char *q = max >= 0 && r->n >= max ? NULL : strstr(p, sep);
    if (!q) {
      list_insert(E, r, r->n, new_str(E, p, strlen(p), sp), sp);
      return r;
    }
    list_insert(E, r, r->n, new_str(E, p, (size_t)(q - p), sp), sp);
    p = q + ls;
  }
}

/* s.strip([chars]), lstrip, rstrip: whitespace without chars. */
static Value *str_strip(Eval *E, const char *s, const char *m, Args *a, Span sp) {
  ev_arg_count(E, a, sp, m, 0, 1);
  const char *chars = a->npos && a->pos[0]->kind != V_NONE ? str_arg(E, a, 0, m) : NULL;
  const char *p = s, *q = s + strlen(s);
#define STRIPPED(c) (chars ? strchr(chars, (c)) != NULL : isspace((unsigned char)(c)) != 0)
  if (m[0] != 'r')
    while (p < q && STRIPPED(*p)) p++;
  if (m[0] != 'l')
    while (q > p && STRIPPED(q[-1])) q--;
#undef STRIPPED
  return new_str(E, p, (size_t)(q - p), sp);
}

/* s.startswith(prefix) / endswith(suffix): a string or a tuple of them. */
static Value *str_affix(Eval *E, const char *s, const char *m, Args *a, Span sp) {
  ev_arg_count(E, a, sp, m, 1, 1);
  Value *w = a->pos[0];
  int n = w->kind == V_TUPLE ? w->n : 1;
  size_t ls = strlen(s);
  for (int i = 0; i < n; i++) {
    Value *x = w->kind == V_TUPLE ? w->items[i] : w;
    if (x->kind != V_STR)
      ev_error(E, a->pos_span[0], "%s first arg must be str or a tuple of str, not %s", m,
               v_type_name(x));
    size_t lx = strlen(x->s);
    if (lx <= ls && !strncmp(m[0] == 's' ? s : s + ls - lx, x->s, lx)) return v_bool(E, true);
  }
  return v_bool(E, false);
}

/* s.replace(old, new[, count]) */
static Value *str_replace(Eval *E, const char *s, Args *a, Span sp) {
  ev_arg_count(E, a, sp, "replace", 2, 3);
  const char *old = str_arg(E, a, 0, "replace"), *rep = str_arg(E, a, 1, "replace");
  int64_t count = a->npos > 2 ? v_to_int(E, a->pos[2], a->pos_span[2], "count") : -1;
  size_t lo = strlen(old), lr = strlen(rep), len = 0;
  char *out = NULL;
  size_t cap = 0;
  const char *p = s;
  for (int64_t done = 0;; done++) {
    const char *q = NULL;
    if (count < 0 || done < count)
      q = lo ? strstr(p, old) : (done <= (int64_t)strlen(s) ? p : NULL);
    size_t keep = q ? (size_t)(q - p) : strlen(p);
    size_t need = len + keep + (q ? lr : 0) + 1;
    if (need > EV_MAX_STR_LEN + 1)
      ev_error(E, sp, "compile-time string is too long (over %d bytes)", EV_MAX_STR_LEN);
    if (need > cap) {
      size_t grown = need * 2;
      char *t = arena_alloc(E->ar, grown);
      if (len) memcpy(t, out, len);
      out = t, cap = grown;
    }
    memcpy(out + len, p, keep), len += keep;
    if (!q) break;
    memcpy(out + len, rep, lr), len += lr;
    if (lo) {
      p = q + lo;
    } else { /* between characters: copy one and go on */
      if (!*p) break;
      out[len++] = *p++;
    }
    ev_step(E, sp);
  }
  out[len] = 0; /* need counted its byte */
  ev_charge(E, (int64_t)len / 64, sp);
  return v_str(E, out);
}

/* s.find(sub), s.index(sub), s.count(sub) */
static Value *str_search(Eval *E, const char *s, const char *m, Args *a, Span sp) {
  ev_arg_count(E, a, sp, m, 1, 1);
  const char *sub = str_arg(E, a, 0, m);
  ev_charge(E, (int64_t)strlen(s) / 64, sp);
  if (!strcmp(m, "count")) {
    size_t ls = strlen(sub);
    if (!ls) return v_int(E, (int64_t)strlen(s) + 1);
    int64_t c = 0;
    for (const char *p = strstr(s, sub); p; p = strstr(p + ls, sub)) c++;
    return v_int(E, c);
  }
  const char *p = strstr(s, sub);
  if (!p && m[0] == 'i') ev_error(E, a->pos_span[0], "ValueError: substring not found");
  return v_int(E, p ? (int64_t)(p - s) : -1);
}

/* The value a replacement field names: {} (the next positional), {0},
 * {name}, each optionally followed by .attr or [index] (not supported:
 * an error). */
static Value *format_field(Eval *E, const char *name, size_t len, int *next, Args *a, Span sp) {
  if (len == 0) {
    if (*next < 0)
      ev_error(E, sp, "ValueError: cannot switch from manual field numbering to automatic");
    if (*next >= a->npos) ev_error(E, sp, "IndexError: Replacement index %d out of range", *next);
    return a->pos[(*next)++];
  }
  if (isdigit((unsigned char)name[0])) {
    int64_t i = 0;
    for (size_t k = 0; k < len; k++) {
      if (!isdigit((unsigned char)name[k]) || i > 100000)
        ev_error(E, sp, "str.format(): field '%.*s' is not a number or a name", (int)len, name);
      i = i * 10 + (name[k] - '0');
    }
    if (*next > 0)
      ev_error(E, sp, "ValueError: cannot switch from automatic field numbering to manual");
    *next = -1;
    if (i >= a->npos)
      ev_error(E, sp, "IndexError: Replacement index %lld out of range", (long long)i);
    return a->pos[i];
  }
  for (int k = 0; k < a->nkw; k++)
    if (strlen(a->kw_name[k]) == len && !strncmp(a->kw_name[k], name, len)) return a->kw[k];
  ev_error(E, sp, "KeyError: '%.*s'", (int)len, name);
}

/* fmt.format(*args, **kwargs): {field!conv:spec}, {{ and }}; a spec holds
 * no nested fields. */
static Value *str_format(Eval *E, const char *fmt, Args *a, Span sp) {
  const char *s = "";
  int next = 0;
  for (const char *p = fmt; *p;) {
    const char *piece;
    if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
      piece = p[0] == '{' ? "{" : "}";
      p += 2;
    } else if (*p == '}') {
      ev_error(E, sp, "ValueError: Single '}' encountered in format string");
    } else if (*p == '{') {
      const char *end = strchr(p, '}');
      if (!end) ev_error(E, sp, "ValueError: Single '{' encountered in format string");
      const char *f = p + 1, *conv = NULL, *spec = "";
      size_t flen = (size_t)(end - f);
      const char *colon = memchr(f, ':', flen), *bang = memchr(f, '!', flen);
      if (colon) spec = arena_printf(E->ar, "%.*s", (int)(end - colon - 1), colon + 1);
      const char *name_end = colon ? colon : end;
      if (bang && bang < name_end) conv = bang + 1, name_end = bang;
      if (memchr(f, '{', flen) || memchr(f, '.', (size_t)(name_end - f)) ||
          memchr(f, '[', (size_t)(name_end - f)))
        ev_error(E, sp, "str.format(): nested fields, attributes and indexes are not supported");
      Value *v = format_field(E, f, (size_t)(name_end - f), &next, a, sp);
      if (v->kind == V_EXPR || v->kind == V_TENSOR || v->kind == V_REF)
        ev_error(E, sp,
                 "str.format() makes a compile-time string: it cannot hold a run-time value "
                 "(self.printf prints one)");
      if (conv && (*conv == 'r' || *conv == 'a'))
        v = v_str(E, ev_repr(E, v, sp));
      else if (conv && *conv == 's')
        v = v_str(E, ev_str(E, v, sp));
      else if (conv)
        ev_error(E, sp, "ValueError: Unknown conversion specifier %c", *conv);
      piece = ev_format(E, v, spec, sp);
      p = end + 1;
    } else {
      const char *q = p;
      while (*q && *q != '{' && *q != '}') q++;
      piece = arena_printf(E->ar, "%.*s", (int)(q - p), p);
      p = q;
    }
    s = ev_str_concat(E, s, piece, sp);
  }
  return v_str(E, s);
}

static Value *str_method(Eval *E, const char *s, const char *m, Args *a, Span sp) {
  if (!strcmp(m, "join")) return str_join(E, s, a, sp);
  if (!strcmp(m, "split")) return str_split(E, s, a, sp);
  if (strstr(m, "strip")) return str_strip(E, s, m, a, sp);
  if (!strcmp(m, "startswith") || !strcmp(m, "endswith")) return str_affix(E, s, m, a, sp);
  if (!strcmp(m, "replace")) return str_replace(E, s, a, sp);
  if (!strcmp(m, "format")) return str_format(E, s, a, sp);
  if (!strcmp(m, "find") || !strcmp(m, "index") || !strcmp(m, "count"))
    return str_search(E, s, m, a, sp);
  ev_arg_count(E, a, sp, m, 0, 0);
  size_t len = strlen(s);
  if (!strcmp(m, "isdigit")) {
    bool digits = len > 0;
    for (size_t i = 0; i < len; i++) digits = digits && isdigit((unsigned char)s[i]);
    return v_bool(E, digits);
  }
  Value *r = new_str(E, s, len, sp); /* upper, lower: ASCII letters */
  char *t = (char *)r->s;
  for (size_t i = 0; i < len; i++)
    t[i] = (char)(m[0] == 'u' ? toupper((unsigned char)t[i]) : tolower((unsigned char)t[i]));
  return r;
}

Value *ev_call_seq_method(Eval *E, Value *fn, Args *a, Span sp) {
  Value *self = fn->self;
  if (self->kind == V_STR) return str_method(E, self->s, fn->s, a, sp);
  if (self->kind == V_TUPLE) return seq_index_count(E, self, fn->s, a, sp);
  return list_method(E, self, fn->s, a, sp);
}

/* ------------------------------------------------------------ builtins */

/* One UTF-8 code point of s (a string of exactly one), or -1. */
static int64_t code_point(const char *s) {
  const unsigned char *u = (const unsigned char *)s;
  int n = u[0] < 0x80 ? 1 : u[0] >= 0xF0 ? 4 : u[0] >= 0xE0 ? 3 : u[0] >= 0xC0 ? 2 : 0;
  if (!n || strlen(s) != (size_t)n) return -1;
  int64_t c = n == 1 ? u[0] : u[0] & (0x7F >> n);
  for (int i = 1; i < n; i++) {
    if ((u[i] & 0xC0) != 0x80) return -1;
    c = c << 6 | (u[i] & 0x3F);
  }
  return c;
}

const char *ev_chr(Eval *E, int64_t c, Span sp) {
  if (c < 0 || c > 0x10FFFF) ev_error(E, sp, "ValueError: chr() arg not in range(0x110000)");
  char t[5] = {0};
  if (c < 0x80) {
    t[0] = (char)c;
  } else if (c < 0x800) {
    t[0] = (char)(0xC0 | c >> 6), t[1] = (char)(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    t[0] = (char)(0xE0 | c >> 12), t[1] = (char)(0x80 | (c >> 6 & 0x3F));
    t[2] = (char)(0x80 | (c & 0x3F));
  } else {
    t[0] = (char)(0xF0 | c >> 18), t[1] = (char)(0x80 | (c >> 12 & 0x3F));
    t[2] = (char)(0x80 | (c >> 6 & 0x3F)), t[3] = (char)(0x80 | (c & 0x3F));
  }
  return arena_strdup(E->ar, t); /* chr(0) is one NUL: kept as "" */
}

bool ev_one_char(const char *s) { return code_point(s) >= 0; }

static Value *b_chr(Eval *E, Args *a, Span sp) {
  ev_arg_count(E, a, sp, "chr", 1, 1);
  int64_t c = v_to_int(E, a->pos[0], a->pos_span[0], "chr()");
  const char *t = ev_chr(E, c, a->pos_span[0]);
  return new_str(E, t, strlen(t) ? strlen(t) : 1, sp);
}

/* pow(a, b) is a ** b; pow(a, b, m) for compile-time integers. */
static Value *b_pow(Eval *E, Args *a, Span sp) {
  ev_arg_count(E, a, sp, "pow", 2, 3);
  if (a->npos == 2) return ev_eval_binop(E, TOK_POW, a->pos[0], a->pos[1], sp);
  int64_t b = v_to_int(E, a->pos[0], a->pos_span[0], "pow() base");
  int64_t e = v_to_int(E, a->pos[1], a->pos_span[1], "pow() exponent");
  int64_t m = v_to_int(E, a->pos[2], a->pos_span[2], "pow() modulus");
  if (m == 0) ev_error(E, a->pos_span[2], "ValueError: pow() 3rd argument cannot be 0");
  if (e < 0)
    ev_error(E, a->pos_span[1], "pow() with a modulus and a negative exponent is not supported");
  __int128 r = 1 % m, x = ((b % m) + m) % m;
  for (; e > 0; e /= 2) {
    if (e % 2) r = r * x % m;
    x = x * x % m;
  }
  if (r != 0 && (r < 0) != (m < 0)) r += m; /* the modulus's sign, as Python */
  return v_int(E, (int64_t)r);
}

/* map(f, xs, ...) and filter(f or None, xs): their lists. */
static Value *b_map_filter(Eval *E, Builtin bi, Args *a, Span sp) {
  const char *fname = bi == B_MAP ? "map" : "filter";
  ev_arg_count(E, a, sp, fname, 2, bi == B_MAP ? 16 : 2);
  int nseq = a->npos - 1;
  Value *seqs[15];
  int n = -1;
  for (int i = 0; i < nseq; i++) {
    seqs[i] = ev_iterate_list(E, a->pos[i + 1], a->pos_span[i + 1]);
    if (n < 0 || seqs[i]->n < n) n = seqs[i]->n; /* the shortest, as zip */
  }
  Value *f = a->pos[0], *r = v_seq(E, V_LIST, 0);
  for (int k = 0; k < n; k++) {
    ev_step(E, sp);
    Value *args[15];
    Span spans[15];
    for (int i = 0; i < nseq; i++) args[i] = seqs[i]->items[k], spans[i] = a->pos_span[i + 1];
    Args call = {.pos = args, .pos_span = spans, .npos = nseq};
    if (bi == B_MAP) {
      list_insert(E, r, r->n, ev_call_value(E, f, &call, sp), sp);
      continue;
    }
    Value *keep = f->kind == V_NONE ? args[0] : ev_call_value(E, f, &call, sp);
    if (v_truthy(E, keep, sp)) list_insert(E, r, r->n, args[0], sp);
  }
  return r;
}

Value *ev_call_seq_builtin(Eval *E, Builtin bi, Args *a, Span sp) {
  switch (bi) {
  case B_POW:
    return b_pow(E, a, sp);
  case B_CHR:
    return b_chr(E, a, sp);
  case B_ORD: {
    ev_arg_count(E, a, sp, "ord", 1, 1);
    Value *x = a->pos[0];
    if (x->kind != V_STR)
      ev_error(E, a->pos_span[0], "ord() expected string of length 1, but %s found",
               v_type_name(x));
    int64_t c = code_point(x->s);
    if (c < 0)
      ev_error(E, a->pos_span[0], "ord() expected a character, but string of length %d found",
               ev_iterate_list(E, x, a->pos_span[0])->n);
    return v_int(E, c);
  }
  case B_HEX:
  case B_BIN:
  case B_OCT: {
    const char *fname = bi == B_HEX ? "hex" : bi == B_BIN ? "bin" : "oct";
    ev_arg_count(E, a, sp, fname, 1, 1);
    if (a->pos[0]->kind != V_INT && a->pos[0]->kind != V_BOOL)
      ev_error(E, a->pos_span[0], "'%s' object cannot be interpreted as an integer",
               v_type_name(a->pos[0]));
    return v_str(E, ev_format(E, a->pos[0], bi == B_HEX ? "#x" : bi == B_BIN ? "#b" : "#o", sp));
  }
  default:
    return b_map_filter(E, bi, a, sp);
  }
}
