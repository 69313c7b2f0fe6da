/* tlsrun_data.c: random inputs, conversions to and from fp16, bf16 and
 * fp8 (e4m3, e5m2), and the host reference (double precision) that tlsrun
 * checks every matmul against, and falls back on without cuBLAS. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tlsrun/tlsrun.h"

void rng_seed(Rng *r, uint64_t seed) {
  r->s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
}

/* xorshift64*: small, seeded, and fresh per run. */
float rng_uniform(Rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  uint64_t x = r->s * 0x2545F4914F6CDD1Dull;
  return (float)((double)(x >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

/* Round to nearest even, with overflow to Inf and subnormals. */
uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  uint32_t abs = x & 0x7FFFFFFF;
  if (abs >= 0x7F800000) return sign | (abs > 0x7F800000 ? 0x7E00 : 0x7C00);
  if (abs >= 0x477FF000) return sign | 0x7C00; /* rounds past 65504 */
  if (abs < 0x38800000) {                      /* subnormal half */
    float v;
    memcpy(&v, &abs, 4);
    return sign | (uint16_t)lrintf(v * 16777216.0f); /* v / 2^-24 */
  }
  uint32_t mant = abs & 0x7FFFFF, exp = (abs >> 23) - 112;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
  return sign | (uint16_t)h;
}

float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1F, mant = h & 0x3FF, x;
  if (exp == 0) {
    float v = ldexpf((float)mant, -24);
    return sign ? -v : v;
  }
  if (exp == 31)
    x = sign | 0x7F800000 | (mant << 13);
  else
    x = sign | ((exp + 112) << 23) | (mant << 13);
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* --------------------------------------------------- element types */

ElemType elem_type(const char *name) {
  static const char *const NAMES[] = {"f16", "bf16", "f8e4m3", "f8e5m2"};
  for (int i = 0; i < 4; i++)
    if (!strcmp(name, NAMES[i])) return (ElemType)i;
  return ET_NONE;
}

const char *elem_name(ElemType t) {
  static const char *const NAMES[] = {"f16", "bf16", "f8e4m3", "f8e5m2", "?"};
  return NAMES[t <= ET_NONE ? t : ET_NONE];
}

int elem_bytes(ElemType t) { return t == ET_F16 || t == ET_BF16 ? 2 : 1; }

bool elem_is_fp8(ElemType t) { return t == ET_E4M3 || t == ET_E5M2; }

/* fp8 formats: mantissa bits, exponent bias, largest finite value (e4m3
 * has no infinities: 448; e5m2 is IEEE-like: 57344). */
static void fp8_format(ElemType t, int *mbits, int *bias, float *max) {
  bool e4 = t == ET_E4M3;
  *mbits = e4 ? 3 : 2;
  *bias = e4 ? 7 : 15;
  *max = e4 ? 448.0f : 57344.0f;
}

/* Round to nearest even; out-of-range values saturate, NaN maps to the
 * format's NaN. The positive codes are in the order of their values, so
 * a mantissa that rounds up into the next binade carries into the
 * exponent by itself. */
static uint8_t float_to_fp8(ElemType t, float f) {
  int mbits, bias;
  float max;
  fp8_format(t, &mbits, &bias, &max);
  uint8_t sign = signbit(f) ? 0x80 : 0;
  if (isnan(f)) return t == ET_E4M3 ? 0x7F : 0x7E;
  float a = fabsf(f);
  if (a > max) a = max;
  int e;
  (void)frexpf(a, &e);                         /* a = m 2^e, m in [0.5, 1) */
  e -= 1;                                      /* a = (1 + frac) 2^e */
  if (a == 0 || e < 1 - bias) e = 1 - bias;    /* subnormal: the quantum of the first binade */
  int q = (int)nearbyint(ldexp(a, mbits - e)); /* units of 2^(e - mbits) */
  int code = ((e + bias - 1) << mbits) + q;    /* subnormal: e + bias - 1 = 0 */
  return sign | (uint8_t)code;
}

static float fp8_to_float(ElemType t, uint8_t code) {
  int mbits, bias;
  float max;
  fp8_format(t, &mbits, &bias, &max);
  int e = (code & 0x7F) >> mbits, m = code & ((1 << mbits) - 1);
  float v;
  if (t == ET_E4M3 && (code & 0x7F) == 0x7F)
    v = NAN;
  else if (t == ET_E5M2 && e == 31)
    v = m ? NAN : INFINITY;
  else if (e == 0)
    v = ldexpf((float)m, 1 - bias - mbits);
  else
    v = ldexpf((float)((1 << mbits) + m), e - bias - mbits);
  return code & 0x80 ? -v : v;
}

static uint16_t float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7FFFFFFF) > 0x7F800000) return (uint16_t)((x >> 16) | 0x40);
  x += 0x7FFF + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

