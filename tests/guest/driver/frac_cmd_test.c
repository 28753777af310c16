// SPDX-License-Identifier: MIT
/*
 * frac_cmd_test: every command's result against a host reference, with its
 * operands in host memory and in device memory (variants). Inputs are written
 * through the BO mappings, outputs read back through them; the bytes around
 * every output range must stay as they were.
 *
 * COPY at unaligned offsets and sizes spanning pages, and over BOs of several
 * MiB (the SG chain path); FILL with lengths that are no multiple of 4; CRC32C
 * of the known vector and chained through seeds; GEMM fp32 (to the error bound
 * of fp32 summation) and int8 (exact); TIMESTAMP between two DEVICE_CLOCK
 * reads and monotonic; a job of DRM_FRAC_MAX_CMDS commands that run in order;
 * a job reading what the job ahead of it on its queue wrote.
 */
#include "frac_test.h"

#define SMALL_BO	(64 * 1024ull)
#define BIG_BO		(8ull << 20)
#define GUARD		4096ull		/* bytes checked around an output range */

FIXTURE(cmd) {
	struct frac_dev dev;
	struct frac_bo src, dst;
};

FIXTURE_VARIANT(cmd) {
	uint32_t src_flags;		/* placement of inputs */
	uint32_t dst_flags;		/* placement of outputs (and of GEMM B) */
};

FIXTURE_VARIANT_ADD(cmd, host_to_host) { .src_flags = 0, .dst_flags = 0 };
FIXTURE_VARIANT_ADD(cmd, host_to_devmem) { .src_flags = 0, .dst_flags = DRM_FRAC_BO_DEVMEM };
FIXTURE_VARIANT_ADD(cmd, devmem_to_host) { .src_flags = DRM_FRAC_BO_DEVMEM, .dst_flags = 0 };
FIXTURE_VARIANT_ADD(cmd, devmem_to_devmem) {
	.src_flags = DRM_FRAC_BO_DEVMEM, .dst_flags = DRM_FRAC_BO_DEVMEM };

FIXTURE_SETUP(cmd)
{
	self->dev.fd = -1;
	FRAC_OPEN_OR_SKIP(&self->dev);
	if (((variant->src_flags | variant->dst_flags) & DRM_FRAC_BO_DEVMEM) &&
	    !(self->dev.features & DRM_FRAC_FEAT_DEVMEM))
		SKIP(return, "no device memory");
	ASSERT_EQ(0, frac_t_bo(&self->dev, SMALL_BO, variant->src_flags, &self->src));
	ASSERT_EQ(0, frac_t_bo(&self->dev, SMALL_BO, variant->dst_flags, &self->dst));
}

FIXTURE_TEARDOWN(cmd)
{
	if (self->dev.fd < 0)
		return;
	frac_bo_destroy(&self->dev, &self->src);
	frac_bo_destroy(&self->dev, &self->dst);
	frac_close(&self->dev);
}

/* Run a command list on @queue; the job must succeed. */
static int run_ok(struct frac_dev *dev, uint32_t queue, const struct frac_cmdlist *cl,
		  struct frac_job_result *res)
{
	int ret = frac_run(dev, queue, cl, res);

	if (ret)
		return ret;
	return res->status;
}

/* The window of @bo around [off, off + len), clipped to the BO. */
static void window(const struct frac_bo *bo, uint64_t off, uint64_t len, uint64_t *wstart,
		   uint64_t *wend)
{
	*wstart = off > GUARD ? off - GUARD : 0;
	*wend = off + len + GUARD < bo->size ? off + len + GUARD : bo->size;
}

/*
 * COPY src[soff, +len) to dst[doff, +len): dst's window is poisoned first,
 * then must hold the source bytes inside the range and the poison around it.
 */
