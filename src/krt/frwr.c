// SPDX-License-Identifier: GPL-2.0
/*
 * krt: FRWR registration of page lists.
 *
 * DOC: Memory registration
 *
 * Every connection has a pool of fast-registration MRs
 * (``ib_mr_pool_init()`` on the QP's ``rdma_mrs``, ``IB_MR_TYPE_MEM_REG``),
 * one per request slot, each able to map the negotiated max IO size.  A
 * buffer is a &struct bio_vec array; it is DMA-mapped, mapped into an MR
 * with ``ib_map_mr_sg()`` and registered with an ``IB_WR_REG_MR`` work
 * request chained in front of the work request that uses it, so one post
 * does both.  The key of the MR changes with every registration
 * (``ib_inc_rkey()``), so a stale rkey held by a peer never matches again.
 *
 * Client side: REG_MR + SEND of the request advertising address, rkey and
 * length.  The server answers with SEND_WITH_INV where both devices allow
 * it, which invalidates the MR on arrival; otherwise the client posts a
 * LOCAL_INV.  Either way the request completes, and its pages go back to
 * the caller, only once the MR is invalid.
 *
 * Server side: REG_MR + RDMA READ or WRITE (unsignalled) + LOCAL_INV
 * (signalled and fenced, so it waits for the READ's data); its completion
 * ends the transfer.
 *
 * An MR goes back to the pool only when it is invalid or when the QP has
 * been drained; the pool is destroyed (every MR deregistered) before the
 * requests of a failed connection are completed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/scatterlist.h>
#include <linux/slab.h>
#include "krt.h"

/**
 * krt_frwr_check() - can one MR map a buffer?
 * @bv: the segments
 * @nr: their number
 * @len: set to the total length
 * @pages: set to the pages the MR needs
 *
 * Only the first segment may start and only the last may end inside a
 * page: an MR maps a list of whole pages plus a first offset.
 *
 * Return: 0, or -EINVAL for an empty buffer or one with gaps.
 */
int krt_frwr_check(const struct bio_vec *bv, unsigned int nr, u32 *len,
		   u32 *pages)
{
	u64 total = 0;
	unsigned int i;

	if (!bv || !nr)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		/* no u32 sum that could wrap */
		if (!bv[i].bv_len || bv[i].bv_len > PAGE_SIZE ||
		    bv[i].bv_offset > PAGE_SIZE - bv[i].bv_len)
			return -EINVAL;
		if (i > 0 && bv[i].bv_offset)
			return -EINVAL;
		if (i < nr - 1 && bv[i].bv_offset + bv[i].bv_len != PAGE_SIZE)
			return -EINVAL;
		total += bv[i].bv_len;
	}
	if (total > U32_MAX)
		return -EINVAL;
	*len = total;
	*pages = nr;
	return 0;
}

/**
 * krt_frwr_sg_fill() - describe a buffer's segments in a scatterlist
 * @sgl: at least @nr entries (preallocated with the slot or server request)
 * @bv: the segments, checked by krt_frwr_check()
 * @nr: their number
 */
void krt_frwr_sg_fill(struct scatterlist *sgl, const struct bio_vec *bv, unsigned int nr)
{
	unsigned int i;

	sg_init_table(sgl, nr);
	for (i = 0; i < nr; i++)
		sg_set_page(&sgl[i], bv[i].bv_page, bv[i].bv_len, bv[i].bv_offset);
}

/**
 * krt_frwr_map() - DMA-map a scatterlist for a device
 * @ibdev: the device; caller makes sure it stays (queue lock, QP not
 *	drained)
 * @sgl: from krt_frwr_sg_fill()
 * @nr: its entries
 * @dir: DMA direction
 *
 * Return: the number of mapped entries (at least 1), or -EIO.
 */
int krt_frwr_map(struct ib_device *ibdev, struct scatterlist *sgl, unsigned int nr,
		 enum dma_data_direction dir)
{
	int nents = krt_fault_register() ? 0 : ib_dma_map_sg(ibdev, sgl, nr, dir);

	return nents ? nents : -EIO;
}

/**
 * krt_frwr_reg() - map a scatterlist into an MR and build its REG_MR
 * @mr: an MR of the connection's pool
 * @sgl: mapped scatterlist
 * @nents: mapped entries
 * @reg: the work request to fill; the caller sets wr_cqe, flags and next
 * @access: IB_ACCESS_* for the registration
 *
 * The MR gets a new key, so rkeys of earlier registrations stop working.
 *
 * Return: 0, or -EIO if the MR cannot map the whole list.
 */
int krt_frwr_reg(struct ib_mr *mr, struct scatterlist *sgl, int nents,
		 struct ib_reg_wr *reg, int access)
{
	int n;

	n = krt_fault_register() ? 0 : ib_map_mr_sg(mr, sgl, nents, NULL, PAGE_SIZE);
	if (n != nents)
		return -EIO;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	memset(reg, 0, sizeof(*reg));
	reg->wr.opcode = IB_WR_REG_MR;
	reg->mr = mr;
	reg->key = mr->rkey;
	reg->access = access;
	return 0;
}

/**
 * krt_frwr_inv() - build the LOCAL_INV of an MR
 * @wr: the work request to fill; the caller sets flags and next
 * @mr: the MR
 * @cqe: completion handler
 */
void krt_frwr_inv(struct ib_send_wr *wr, struct ib_mr *mr, struct ib_cqe *cqe)
{
	memset(wr, 0, sizeof(*wr));
	wr->opcode = IB_WR_LOCAL_INV;
	wr->ex.invalidate_rkey = mr->rkey;
	wr->wr_cqe = cqe;
}
