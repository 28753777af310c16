// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * Buffer objects. Host BOs are shmem GEM objects whose pages are pinned and
 * DMA-mapped at creation; their DMA segments are also written once as a device
 * SG list, which jobs chain into. Both are given back at the BO's free, or at
 * the device's removal if that comes first (frac_gem_unplug()). Device BOs are
 * ranges of the device memory BAR handed out by a drm_mm allocator and mapped
 * write-combined.
 */

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>

#include <frac_accel.h>

#include "frac_drv.h"
#include "frac_trace.h"

/* ---- Host BOs ----------------------------------------------------------- */

/* @bo's mappings are made: on the device's list, for removal to find. */
static void frac_bo_dma_track(struct frac_device *fdev, struct frac_bo *bo)
{
	atomic_inc(&fdev->dma_bos_mapped);
	mutex_lock(&fdev->dma_lock);
	list_add_tail(&bo->dma_link, &fdev->dma_bos);
	mutex_unlock(&fdev->dma_lock);
}

/*
 * Detach the import @bo from its exporter's dma-buf at the device's removal,
 * keeping the dma-buf's reference for the BO's resv (frac_shmem_free() puts
 * it). Off the imports first, where frac_import_find() reads import_attach;
 * nothing else does once the device is unplugged: its ioctls and new mmaps
 * fail (frac_shmem_mmap()), and the BO's mmaps are the exporter's.
 */
static void frac_import_detach(struct frac_device *fdev, struct frac_bo *bo)
{
	struct drm_gem_object *obj = &bo->base.base;
	struct dma_buf_attachment *attach = obj->import_attach;

	mutex_lock(&fdev->import_lock);
	list_del_init(&bo->import_link);
	mutex_unlock(&fdev->import_lock);
	obj->import_attach = NULL;
	bo->detached = attach->dmabuf;
	dma_buf_detach(attach->dmabuf, attach);
}

/*
 * Give back what the device could reach of @bo, taken off dma_bos by the
 * caller (who does it once): its device SG list, its pages' mapping in the
 * BO's direction, an import's mapping by the exporter (whose reservation
 * lock that takes, so not under dma_lock). The pages stay pinned until the
 * BO's free. At removal (@unplug) an import is also detached: an exporter
 * that caches its mapping (udmabuf) unmaps it only then.
 */
static void frac_bo_dma_release(struct frac_device *fdev, struct frac_bo *bo, bool unplug)
{
	struct drm_gem_object *obj = &bo->base.base;
	bool traced = trace_frac_dma_unmap_enabled();
	u64 t0 = traced ? ktime_get_ns() : 0;
	u32 nsegs = bo->nsegs;

	if (bo->sgl)
		dma_free_coherent(fdev->drm.dev, bo->nsegs * sizeof(*bo->sgl), bo->sgl,
				  bo->sgl_dma);
	bo->sgl = NULL;
	bo->nsegs = 0;
	if (bo->dma_sgt) {
		/*
		 * Our mapping, in its direction. Without a copy back from a bounce
		 * buffer: each job that succeeded synced what it wrote
		 * (frac_bo_sync()), and a copy of the whole buffer now would
		 * overwrite what the CPU wrote since, through the BO's mmaps,
		 * which outlive a removal.
		 */
		dma_unmap_sgtable(fdev->drm.dev, bo->dma_sgt, bo->dir, DMA_ATTR_SKIP_CPU_SYNC);
		sg_free_table(bo->dma_sgt);
		kfree(bo->dma_sgt);
		bo->dma_sgt = NULL;
	}
	if (obj->import_attach && bo->base.sgt) {
		/* drm_prime_gem_destroy() then only detaches (sgt NULL). */
		dma_buf_unmap_attachment_unlocked(obj->import_attach, bo->base.sgt,
						  DMA_BIDIRECTIONAL);
		bo->base.sgt = NULL;
	}
	if (unplug && obj->import_attach)
		frac_import_detach(fdev, bo);
	if (traced)
		trace_frac_dma_unmap(fdev->minor, obj->size, nsegs, bo->dir,
				     ktime_get_ns() - t0);
	if (atomic_dec_and_test(&fdev->dma_bos_mapped))
		wake_up_all(&fdev->dma_wq);
}