static void copy_check(struct __test_metadata *_metadata, struct frac_dev *dev,
		       struct frac_bo *src, struct frac_bo *dst, uint64_t soff, uint64_t doff,
		       uint64_t len, uint32_t queue)
{
	uint64_t ws, we, i;
	struct frac_job_result res;
	struct frac_cmdlist cl;
	uint8_t *in, *out;
	long bad;

	window(dst, doff, len, &ws, &we);
	in = malloc(len);
	out = malloc(we - ws);
	ASSERT_TRUE(in && out);
	frac_fill_random(in, len, soff * 31 + doff * 7 + len);
	frac_t_write(src, soff, in, len);
	memset(out, FRAC_POISON, we - ws);
	frac_t_write(dst, ws, out, we - ws);

	frac_cmdlist_init(&cl);
	ASSERT_EQ(0, frac_cmd_copy(&cl, dst, doff, src, soff, len));
	ASSERT_EQ(0, run_ok(dev, queue, &cl, &res))
		TH_LOG("COPY %s+%llu -> %s+%llu, %llu bytes", frac_t_placement(src->flags),
		       (unsigned long long)soff, frac_t_placement(dst->flags),
		       (unsigned long long)doff, (unsigned long long)len);

	frac_t_read(dst, ws, out, we - ws);
	bad = frac_first_diff(out + (doff - ws), in, len);
	EXPECT_EQ(-1, bad) TH_LOG("COPY +%llu -> +%llu len %llu: byte %ld differs",
				  (unsigned long long)soff, (unsigned long long)doff,
				  (unsigned long long)len, bad);
	for (i = ws; i < we; i++) {
		if (i >= doff && i < doff + len)
			continue;
		if (out[i - ws] != FRAC_POISON) {
			EXPECT_EQ(FRAC_POISON, out[i - ws])
				TH_LOG("COPY +%llu len %llu wrote byte %llu outside its range",
				       (unsigned long long)doff, (unsigned long long)len,
				       (unsigned long long)i);
			break;
		}
	}
	free(in);
	free(out);
}

TEST_F(cmd, copy_unaligned)
{
	static const struct { uint64_t soff, doff, len; } cases[] = {
		{ 0, 0, 1 },
		{ 1, 3, 7 },
		{ 4095, 1, 4098 },		/* straddles two page boundaries */
		{ 5, 4093, 3 * 4096 + 11 },
		{ 123, 4567, 40000 },
		{ 0, 0, SMALL_BO },		/* the whole BO */
		{ SMALL_BO - 1, 0, 1 },		/* the last byte */
	};
	uint32_t i;

	for (i = 0; i < FRAC_ARRAY_SIZE(cases); i++)
		copy_check(_metadata, &self->dev, &self->src, &self->dst, cases[i].soff,
			   cases[i].doff, cases[i].len, i % self->dev.num_queues);
}

/* BOs of several MiB: host ones span many DMA segments, so jobs chain SG lists. */
TEST_F(cmd, copy_large_sg)
{
	static const struct { uint64_t soff, doff, len; } cases[] = {
		{ 333, 667, BIG_BO - 1000 },
		{ 0, 0, BIG_BO },
		{ (3ull << 20) + 5, (5ull << 20) + 4093, (1ull << 20) + 4099 },
		{ BIG_BO - 4097, 4095, 4097 },
	};
	struct frac_bo src, dst;
	uint32_t i;

	ASSERT_EQ(0, frac_t_bo(&self->dev, BIG_BO, variant->src_flags, &src));
	ASSERT_EQ(0, frac_t_bo(&self->dev, BIG_BO, variant->dst_flags, &dst));
	for (i = 0; i < FRAC_ARRAY_SIZE(cases); i++)
		copy_check(_metadata, &self->dev, &src, &dst, cases[i].soff, cases[i].doff,
			   cases[i].len, i % self->dev.num_queues);
	frac_bo_destroy(&self->dev, &src);
	frac_bo_destroy(&self->dev, &dst);
}