static float bf16_to_float(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

uint32_t elem_from_float(ElemType t, float f) {
  switch (t) {
  case ET_F16:
    return float_to_half(f);
  case ET_BF16:
    return float_to_bf16(f);
  case ET_E4M3:
  case ET_E5M2:
    return float_to_fp8(t, f);
  default:
    return 0;
  }
}

float elem_to_float(ElemType t, uint32_t code) {
  switch (t) {
  case ET_F16:
    return half_to_float((uint16_t)code);
  case ET_BF16:
    return bf16_to_float((uint16_t)code);
  case ET_E4M3:
  case ET_E5M2:
    return fp8_to_float(t, (uint8_t)code);
  default:
    return NAN;
  }
}

float elem_load(ElemType t, const void *buf, int64_t i) {
  if (elem_bytes(t) == 2) return elem_to_float(t, ((const uint16_t *)buf)[i]);
  return elem_to_float(t, ((const uint8_t *)buf)[i]);
}

void elem_store(ElemType t, void *buf, int64_t i, uint32_t code) {
  if (elem_bytes(t) == 2)
    ((uint16_t *)buf)[i] = (uint16_t)code;
  else
    ((uint8_t *)buf)[i] = (uint8_t)code;
}

/* A decoding table of every code of t (65536 or 256 entries). */
static const float *elem_table(ElemType t) {
  static float *tables[ET_NONE];
  if (!tables[t]) {
    int n = elem_bytes(t) == 2 ? 65536 : 256;
    float *tab = malloc((size_t)n * sizeof *tab);
    if (!tab) return NULL;
    for (int i = 0; i < n; i++) tab[i] = elem_to_float(t, (uint32_t)i);
    tables[t] = tab;
  }
  return tables[t];
}

/* Decodes row r of an [rows, k] matrix of t into out[k]. */
static void decode_row(const void *m, ElemType t, const float *tab, int64_t r, int64_t k,
                       double *out) {
  for (int64_t i = 0; i < k; i++)
    out[i] = elem_bytes(t) == 2 ? tab[((const uint16_t *)m)[r * k + i]]
                                : tab[((const uint8_t *)m)[r * k + i]];
}

/* Each sampled row of C in double: scale times the product of the decoded
 * inputs. */
void host_matmul_rows(const void *a, ElemType ta, const void *b, ElemType tb, double scale,
                      double *out, int64_t n, int64_t k, const int64_t *rows, int nrows) {
  const float *tab_a = elem_table(ta), *tab_b = elem_table(tb);
  double *ar = malloc((size_t)k * sizeof *ar), *br = malloc((size_t)k * sizeof *br);
  for (int r = 0; r < nrows; r++)
    for (int64_t j = 0; j < n; j++) out[(int64_t)r * n + j] = NAN;
  if (tab_a && tab_b && ar && br)
    for (int r = 0; r < nrows; r++) {
      decode_row(a, ta, tab_a, rows[r], k, ar);
      for (int64_t j = 0; j < n; j++) {
        decode_row(b, tb, tab_b, j, k, br);
        double acc = 0;
        for (int64_t i = 0; i < k; i++) acc += ar[i] * br[i];
        out[(int64_t)r * n + j] = scale * acc;
      }
    }
  free(ar), free(br);
}