/*
 * Device removal, once the device can no longer reach host memory (stopped,
 * bus mastering off): every host BO gives its mappings back now, not at its
 * free, when the device and its DMA setup are gone (DMA-API debug: "device
 * driver has pending DMA allocations while released from device"). The BOs
 * live on for their files: their pages stay pinned, mmaps and exports keep
 * working, and their free then finds them off the list, with nothing to
 * unmap. A BO whose last reference is gone is left to its free, which is
 * waited for.
 */
void frac_gem_unplug(struct frac_device *fdev)
{
	struct frac_bo *bo, *found;
	unsigned int n = 0;

	do {
		found = NULL;
		mutex_lock(&fdev->dma_lock);
		list_for_each_entry(bo, &fdev->dma_bos, dma_link) {
			if (kref_get_unless_zero(&bo->base.base.refcount)) {
				list_del_init(&bo->dma_link);
				found = bo;
				break;
			}
		}
		mutex_unlock(&fdev->dma_lock);
		if (found) {
			frac_bo_dma_release(fdev, found, true);
			drm_gem_object_put(&found->base.base);
			n++;
			cond_resched();
		}
	} while (found);
	wait_event(fdev->dma_wq, !atomic_read(&fdev->dma_bos_mapped));
	frac_dbg(fdev, BO, "unplug: DMA mappings of %u BOs given back\n", n);
}

static void frac_shmem_free(struct drm_gem_object *obj)
{
	struct frac_device *fdev = to_frac_device(obj->dev);
	struct frac_bo *bo = to_frac_bo(obj);
	struct dma_buf *detached = bo->detached;
	bool mapped;

	/* Off the list: the removal gave the mappings back if not on it. */
	mutex_lock(&fdev->dma_lock);
	mapped = !list_empty(&bo->dma_link);
	list_del_init(&bo->dma_link);
	mutex_unlock(&fdev->dma_lock);
	if (mapped)
		frac_bo_dma_release(fdev, bo, false);
	/* Then our pin of the pages. */
	if (bo->pinned)
		drm_gem_shmem_unpin(&bo->base);
	/* Off the imports before the attachment goes: no import finds it since its last put. */
	if (!list_empty(&bo->import_link)) {
		mutex_lock(&fdev->import_lock);
		list_del_init(&bo->import_link);
		mutex_unlock(&fdev->import_lock);
	}
	/* Frees @bo (an imported one: detached from the exporter's dma-buf). */
	drm_gem_shmem_free(&bo->base);
	if (detached)
		dma_buf_put(detached);
}

/*
 * drm_gem_mmap() refuses an unplugged device, but a mapping that passed its
 * check could still run into the removal's frac_import_detach() here: inside
 * drm_dev_enter() it cannot.
 */
static int frac_shmem_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	int idx, ret;

	if (!drm_dev_enter(obj->dev, &idx))
		return -ENODEV;
	ret = drm_gem_shmem_object_mmap(obj, vma);
	drm_dev_exit(idx);
	return ret;
}

static enum drm_gem_object_status frac_shmem_status(struct drm_gem_object *obj)
{
	return to_frac_bo(obj)->base.pages ? DRM_GEM_OBJECT_RESIDENT : 0;
}