TEST_F(cmd, fill)
{
	static const struct { uint64_t off, len; uint32_t pattern; } cases[] = {
		{ 0, 4, 0x11223344 },
		{ 3, 4097, 0xdeadbeef },	/* len % 4 == 1, odd offset */
		{ 1, 1, 0xa1b2c3d4 },
		{ 4094, 6, 0x01020304 },	/* len % 4 == 2, straddles a page */
		{ 7, 3 * 4096 + 3, 0xcafef00d },
		{ 0, SMALL_BO, 0x5555aaaa },
	};
	struct frac_job_result res;
	struct frac_cmdlist cl;
	uint64_t ws, we, i;
	uint32_t c;
	uint8_t *out;
	long bad;

	out = malloc(SMALL_BO);
	ASSERT_NE(NULL, out);
	for (c = 0; c < FRAC_ARRAY_SIZE(cases); c++) {
		uint64_t off = cases[c].off, len = cases[c].len;

		window(&self->dst, off, len, &ws, &we);
		memset(out, FRAC_POISON, we - ws);
		frac_t_write(&self->dst, ws, out, we - ws);
		frac_cmdlist_init(&cl);
		ASSERT_EQ(0, frac_cmd_fill(&cl, &self->dst, off, len, cases[c].pattern));
		ASSERT_EQ(0, run_ok(&self->dev, c % self->dev.num_queues, &cl, &res));
		frac_t_read(&self->dst, ws, out, we - ws);
		bad = frac_check_fill(out + (off - ws), len, cases[c].pattern);
		EXPECT_EQ(-1, bad) TH_LOG("FILL +%llu len %llu %#x: byte %ld wrong",
					  (unsigned long long)off, (unsigned long long)len,
					  cases[c].pattern, bad);
		for (i = ws; i < we; i++) {
			if (i >= off && i < off + len)
				continue;
			if (out[i - ws] != FRAC_POISON) {
				EXPECT_EQ(FRAC_POISON, out[i - ws])
					TH_LOG("FILL +%llu len %llu wrote byte %llu",
					       (unsigned long long)off, (unsigned long long)len,
					       (unsigned long long)i);
				break;
			}
		}
	}
	free(out);
}

TEST_F(cmd, crc32c_known_vector)
{
	static const char vec[] = "123456789";
	struct frac_job_result res;
	struct frac_cmdlist cl;
	uint32_t q;

	/* The host reference itself first. */
	ASSERT_EQ(0xe3069283u, frac_crc32c(0, vec, 9));

	frac_t_write(&self->src, 7, vec, 9);
	for (q = 0; q < self->dev.num_queues; q++) {
		frac_cmdlist_init(&cl);
		ASSERT_EQ(0, frac_cmd_crc32c(&cl, &self->src, 7, 9, 0));
		ASSERT_EQ(0, run_ok(&self->dev, q, &cl, &res));
		EXPECT_EQ(0xe3069283ull, res.result) TH_LOG("queue %u", q);
	}

	/* No data: the result is the seed, the CRC of what came before. */
	frac_cmdlist_init(&cl);
	ASSERT_EQ(0, frac_cmd_crc32c(&cl, &self->src, 0, 0, 0x12345678));
	cl.cmds[0].src_handle = 0;
	ASSERT_EQ(0, run_ok(&self->dev, 0, &cl, &res));
	EXPECT_EQ(0x12345678ull, res.result);
}

TEST_F(cmd, crc32c_chained)
{
	static const uint64_t chunks[] = { 1, 4095, 40000, 3, 0 /* the rest */ };
	const uint64_t off = 5, total = SMALL_BO - 64;
	struct frac_job_result res;
	struct frac_cmdlist cl;
	uint64_t pos = off, len;
	uint32_t crc = 0, want, i;
	uint8_t *data;

	data = malloc(total);
	ASSERT_NE(NULL, data);
	frac_fill_random(data, total, 99);
	frac_t_write(&self->src, off, data, total);
	want = frac_crc32c(0, data, total);

	/* One job over everything. */
	frac_cmdlist_init(&cl);
	ASSERT_EQ(0, frac_cmd_crc32c(&cl, &self->src, off, total, 0));
	ASSERT_EQ(0, run_ok(&self->dev, 0, &cl, &res));
	EXPECT_EQ((uint64_t)want, res.result);

	/* Chunk by chunk, each job seeded by the previous result. */
	for (i = 0; i < FRAC_ARRAY_SIZE(chunks); i++) {
		len = chunks[i] ? chunks[i] : off + total - pos;
		frac_cmdlist_init(&cl);
		ASSERT_EQ(0, frac_cmd_crc32c(&cl, &self->src, pos, len, crc));
		ASSERT_EQ(0, run_ok(&self->dev, i % self->dev.num_queues, &cl, &res));
		EXPECT_EQ((uint64_t)frac_crc32c(crc, data + (pos - off), len), res.result)
			TH_LOG("chunk %u", i);
		crc = (uint32_t)res.result;
		pos += len;
	}
	EXPECT_EQ(want, crc);
	free(data);
}

