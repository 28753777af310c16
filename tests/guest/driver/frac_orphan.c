// SPDX-License-Identifier: MIT
/*
 * frac_orphan: leave jobs behind and exit. A helper of tests/guest/reload.sh,
 * not a test itself.
 *
 * Usage: frac_orphan [LATENCY_MS [RING_JOBS]]
 *
 * On every queue: a job held in flight by LATENCY_MS of injected latency
 * (when the device has fault injection), RING_JOBS (default 0) more jobs on
 * the ring behind it, a job queued behind it through an in syncobj, and a job
 * on the next queue depending on it too; every job has its own BOs (host and
 * device memory). Then it exits without waiting,
 * closing nothing itself: the kernel closes the file with all of that still
 * pending. Exit status 0 if everything was submitted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frac_test.h"

int main(int argc, char **argv)
{
	unsigned long latency = argc > 1 ? strtoul(argv[1], NULL, 0) : 3000;
	unsigned long ring_jobs = argc > 2 ? strtoul(argv[2], NULL, 0) : 0, j;
	struct frac_submit_opts opts = { .priority = DRM_FRAC_PRIO_NORMAL };
	struct frac_cmdlist cl;
	struct frac_dev dev;
	struct frac_bo bo;
	uint32_t q, so, id;
	char what[64];
	int ret;

	ret = frac_open(-1, &dev);
	if (ret) {
		fprintf(stderr, "frac_orphan: no frac device: %s\n", strerror(-ret));
		return 1;
	}
	for (q = 0; q < dev.num_queues; q++) {
		if (latency && (dev.features & DRM_FRAC_FEAT_FAULT_INJ)) {
			snprintf(what, sizeof(what), "latency %u %lu", q, latency);
			ret = frac_t_inject(&dev, what);
			if (ret)
				fprintf(stderr, "frac_orphan: inject %s: %s\n", what, strerror(-ret));
		}
		ret = frac_t_syncobj_create(dev.fd, &so);
		if (!ret)
			ret = frac_bo_create(&dev, 1 << 20, 0, &bo);
		if (ret)
			goto fail;
		frac_cmdlist_init(&cl);
		frac_cmd_fill(&cl, &bo, 0, 1 << 20, q);
		opts.in_syncobj = 0;
		opts.out_syncobj = so;
		ret = frac_submit(&dev, q, &cl, &opts, &id);
		if (ret)
			goto fail;

		/* More on the ring behind it. */
		for (j = 0; j < ring_jobs; j++) {
			ret = frac_bo_create(&dev, 4096, 0, &bo);
			if (ret)
				goto fail;
			frac_cmdlist_init(&cl);
			frac_cmd_fill(&cl, &bo, 0, 4096, (uint32_t)j);
			ret = frac_submit(&dev, q, &cl, NULL, &id);
			if (ret)
				goto fail;
		}

		/* Behind it on the same queue, and on the next one. */
		opts.in_syncobj = so;
		opts.out_syncobj = 0;
		ret = frac_bo_create(&dev, 1 << 16, dev.features & DRM_FRAC_FEAT_DEVMEM ?
				     DRM_FRAC_BO_DEVMEM : 0, &bo);
		if (ret)
			goto fail;
		frac_cmdlist_init(&cl);
		frac_cmd_fill(&cl, &bo, 0, 1 << 16, q);
		ret = frac_submit(&dev, q, &cl, &opts, &id);
		if (!ret)
			ret = frac_submit(&dev, (q + 1) % dev.num_queues, &cl, &opts, &id);
		if (ret)
			goto fail;
	}
	return 0;
fail:
	fprintf(stderr, "frac_orphan: %s\n", strerror(-ret));
	return 1;
}
