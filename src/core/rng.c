/*
 * rng.c - xoshiro256** (Blackman & Vigna, https://prng.di.unimi.it/) seeded
 * with splitmix64, as recommended by its authors.  Deterministic across
 * platforms: only 64-bit integer arithmetic.
 */
#include "tenbin/core.h"

#include <math.h>

#define GOLDEN UINT64_C(0x9e3779b97f4a7c15)

/* The splitmix64 output function; maps 0 to 0. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t splitmix64(uint64_t *x)
{
    *x += GOLDEN;
    return mix64(*x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void tb_rng_seed(tb_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

/*
 * The stream number is hashed twice before it perturbs the seed, so nearby
 * streams (ranks 0, 1, 2...) start splitmix64 at unrelated points; the chance
 * that two of the resulting 2^256-period xoshiro sequences overlap within any
 * practical run is negligible.  Stream 0 is the plain seed.
 */
void tb_rng_seed_stream(tb_rng *r, uint64_t seed, uint64_t stream)
{
    tb_rng_seed(r, seed ^ mix64(mix64(stream * GOLDEN)));
}

uint64_t tb_rng_u64(tb_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double tb_rng_double(tb_rng *r) { return (double)(tb_rng_u64(r) >> 11) * 0x1.0p-53; }

/* Rejection: accept x only at or above 2^64 mod n, so the accepted range is a
 * whole multiple of n and x % n is unbiased.  Rejects < 50% of draws. */
uint64_t tb_rng_below(tb_rng *r, uint64_t n)
{
    if (n == 0)
        return 0;
    uint64_t threshold = (0 - n) % n;
    for (;;) {
        uint64_t x = tb_rng_u64(r);
        if (x >= threshold)
            return x % n;
    }
}

double tb_rng_uniform(tb_rng *r, double a, double b) { return a + (b - a) * tb_rng_double(r); }

/* Inverse CDF; u < 1 so log1p(-u) is finite. */
double tb_rng_exp(tb_rng *r, double mean) { return -mean * log1p(-tb_rng_double(r)); }