/* GEMM: A in src (placement of inputs), B in a BO placed like the outputs, C in dst. */
static void gemm_check(struct __test_metadata *_metadata, struct frac_dev *dev,
		       struct frac_bo *abo, struct frac_bo *cbo, uint32_t bflags, uint32_t type,
		       uint32_t m, uint32_t n, uint32_t k, uint32_t queue)
{
	const uint64_t aoff = 64, boff = 128, coff = 4096 + 8;
	const size_t esz = type == DRM_FRAC_GEMM_FP32 ? 4 : 1;
	const size_t asz = (size_t)m * k * esz, bsz = (size_t)k * n * esz, csz = (size_t)m * n * 4;
	struct frac_job_result res;
	struct frac_cmdlist cl;
	struct frac_bo bbo;
	uint64_t ws, we, i;
	void *a, *b;
	uint8_t *out;
	long bad;

	ASSERT_LE(aoff + asz, abo->size);
	ASSERT_LE(coff + csz, cbo->size);
	ASSERT_EQ(0, frac_t_bo(dev, boff + bsz, bflags, &bbo));
	a = malloc(asz);
	b = malloc(bsz);
	window(cbo, coff, csz, &ws, &we);
	out = malloc(we - ws);
	ASSERT_TRUE(a && b && out);

	if (type == DRM_FRAC_GEMM_FP32) {
		float *fa = a, *fb = b;
		uint64_t s = m * 1000003ull + n * 1009 + k;

		for (i = 0; i < (uint64_t)m * k; i++)
			fa[i] = (float)((int64_t)(frac_rng(&s) % 2001) - 1000) / 1000.0f;
		for (i = 0; i < (uint64_t)k * n; i++)
			fb[i] = (float)((int64_t)(frac_rng(&s) % 2001) - 1000) / 1000.0f;
	} else {
		frac_fill_random(a, asz, m * 7 + k);
		frac_fill_random(b, bsz, n * 13 + k);
	}
	frac_t_write(abo, aoff, a, asz);
	frac_t_write(&bbo, boff, b, bsz);
	memset(out, FRAC_POISON, we - ws);
	frac_t_write(cbo, ws, out, we - ws);

	frac_cmdlist_init(&cl);
	ASSERT_EQ(0, frac_cmd_gemm(&cl, type, m, n, k, abo, aoff, &bbo, boff, cbo, coff));
	ASSERT_EQ(0, run_ok(dev, queue, &cl, &res))
		TH_LOG("GEMM %s %ux%ux%u", type ? "int8" : "fp32", m, n, k);
	frac_t_read(cbo, ws, out, we - ws);

	if (type == DRM_FRAC_GEMM_FP32) {
		double *ref = malloc(sizeof(double) * m * n), *mag = malloc(sizeof(double) * m * n);
		float *got = malloc(csz);

		ASSERT_TRUE(ref && mag && got);
		memcpy(got, out + (coff - ws), csz);
		frac_gemm_ref_f32(a, b, ref, mag, m, n, k);
		bad = frac_check_gemm_f32(got, ref, mag, m, n, k);
		EXPECT_EQ(-1, bad) TH_LOG("GEMM fp32 %ux%ux%u: C[%ld] = %g, want %g", m, n, k,
					  bad, bad >= 0 ? got[bad] : 0.0, bad >= 0 ? ref[bad] : 0.0);
		free(ref);
		free(mag);
		free(got);
	} else {
		int32_t *ref = malloc(csz);

		ASSERT_NE(NULL, ref);
		frac_gemm_ref_i8(a, b, ref, m, n, k);
		bad = frac_first_diff(out + (coff - ws), ref, csz);
		EXPECT_EQ(-1, bad) TH_LOG("GEMM int8 %ux%ux%u: byte %ld of C differs", m, n, k,
					  bad);
		free(ref);
	}
	for (i = ws; i < we; i++) {
		if (i >= coff && i < coff + csz)
			continue;
		if (out[i - ws] != FRAC_POISON) {
			EXPECT_EQ(FRAC_POISON, out[i - ws])
				TH_LOG("GEMM wrote byte %llu outside C", (unsigned long long)i);
			break;
		}
	}
	free(a);
	free(b);
	free(out);
	frac_bo_destroy(dev, &bbo);
}