static const struct drm_gem_object_funcs frac_shmem_funcs = {
	.free = frac_shmem_free,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = frac_shmem_mmap,
	.status = frac_shmem_status,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

struct drm_gem_object *frac_gem_create_object(struct drm_device *dev, size_t size)
{
	struct frac_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->base.base.funcs = &frac_shmem_funcs;
	bo->base.map_wc = false;
	INIT_LIST_HEAD(&bo->import_link);
	INIT_LIST_HEAD(&bo->dma_link);
	return &bo->base.base;
}

/* The live BO imported from @dma_buf, with a reference, or NULL. */
static struct drm_gem_object *frac_import_find(struct frac_device *fdev,
					       struct dma_buf *dma_buf)
{
	struct frac_bo *bo;

	lockdep_assert_held(&fdev->import_lock);
	list_for_each_entry(bo, &fdev->imports, import_link) {
		struct drm_gem_object *obj = &bo->base.base;

		/* One whose last reference is gone is being freed: not found. */
		if (obj->import_attach->dmabuf == dma_buf && kref_get_unless_zero(&obj->refcount))
			return obj;
	}
	return NULL;
}

/*
 * PRIME import. drm_gem_prime_import() attaches another exporter's dma-buf
 * and maps its pages for the device once per importing file; a dma-buf
 * imported into a second file (directly, or re-exported from the first)
 * would be mapped again, and two live mappings of one page for one device
 * are what the DMA API does not support (DMA-API debug: "cacheline
 * tracking EEXIST, overlapping mappings aren't supported"). Every file gets
 * the one BO instead, as for our own exports. Not under import_lock while
 * importing (the attachment takes the dma-buf's reservation lock, and a BO
 * can be freed with one held): two first imports racing keep the first
 * one's BO. Inside drm_dev_enter(), as the exporter maps the pages for the
 * device: a removal's frac_gem_unplug() comes after, and finds the BO.
 */
struct drm_gem_object *frac_gem_prime_import(struct drm_device *dev, struct dma_buf *dma_buf)
{
	struct frac_device *fdev = to_frac_device(dev);
	struct drm_gem_object *obj, *other;
	int idx;

	mutex_lock(&fdev->import_lock);
	obj = frac_import_find(fdev, dma_buf);
	mutex_unlock(&fdev->import_lock);
	if (obj)
		return obj;

	if (!drm_dev_enter(dev, &idx))
		return ERR_PTR(-ENODEV);
	obj = drm_gem_prime_import(dev, dma_buf);
	drm_dev_exit(idx);
	/* Our own exports come back as they are, not attached: nothing to note. */
	if (IS_ERR(obj) || !obj->import_attach || obj->funcs != &frac_shmem_funcs)
		return obj;
	mutex_lock(&fdev->import_lock);
	other = frac_import_find(fdev, dma_buf);
	if (!other)
		list_add(&to_frac_bo(obj)->import_link, &fdev->imports);
	mutex_unlock(&fdev->import_lock);
	if (other) {
		drm_gem_object_put(obj);
		return other;
	}
	return obj;
}

/*
 * Write the DMA segments of @sgt as the BO's device SG list. A job's operand
 * walks at most two entries of its ring slot and the rest of this list, so
 * the list must fit the device's per-operand SG limit less those two.
 */
static noinline int frac_bo_build_sgl(struct frac_device *fdev, struct frac_bo *bo,
				      struct sg_table *sgt)
{
	struct scatterlist *sg;
	u32 i;

	if (sgt->nents > fdev->sgl_max - 2) {
		frac_dbg(fdev, BO, "%u DMA segments, device takes %u\n", sgt->nents,
			 fdev->sgl_max - 2);
		return -E2BIG;
	}
	bo->sgl = dma_alloc_coherent(fdev->drm.dev, sgt->nents * sizeof(*bo->sgl),
				     &bo->sgl_dma, GFP_KERNEL);
	if (!bo->sgl)
		return -ENOMEM;
	bo->nsegs = sgt->nents;
	for_each_sgtable_dma_sg(sgt, sg, i) {
		bo->sgl[i].addr = cpu_to_le64(sg_dma_address(sg));
		bo->sgl[i].len = cpu_to_le32(sg_dma_len(sg));
		bo->sgl[i].flags = 0;
	}
	return 0;
}
ALLOW_ERROR_INJECTION(frac_bo_build_sgl, ERRNO);

/*
 * Bounce buffering: when the DMA API gives the device a bounce copy of the
 * pages (swiotlb: swiotlb=force, a confidential guest, a DMA mask the pages
 * lie above), the copy is made once, at the mapping, and the BO keeps its
 * bounce slots until its mappings are given back. Each job then copies what
 * it names: every operand's range to the device before its ring write, and
 * its destinations' ranges back before its end is visible (frac_bo_sync(),
 * from the queue's ring write and completion). An import is the exporter's
 * mapping, which frac does not sync: under bounce buffering its jobs see the
 * contents the import was mapped with, and their writes stay in the bounce
 * buffer.
 */
static bool frac_bo_dma_need_sync(struct frac_device *fdev, struct sg_table *sgt)
{
	struct scatterlist *sg;
	u32 i;

	for_each_sgtable_dma_sg(sgt, sg, i)
		if (dma_need_sync(fdev->drm.dev, sg_dma_address(sg)))
			return true;
	return false;
}

/*
 * Sync [@offset, @offset + @len) of a host BO whose mapping needs it, for
 * the device (before it reads or writes the range) or for the CPU (after it
 * wrote it), in the BO's direction: the device addresses the BO as its DMA
 * segments one after another (frac_bo_build_sgl()), so the range is found
 * the same way. In any context (the completion interrupt too); with
 * @may_sleep, it gives the CPU up between segments.
 */
void frac_bo_sync(struct frac_device *fdev, struct frac_bo *bo, u64 offset, u64 len,
		  bool for_cpu, bool may_sleep)
{
	struct device *dev = fdev->drm.dev;
	struct scatterlist *sg;
	u32 i;

	/*
	 * Merged segments (an IOMMU's) are no one physical range each: the
	 * single-range syncs below would be wrong for them; sync it all.
	 */
	if (bo->dma_sgt->nents != bo->dma_sgt->orig_nents) {
		if (for_cpu)
			dma_sync_sgtable_for_cpu(dev, bo->dma_sgt, bo->dir);
		else
			dma_sync_sgtable_for_device(dev, bo->dma_sgt, bo->dir);
		return;
	}
	for_each_sgtable_dma_sg(bo->dma_sgt, sg, i) {
		u64 seg = sg_dma_len(sg), n;

		if (offset >= seg) {
			offset -= seg;
			continue;
		}
		n = min(seg - offset, len);
		if (for_cpu)
			dma_sync_single_range_for_cpu(dev, sg_dma_address(sg), offset, n, bo->dir);
		else
			dma_sync_single_range_for_device(dev, sg_dma_address(sg), offset, n,
							 bo->dir);
		len -= n;
		if (!len)
			break;
		offset = 0;
		if (may_sleep)
			cond_resched();
	}
}

/*
 * Pin and map the pages, in the BO's direction, and describe the DMA segments
 * to the device. Not drm_gem_shmem_get_pages_sgt(): it maps every BO
 * DMA_BIDIRECTIONAL. frac_shmem_free() unmaps (a mapped BO is on dma_bos) and
 * unpins (bo->pinned) before drm_gem_shmem_free(), whatever failed here; a
 * mapping error is -ENOMEM (dma_map_sgtable()'s -EIO/-EINVAL/-EREMOTEIO are
 * no BO_CREATE errno).
 */
static noinline int frac_shmem_map(struct frac_device *fdev, struct frac_bo *bo)
{
	bool traced = trace_frac_dma_map_enabled();
	u64 t0 = traced ? ktime_get_ns() : 0;
	struct sg_table *sgt;
	int ret;

	ret = drm_gem_shmem_pin(&bo->base);
	if (ret)
		return ret;
	bo->pinned = true;
	sgt = drm_gem_shmem_get_sg_table(&bo->base);
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);
	ret = dma_map_sgtable(fdev->drm.dev, sgt, bo->dir, 0);
	if (ret) {
		sg_free_table(sgt);
		kfree(sgt);
		return -ENOMEM;
	}
	bo->dma_sgt = sgt;
	bo->need_sync = frac_bo_dma_need_sync(fdev, sgt);
	frac_bo_dma_track(fdev, bo);
	ret = frac_bo_build_sgl(fdev, bo, sgt);
	if (ret)
		return ret;
	if (traced)
		trace_frac_dma_map(fdev->minor, bo->base.base.size, bo->nsegs, bo->dir,
				   ktime_get_ns() - t0);
	return 0;
}
ALLOW_ERROR_INJECTION(frac_shmem_map, ERRNO);

