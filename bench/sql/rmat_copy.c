/*
 * rmat_copy.c — writes an R-MAT edge list (Graph500 a = .57, b = .19, c = .19, d = .05) as P files in
 * PostgreSQL's binary COPY format (two int8 columns src, dst), for P parallel COPYs into one table.
 *
 *   rmat_copy SCALE EDGE_FACTOR SEED PARTS OUT_PREFIX     -> OUT_PREFIX.0.bin ... OUT_PREFIX.(P-1).bin
 *   rmat_copy GRAPH - SEED PARTS OUT_PREFIX               (GRAPH: a graph_gen.h name, e.g. local:23:16:0.9:64, bip:22)
 *
 * The graph is gen_rmat of test/common/graph_gen.h (random ids); duplicate (src, dst) pairs are
 * removed (self-loops stay), and each file's rows are shuffled.  One thread per part: pass 1
 * generates a slice of the edges and buckets them by a hash of the (src, dst) key, pass 2 sorts and
 * deduplicates one bucket (duplicates always share a bucket), shuffles it and writes it.  Prints the
 * rows written.  Build: gcc -O2 -std=gnu11 -pthread -Itest/common -o rmat_copy bench/sql/rmat_copy.c
 * test/common/graph_gen.c -lm
 */
#include "graph_gen.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct
{
	int			id;
	int			parts;
	GenSpec		spec;
	uint64_t	seed;
	uint64_t	e0,
				e1;				/* pass 1: edge slice */
	uint64_t   *keys;			/* pass 1: this slice's keys, grouped by bucket at the end */
	uint64_t   *count;			/* pass 1: keys per bucket in this slice */
	const char *prefix;
	uint64_t	written;		/* pass 2: rows written */
	int			failed;
} Job;

static Job *jobs;

/* Bucket of a (src << 32 | dst) key. */
static inline int
bucket_of(uint64_t key, int parts)
{
	uint64_t	s = key;

	return (int) (gen_random(&s) % (uint64_t) parts);
}

/* Pass 1: generates edges e0..e1-1 (edge e depends only on seed and e) and groups them by bucket. */
static void *
generate_slice(void *arg)
{
	Job		   *j = arg;
	uint64_t	m = j->e1 - j->e0;
	uint64_t   *raw = malloc(m * sizeof(uint64_t));
	uint64_t   *pos = calloc(j->parts, sizeof(uint64_t));
	int64_t		src[4096],
				dst[4096];

	j->keys = malloc(m * sizeof(uint64_t));
	j->count = calloc(j->parts, sizeof(uint64_t));
	if (!raw || !pos || !j->keys || !j->count)
	{
		j->failed = 1;
		return NULL;
	}
	for (uint64_t e0 = j->e0; e0 < j->e1; e0 += 4096)
	{
		uint64_t	e1 = e0 + 4096 < j->e1 ? e0 + 4096 : j->e1;

		gen_edges_range(&j->spec, (int64_t) e0, (int64_t) e1, src, dst);
		for (uint64_t e = e0; e < e1; e++)
		{
			raw[e - j->e0] = ((uint64_t) src[e - e0] << 32) | (uint64_t) dst[e - e0];
			j->count[bucket_of(raw[e - j->e0], j->parts)]++;
		}
	}
	for (int b = 1; b < j->parts; b++)
		pos[b] = pos[b - 1] + j->count[b - 1];
	for (uint64_t i = 0; i < m; i++)
		j->keys[pos[bucket_of(raw[i], j->parts)]++] = raw[i];
	free(raw);
	free(pos);
	return NULL;
}

/* Writes a big-endian integer of `bytes` bytes. */
static inline void
put_be(unsigned char **p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		*(*p)++ = (unsigned char) (v >> (8 * i));
}