static const struct { uint32_t m, n, k; } gemm_dims[] = {
	{ 1, 1, 1 }, { 7, 5, 3 }, { 33, 17, 29 }, { 1, 64, 9 }, { 64, 1, 64 }, { 64, 64, 64 },
};

TEST_F(cmd, gemm_fp32)
{
	uint32_t i;

	for (i = 0; i < FRAC_ARRAY_SIZE(gemm_dims); i++)
		gemm_check(_metadata, &self->dev, &self->src, &self->dst, variant->dst_flags,
			   DRM_FRAC_GEMM_FP32, gemm_dims[i].m, gemm_dims[i].n, gemm_dims[i].k,
			   i % self->dev.num_queues);
}

TEST_F(cmd, gemm_int8)
{
	uint32_t i;

	for (i = 0; i < FRAC_ARRAY_SIZE(gemm_dims); i++)
		gemm_check(_metadata, &self->dev, &self->src, &self->dst, variant->dst_flags,
			   DRM_FRAC_GEMM_INT8, gemm_dims[i].m, gemm_dims[i].n, gemm_dims[i].k,
			   i % self->dev.num_queues);
	/* K at the largest dimension the device takes. */
	gemm_check(_metadata, &self->dev, &self->src, &self->dst, variant->dst_flags,
		   DRM_FRAC_GEMM_INT8, 2, 3, self->dev.gemm_max_dim, 0);
}

TEST_F(cmd, timestamp)
{
	struct frac_job_result res;
	struct frac_cmdlist cl;
	uint64_t t0, t1, stored, prev = 0, vals[4];
	uint32_t q, i;

	for (q = 0; q < self->dev.num_queues; q++) {
		/* To a destination at an odd offset. */
		t0 = frac_t_clock(&self->dev);
		frac_cmdlist_init(&cl);
		ASSERT_EQ(0, frac_cmd_timestamp(&cl, &self->dst, 3));
		ASSERT_EQ(0, run_ok(&self->dev, q, &cl, &res));
		t1 = frac_t_clock(&self->dev);
		EXPECT_LE(t0, res.result);
		EXPECT_LE(res.result, t1);
		EXPECT_LT(prev, res.result) TH_LOG("TIMESTAMP went backwards");
		frac_t_read(&self->dst, 3, &stored, 8);
		EXPECT_EQ(res.result, stored);
		prev = res.result;

		/* Without a destination. */
		frac_cmdlist_init(&cl);
		ASSERT_EQ(0, frac_cmd_timestamp(&cl, NULL, 0));
		ASSERT_EQ(0, run_ok(&self->dev, q, &cl, &res));
		t1 = frac_t_clock(&self->dev);
		EXPECT_LT(prev, res.result);
		EXPECT_LE(res.result, t1);
		EXPECT_LE(res.t_start, res.result);
		EXPECT_LE(res.result, res.t_end);
		prev = res.result;
	}

	/* Several in one job run in order; the job's result is the last one. */
	frac_cmdlist_init(&cl);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, frac_cmd_timestamp(&cl, &self->dst, 64 + 8 * i));
	ASSERT_EQ(0, run_ok(&self->dev, 0, &cl, &res));
	frac_t_read(&self->dst, 64, vals, sizeof(vals));
	for (i = 1; i < 4; i++)
		EXPECT_LE(vals[i - 1], vals[i]);
	EXPECT_EQ(vals[3], res.result);
	EXPECT_LT(prev, vals[0]);
}

