/* tlsrun_data.c: random inputs, fp16 conversion, and the host reference
 * (double precision) that tlsrun falls back on without cuBLAS. */
#include <math.h>
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

/* Each sampled row of C in double, from a 64K-entry half->float table. */
void host_matmul_rows(const uint16_t *a, const uint16_t *b, double *out, int64_t n, int64_t k,
                      const int64_t *rows, int nrows) {
  static float table[65536];
  static bool ready;
  if (!ready)
    for (int h = 0; h < 65536; h++) table[h] = half_to_float((uint16_t)h);
  ready = true;
  for (int r = 0; r < nrows; r++) {
    const uint16_t *ar = a + rows[r] * k;
    for (int64_t j = 0; j < n; j++) {
      const uint16_t *br = b + j * k;
      double acc = 0;
      for (int64_t i = 0; i < k; i++) acc += (double)table[ar[i]] * table[br[i]];
      out[(int64_t)r * n + j] = acc;
    }
  }
}