/*
 * A dma-buf of another exporter: the exporter mapped its pages for our
 * device; describe them to the device like our own host BOs.
 */
struct drm_gem_object *frac_gem_prime_import_sg_table(struct drm_device *dev,
						      struct dma_buf_attachment *attach,
						      struct sg_table *sgt)
{
	struct drm_gem_object *obj;
	int ret;

	struct scatterlist *sg;
	u64 mapped = 0;
	u32 i;

	/* Jobs may reach every byte of the BO: the table must cover it. */
	for_each_sgtable_dma_sg(sgt, sg, i)
		mapped += sg_dma_len(sg);
	if (mapped < PAGE_ALIGN(attach->dmabuf->size))
		return ERR_PTR(-EINVAL);

	obj = drm_gem_shmem_prime_import_sg_table(dev, attach, sgt);
	if (IS_ERR(obj))
		return obj;
	ret = frac_bo_build_sgl(to_frac_device(dev), to_frac_bo(obj), sgt);
	if (ret) {
		/*
		 * The PRIME core sets import_attach only when we return, so the
		 * object would free @sgt as its own, and then the core unmaps
		 * it again: the table is the exporter's, not ours to free.
		 */
		to_frac_bo(obj)->base.sgt = NULL;
		drm_gem_object_put(obj);
		return ERR_PTR(ret);
	}
	frac_bo_dma_track(to_frac_device(dev), to_frac_bo(obj));
	return obj;
}