/*
 * A job of DRM_FRAC_MAX_CMDS commands runs them in order: 62 FILLs of
 * distinct slices, a COPY of them all, and a CRC32C of the copy.
 */
TEST_F(cmd, max_cmds_in_order)
{
	const uint64_t slice = 100, nfill = DRM_FRAC_MAX_CMDS - 2;
	const uint64_t len = slice * nfill, copy_off = 32768 + 1;
	struct frac_job_result res;
	struct frac_cmdlist cl;
	uint8_t *want, *got;
	uint64_t i;

	want = malloc(len);
	got = malloc(len);
	ASSERT_TRUE(want && got);
	frac_cmdlist_init(&cl);
	for (i = 0; i < nfill; i++) {
		uint32_t pattern = 0x01010101u * (uint32_t)(i + 1) ^ 0x00ff00ffu;
		uint64_t j;

		ASSERT_EQ(0, frac_cmd_fill(&cl, &self->dst, 1 + i * slice, slice, pattern));
		for (j = 0; j < slice; j++)
			want[i * slice + j] = frac_fill_byte(pattern, j);
	}
	ASSERT_EQ(0, frac_cmd_copy(&cl, &self->dst, copy_off, &self->dst, 1, len));
	ASSERT_EQ(0, frac_cmd_crc32c(&cl, &self->dst, copy_off, len, 0));
	ASSERT_EQ((uint32_t)DRM_FRAC_MAX_CMDS, cl.count);
	ASSERT_EQ(0, run_ok(&self->dev, self->dev.num_queues - 1, &cl, &res));

	frac_t_read(&self->dst, 1, got, len);
	EXPECT_EQ(-1, frac_first_diff(got, want, len));
	frac_t_read(&self->dst, copy_off, got, len);
	EXPECT_EQ(-1, frac_first_diff(got, want, len));
	EXPECT_EQ((uint64_t)frac_crc32c(0, want, len), res.result);
	free(want);
	free(got);
}

/*
 * A job reads what the job ahead of it on its queue wrote, each its own
 * SUBMIT, neither waited for: FILL src with a pattern, then COPY src to a
 * slice of dst, round after round; each slice must hold its round's
 * pattern. Through bounce buffers (the bounce lane) the reader must not copy
 * src to the device before the writer's result is back in its pages.
 */
TEST_F(cmd, reads_what_the_job_ahead_wrote)
{
	const uint64_t len = 1024, rounds = SMALL_BO / len;
	uint32_t ids[2 * (SMALL_BO / 1024)];
	struct frac_job_result res;
	struct frac_cmdlist cl;
	uint8_t want[1024], got[1024];
	uint64_t r, j;

	for (r = 0; r < rounds; r++) {
		frac_cmdlist_init(&cl);
		ASSERT_EQ(0, frac_cmd_fill(&cl, &self->src, 0, len, 0x01020304u * (uint32_t)(r + 1)));
		ASSERT_EQ(0, frac_submit(&self->dev, 0, &cl, NULL, &ids[2 * r]));
		frac_cmdlist_init(&cl);
		ASSERT_EQ(0, frac_cmd_copy(&cl, &self->dst, r * len, &self->src, 0, len));
		ASSERT_EQ(0, frac_submit(&self->dev, 0, &cl, NULL, &ids[2 * r + 1]));
	}
	for (r = 0; r < 2 * rounds; r++) {
		ASSERT_EQ(0, frac_wait(&self->dev, ids[r], -1, &res));
		ASSERT_EQ(0, res.status) TH_LOG("job %llu", (unsigned long long)r);
	}
	for (r = 0; r < rounds; r++) {
		for (j = 0; j < len; j++)
			want[j] = frac_fill_byte(0x01020304u * (uint32_t)(r + 1), j);
		frac_t_read(&self->dst, r * len, got, len);
		EXPECT_EQ(-1, frac_first_diff(got, want, len))
			TH_LOG("round %llu: the copy did not read its fill", (unsigned long long)r);
	}
}

TEST_HARNESS_MAIN