/* Pass 2: gathers bucket j->id from every slice, sorts, deduplicates, shuffles and writes it. */
static void *
write_bucket(void *arg)
{
	Job		   *j = arg;
	uint64_t	n = 0,
				unique = 0,
				state = j->seed ^ (UINT64_C(0x5DEECE66D) + (uint64_t) j->id);
	uint64_t   *keys,
			   *tmp,
			   *sorted;
	char		path[4096];
	FILE	   *f;
	unsigned char *buf,
			   *p;
	static const unsigned char header[19] = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n', 0};

	for (int s = 0; s < j->parts; s++)
		n += jobs[s].count[j->id];
	keys = malloc((n + 1) * sizeof(uint64_t));
	tmp = malloc((n + 1) * sizeof(uint64_t));
	buf = malloc(26 * 65536 + 64);
	if (!keys || !tmp || !buf)
	{
		j->failed = 1;
		return NULL;
	}
	n = 0;
	for (int s = 0; s < j->parts; s++)
	{
		uint64_t	off = 0;

		for (int b = 0; b < j->id; b++)
			off += jobs[s].count[b];
		memcpy(keys + n, jobs[s].keys + off, jobs[s].count[j->id] * sizeof(uint64_t));
		n += jobs[s].count[j->id];
	}
	sorted = gen_sort_keys(keys, tmp, n);
	for (uint64_t i = 0; i < n; i++)
		if (i == 0 || sorted[i] != sorted[i - 1])
			sorted[unique++] = sorted[i];
	for (uint64_t i = unique; i > 1; i--)
	{
		uint64_t	k = gen_random(&state) % i,
					t = sorted[i - 1];

		sorted[i - 1] = sorted[k];
		sorted[k] = t;
	}
	snprintf(path, sizeof(path), "%s.%d.bin", j->prefix, j->id);
	f = fopen(path, "wb");
	if (!f)
	{
		perror(path);
		j->failed = 1;
		return NULL;
	}
	fwrite(header, 1, 19, f);	/* signature, flags 0, header extension length 0 */
	p = buf;
	for (uint64_t i = 0; i < unique; i++)
	{
		put_be(&p, 2, 2);
		put_be(&p, 8, 4);
		put_be(&p, sorted[i] >> 32, 8);
		put_be(&p, 8, 4);
		put_be(&p, sorted[i] & 0xffffffffu, 8);
		if (p - buf >= 26 * 65536)
		{
			fwrite(buf, 1, p - buf, f);
			p = buf;
		}
	}
	put_be(&p, 0xffff, 2);		/* trailer: field count -1 */
	fwrite(buf, 1, p - buf, f);
	if (fclose(f) != 0)
		j->failed = 1;
	j->written = unique;
	free(keys);
	free(tmp);
	free(buf);
	return NULL;
}

/* Entry point: see the comment at the top. */
int
main(int argc, char **argv)
{
	int			scale = 0,
				parts;
	uint64_t	m,
				seed,
				total = 0;
	pthread_t  *th;
	GenSpec		spec;

	if (argc != 6)
	{
		fprintf(stderr, "usage: %s SCALE EDGE_FACTOR SEED PARTS OUT_PREFIX\n", argv[0]);
		return 2;
	}
	seed = strtoull(argv[3], NULL, 10);
	parts = atoi(argv[4]);
	if (strchr(argv[1], ':') != NULL)
	{
		if (!gen_parse(argv[1], seed, &spec))
		{
			fprintf(stderr, "unknown graph %s\n", argv[1]);
			return 2;
		}
		m = (uint64_t) spec.m;
	}
	else
	{
		scale = atoi(argv[1]);
		m = (uint64_t) atoll(argv[2]) << scale;
		if (scale < 1 || scale > 31)
		{
			fprintf(stderr, "bad arguments\n");
			return 2;
		}
		spec = gen_rmat(scale, (int64_t) m, seed, true);
	}
	if (parts < 1 || parts > 256 || m == 0)
	{
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	jobs = calloc(parts, sizeof(Job));
	th = calloc(parts, sizeof(pthread_t));
	if (!jobs || !th)
		return 1;
	for (int i = 0; i < parts; i++)
	{
		jobs[i] = (Job) {.id = i, .parts = parts, .spec = spec,
			.seed = seed, .prefix = argv[5],
			.e0 = m * i / parts, .e1 = m * (i + 1) / parts};
		pthread_create(&th[i], NULL, generate_slice, &jobs[i]);
	}
	for (int i = 0; i < parts; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < parts; i++)
		if (jobs[i].failed)
			return 1;
	for (int i = 0; i < parts; i++)
		pthread_create(&th[i], NULL, write_bucket, &jobs[i]);
	for (int i = 0; i < parts; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < parts; i++)
	{
		if (jobs[i].failed)
			return 1;
		total += jobs[i].written;
	}
	printf("%llu\n", (unsigned long long) total);
	return 0;
}