/* The DMA direction of a host BO with these DRM_FRAC_BO_* flags. */
static enum dma_data_direction frac_bo_dir(u32 flags)
{
	if (flags & DRM_FRAC_BO_TO_DEVICE)
		return DMA_TO_DEVICE;
	if (flags & DRM_FRAC_BO_FROM_DEVICE)
		return DMA_FROM_DEVICE;
	return DMA_BIDIRECTIONAL;
}

static struct drm_gem_object *frac_host_bo_create(struct frac_device *fdev, u64 size,
						  u32 flags)
{
	struct drm_gem_shmem_object *shmem;
	struct frac_bo *bo;
	int ret;

	shmem = drm_gem_shmem_create(&fdev->drm, size);
	/*
	 * shmem reports a failed inode allocation as -ENOSPC; for BO_CREATE
	 * that errno means device memory is full: a host BO that could not be
	 * allocated is -ENOMEM (seen with fail-nth, frac_failnth_test).
	 */
	if (PTR_ERR_OR_ZERO(shmem) == -ENOSPC)
		return ERR_PTR(-ENOMEM);
	if (IS_ERR(shmem))
		return ERR_CAST(shmem);
	bo = to_frac_bo(&shmem->base);
	bo->flags = flags;
	bo->dir = frac_bo_dir(flags);
	ret = frac_shmem_map(fdev, bo);
	if (ret) {
		drm_gem_object_put(&shmem->base);
		/* shmem's page accounting (VM_NORESERVE) fails with -ENOSPC too */
		return ERR_PTR(ret == -ENOSPC ? -ENOMEM : ret);
	}
	return &shmem->base;
}

/* ---- Device BOs --------------------------------------------------------- */

static void frac_devmem_free(struct drm_gem_object *obj)
{
	struct frac_device *fdev = to_frac_device(obj->dev);
	struct frac_bo *bo = to_frac_bo(obj);

	mutex_lock(&fdev->devmem_lock);
	if (drm_mm_node_allocated(&bo->node))
		drm_mm_remove_node(&bo->node);
	mutex_unlock(&fdev->devmem_lock);
	if (bo->dummy)
		__free_page(bo->dummy);
	drm_gem_free_mmap_offset(obj);
	drm_gem_object_release(obj);
	kfree(bo);
}

/*
 * Device BO mappings are filled in at fault time, under drm_dev_enter(), and
 * never at mmap(): mmap_region() links the VMA into the file's mapping only
 * after ->mmap returns, so PTEs written there could escape the zap of
 * drm_dev_unplug() (its unmap_mapping_range() runs once the SRCU grace
 * period is over, and finds only linked VMAs).
 *
 * Once the device is gone, a fault maps the BO's dummy page instead, as TTM
 * does (ttm_bo_vm_dummy_page()): Documentation/gpu/drm-uapi.rst wants reads
 * and writes of a mapping to keep completing, with undefined results, and
 * SIGBUS ruled out. The page is the BO's own, so what one mapping writes
 * there only the BO's other mappings (its own client's) can read.
 */
#define FRAC_DEVMEM_PREFAULT	16UL	/* pages per fault, as TTM's TTM_BO_VM_NUM_PREFAULT */

