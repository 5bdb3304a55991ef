/*
 * test_random.h — the pseudo-random numbers of the device tests (test_topk.cu, test_spmm.cu):
 * splitmix64, so that every case is reproducible from its seed.
 */
#ifndef TEST_RANDOM_H
#define TEST_RANDOM_H

#include <stdint.h>

/* splitmix64: the next value of the sequence that *state walks. */
static inline uint64_t
next_random(uint64_t *state)
{
	uint64_t	z = (*state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

#endif							/* TEST_RANDOM_H */