static vm_fault_t frac_devmem_fault_dummy(struct vm_fault *vmf, struct frac_bo *bo,
					  unsigned long npages)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long addr = vmf->address, pfn, i;
	struct page *page = READ_ONCE(bo->dummy);
	vm_fault_t ret = VM_FAULT_NOPAGE;

	if (!page) {
		struct page *old;

		/* Charged to the faulting task's memory cgroup, as a host BO is. */
		page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!page)
			return VM_FAULT_OOM;
		old = cmpxchg(&bo->dummy, NULL, page);
		if (old) {
			__free_page(page);
			page = old;
		}
	}
	pfn = page_to_pfn(page);
	/* System memory: the VMA's cache mode and encryption are the BAR's, not its. */
	for (i = 0; i < npages; i++, addr += PAGE_SIZE) {
		vm_fault_t r = vmf_insert_pfn_prot(vma, addr, pfn,
						   vm_get_page_prot(vma->vm_flags));

		if (!i)
			ret = r;
		if (r & VM_FAULT_ERROR)
			break;
	}
	return ret;
}

static vm_fault_t frac_devmem_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct drm_gem_object *obj = vma->vm_private_data;
	struct frac_device *fdev = to_frac_device(obj->dev);
	struct frac_bo *bo = to_frac_bo(obj);
	unsigned long addr = vmf->address, pfn;
	pgoff_t pgoff = vmf->pgoff, npages, i;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	int idx;

	npages = min3(FRAC_DEVMEM_PREFAULT, (obj->size >> PAGE_SHIFT) - pgoff,
		      (vma->vm_end - addr) >> PAGE_SHIFT);
	if (!drm_dev_enter(obj->dev, &idx))
		return frac_devmem_fault_dummy(vmf, bo, npages);
	pfn = ((fdev->devmem_base + bo->node.start) >> PAGE_SHIFT) + pgoff;
	for (i = 0; i < npages; i++, addr += PAGE_SIZE) {
		vm_fault_t r = vmf_insert_pfn_prot(vma, addr, pfn + i, vma->vm_page_prot);

		/* The faulting page decides; a prefault that fails ends the loop. */
		if (!i)
			ret = r;
		if (r & VM_FAULT_ERROR)
			break;
	}
	drm_dev_exit(idx);
	return ret;
}

static int frac_devmem_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	if (vma->vm_end - vma->vm_start > obj->size)
		return -EINVAL;
	/*
	 * Device memory has no pages to copy on write: a private mapping is
	 * refused, as drm_gem_shmem and TTM refuse theirs (and
	 * vmf_insert_pfn_prot() BUGs on a COW VM_PFNMAP mapping).
	 */
	if (is_cow_mapping(vma->vm_flags))
		return -EINVAL;
	/*
	 * Nothing here touches the device. drm_gem_mmap() refuses a mapping
	 * once the device is unplugged (-ENODEV); one that passed its check
	 * just before gets the dummy page at its first fault.
	 */
	/* drm_gem_mmap() left the fake offset in vm_pgoff: map from the BO start. */
	vma->vm_pgoff = 0;
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	/* MMIO is never encrypted (what io_remap_pfn_range() added before). */
	vma->vm_page_prot =
		pgprot_decrypted(pgprot_writecombine(vm_get_page_prot(vma->vm_flags)));
	return 0;
}

static enum drm_gem_object_status frac_devmem_status(struct drm_gem_object *obj)
{
	return DRM_GEM_OBJECT_RESIDENT;
}

static struct dma_buf *frac_devmem_export(struct drm_gem_object *obj, int flags)
{
	/* Device memory has no struct pages to share. */
	return ERR_PTR(-EOPNOTSUPP);
}

static const struct vm_operations_struct frac_devmem_vm_ops = {
	.fault = frac_devmem_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static const struct drm_gem_object_funcs frac_devmem_funcs = {
	.free = frac_devmem_free,
	.mmap = frac_devmem_mmap,
	.status = frac_devmem_status,
	.export = frac_devmem_export,
	.vm_ops = &frac_devmem_vm_ops,
};

/* Zero [@start, @start + @size) of device memory, a MiB at a time. */
static int frac_devmem_clear(struct frac_device *fdev, u64 start, u64 size)
{
	u64 off, n;

	for (off = 0; off < size; off += n) {
		n = min_t(u64, size - off, SZ_1M);
		memset_io(fdev->devmem_va + start + off, 0, n);
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	/* The zeros leave the CPU's write-combining buffers before use. */
	wmb();
	return 0;
}

static noinline struct drm_gem_object *frac_devmem_bo_create(struct frac_device *fdev, u64 size)
{
	struct drm_gem_object *obj;
	struct frac_bo *bo;
	int ret;

	if (size > fdev->devmem_size)
		return ERR_PTR(-ENOSPC);
	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->flags = DRM_FRAC_BO_DEVMEM;
	obj = &bo->base.base;
	obj->funcs = &frac_devmem_funcs;
	drm_gem_private_object_init(&fdev->drm, obj, size);

	mutex_lock(&fdev->devmem_lock);
	ret = drm_mm_insert_node_generic(&fdev->devmem_mm, &bo->node, size, PAGE_SIZE,
					 0, DRM_MM_INSERT_BEST);
	mutex_unlock(&fdev->devmem_lock);
	if (ret)
		goto err_put;
	ret = drm_gem_create_mmap_offset(obj);
	if (ret)
		goto err_put;
	/*
	 * Device memory keeps what its last owner left: clear it before it is
	 * handed out. Through the CPU's write-combined mapping of BAR2, so no
	 * job of the submission path waits behind it.
	 */
	ret = frac_devmem_clear(fdev, bo->node.start, size);
	if (ret)
		goto err_put;
	return obj;

err_put:
	drm_gem_object_put(obj);
	return ERR_PTR(ret);
}
ALLOW_ERROR_INJECTION(frac_devmem_bo_create, ERRNO);

bool frac_bo_is_devmem(struct drm_gem_object *obj)
{
	return obj->funcs == &frac_devmem_funcs;
}

/* ---- ioctls ------------------------------------------------------------- */

int frac_bo_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct frac_device *fdev = to_frac_device(dev);
	struct drm_frac_bo_create *args = data;
	struct drm_gem_object *obj;
	u64 size;
	int idx, ret;

	if (args->flags & ~DRM_FRAC_BO_FLAGS)
		return -EINVAL;
	/* One direction at most, and only for host BOs: device memory is not DMA-mapped. */
	if (hweight32(args->flags & (DRM_FRAC_BO_TO_DEVICE | DRM_FRAC_BO_FROM_DEVICE)) > 1 ||
	    ((args->flags & DRM_FRAC_BO_DEVMEM) &&
	     (args->flags & (DRM_FRAC_BO_TO_DEVICE | DRM_FRAC_BO_FROM_DEVICE))))
		return -EINVAL;
	if (!args->size || args->size > FRAC_MAX_XFER)
		return -EINVAL;
	size = PAGE_ALIGN(args->size);

	/* Device memory that direct jobs which ended still hold (frac_job_reap()). */
	frac_job_reap_sync(fdev);
	if (!drm_dev_enter(dev, &idx))
		return -ENODEV;
	if (args->flags & DRM_FRAC_BO_DEVMEM)
		obj = frac_devmem_bo_create(fdev, size);
	else
		obj = frac_host_bo_create(fdev, size, args->flags);
	if (IS_ERR(obj)) {
		ret = PTR_ERR(obj);
		goto out;
	}
	ret = drm_gem_handle_create(file, obj, &args->handle);
	/* The handle holds the object now, or it is freed. */
	drm_gem_object_put(obj);
	frac_dbg(fdev, BO, "%s BO %u: %llu bytes\n",
		 args->flags & DRM_FRAC_BO_DEVMEM ? "device" : "host", args->handle, size);
out:
	drm_dev_exit(idx);
	return ret;
}

int frac_bo_info_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_frac_bo_info *args = data;
	struct drm_gem_object *obj;
	struct frac_bo *bo;
	int ret;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_frac_bo(obj);
	ret = drm_gem_create_mmap_offset(obj);
	if (!ret) {
		args->flags = bo->flags;
		args->size = obj->size;
		args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
		args->devmem_offset = frac_bo_is_devmem(obj) ? bo->node.start : 0;
	}
	drm_gem_object_put(obj);
	return ret;
}
