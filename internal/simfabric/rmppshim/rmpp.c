/*
 * rmpp.c: RMPP segmentation, reassembly and window arithmetic; see rmpp.h.
 *
 * Written for this project from the protocol's published description (IBA
 * 13.6) and the behaviour of Linux's drivers/infiniband/core/mad_rmpp.c as
 * observed from user space: the first window is one segment; a receiver
 * acknowledges the first segment, every window's last and the message's
 * last, announcing windows of 64; PayloadLength counts, on the first
 * segment, every segment's 220 bytes after the RMPP header minus the pad of
 * the last, and on the last that segment's own.
 */
#include "rmpp.h"

#include <stdlib.h>
#include <string.h>

/* Management classes whose MADs the kernel segments (ib_is_mad_class_rmpp). */
enum {
	CLASS_SUBN_ADM = 0x03,
	CLASS_DEVICE_MGMT = 0x06,
	CLASS_DEVICE_ADM = 0x10,
	CLASS_BIS = 0x12,
	CLASS_VENDOR_RANGE2_START = 0x30,
	CLASS_VENDOR_RANGE2_END = 0x4f,
};

int rmpp_is_class(uint8_t mgmt_class)
{
	return mgmt_class == CLASS_SUBN_ADM || mgmt_class == CLASS_DEVICE_MGMT ||
	       mgmt_class == CLASS_DEVICE_ADM || mgmt_class == CLASS_BIS ||
	       (mgmt_class >= CLASS_VENDOR_RANGE2_START &&
		mgmt_class <= CLASS_VENDOR_RANGE2_END);
}

int rmpp_hdr_len(uint8_t mgmt_class)
{
	switch (mgmt_class) {
	case CLASS_SUBN_ADM:
		return 56; /* + SM_Key, AttributeOffset, reserved, ComponentMask */
	case CLASS_DEVICE_MGMT:
	case CLASS_DEVICE_ADM:
	case CLASS_BIS:
		return 64;
	default:
		if (mgmt_class >= CLASS_VENDOR_RANGE2_START &&
		    mgmt_class <= CLASS_VENDOR_RANGE2_END)
			return 40; /* + reserved, OUI */
		return MAD_HDR_LEN;
	}
}

int rmpp_is_active(const uint8_t *mad)
{
	return rmpp_is_class(mad[1]) && (mad[RMPP_FLAGS_OFF] & RMPP_FLAG_ACTIVE);
}

uint32_t rmpp_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void rmpp_put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

uint64_t rmpp_get64(const uint8_t *p)
{
	return (uint64_t)rmpp_get32(p) << 32 | rmpp_get32(p + 4);
}

int rmpp_plan_mad(uint8_t mgmt_class, size_t mad_len, struct rmpp_plan *p)
{
	p->hdr_len = rmpp_hdr_len(mgmt_class);
	if (p->hdr_len < RMPP_HDR_END || mad_len < (size_t)p->hdr_len)
		return -1;
	p->seg_data = MAD_SIZE - p->hdr_len;
	p->data_len = mad_len - p->hdr_len;
	/* An empty message still takes one segment, all pad. */
	p->seg_count = p->data_len ? (p->data_len + p->seg_data - 1) / p->seg_data : 1;
	p->pad = (int)((size_t)p->seg_count * p->seg_data - p->data_len);
	return 0;
}

uint32_t rmpp_paylen(const struct rmpp_plan *p, uint32_t seg)
{
	if (seg == p->seg_count)
		return RMPP_SEG_PAYLOAD - p->pad;
	if (seg == 1)
		return p->seg_count * RMPP_SEG_PAYLOAD - p->pad;
	return 0;
}

void rmpp_build_seg(const uint8_t *mad, const struct rmpp_plan *p, uint32_t seg,
		    uint8_t out[MAD_SIZE])
{
	size_t off = (size_t)(seg - 1) * p->seg_data;
	size_t n = 0;
	uint8_t flags = RMPP_FLAG_ACTIVE;

	if (off < p->data_len)
		n = p->data_len - off < (size_t)p->seg_data ? p->data_len - off
							     : (size_t)p->seg_data;
	if (seg == 1)
		flags |= RMPP_FLAG_FIRST;
	if (seg == p->seg_count)
		flags |= RMPP_FLAG_LAST;

	memcpy(out, mad, p->hdr_len);
	out[RMPP_VERSION_OFF] = RMPP_VERSION;
	out[RMPP_TYPE_OFF] = RMPP_TYPE_DATA;
	out[RMPP_FLAGS_OFF] = (mad[RMPP_FLAGS_OFF] & ~RMPP_FLAGS_MASK) | flags;
	out[RMPP_STATUS_OFF] = 0;
	rmpp_put32(out + RMPP_SEGNUM_OFF, seg);
	rmpp_put32(out + RMPP_PAYLEN_OFF, rmpp_paylen(p, seg));
	memcpy(out + p->hdr_len, mad + p->hdr_len + off, n);
	memset(out + p->hdr_len + n, 0, p->seg_data - n);
}

/* build_reply starts an ACK or ABORT for data_seg: its header, the other way. */
static void build_reply(const uint8_t data_seg[MAD_SIZE], int hdr_len, uint8_t type,
			uint8_t out[MAD_SIZE])
{
	memset(out, 0, MAD_SIZE);
	memcpy(out, data_seg, hdr_len);
	out[MAD_METHOD_OFF] ^= MAD_METHOD_RESP;
	out[RMPP_VERSION_OFF] = RMPP_VERSION;
	out[RMPP_TYPE_OFF] = type;
	out[RMPP_FLAGS_OFF] = (data_seg[RMPP_FLAGS_OFF] & ~RMPP_FLAGS_MASK) | RMPP_FLAG_ACTIVE;
	out[RMPP_STATUS_OFF] = 0;
}

void rmpp_build_ack(const uint8_t data_seg[MAD_SIZE], int hdr_len, uint32_t seg,
		    uint32_t newwin, uint8_t out[MAD_SIZE])
{
	build_reply(data_seg, hdr_len, RMPP_TYPE_ACK, out);
	rmpp_put32(out + RMPP_SEGNUM_OFF, seg);
	rmpp_put32(out + RMPP_PAYLEN_OFF, newwin);
}

void rmpp_build_abort(const uint8_t data_seg[MAD_SIZE], int hdr_len, uint8_t status,
		      uint8_t out[MAD_SIZE])
{
	build_reply(data_seg, hdr_len, RMPP_TYPE_ABORT, out);
	out[RMPP_STATUS_OFF] = status;
	rmpp_put32(out + RMPP_SEGNUM_OFF, 0);
	rmpp_put32(out + RMPP_PAYLEN_OFF, 0);
}

/* rx_append adds n bytes to rx's buffer, growing it; -1 when too long. */
static int rx_append(struct rmpp_rx *rx, const uint8_t *p, size_t n)
{
	if (rx->len + n > rx->max_len)
		return -1;
	if (rx->len + n > rx->cap) {
		size_t cap = rx->cap ? rx->cap : MAD_SIZE;
		uint8_t *buf;

		while (cap < rx->len + n)
			cap *= 2;
		if (cap > rx->max_len)
			cap = rx->max_len;
		buf = realloc(rx->buf, cap);
		if (!buf)
			return -1;
		rx->buf = buf;
		rx->cap = cap;
	}
	memcpy(rx->buf + rx->len, p, n);
	rx->len += n;
	return 0;
}

/* rx_finish trims the last segment's pad (from its PayloadLength). */
static void rx_finish(struct rmpp_rx *rx, const uint8_t last[MAD_SIZE])
{
	long pad = (long)RMPP_SEG_PAYLOAD - (long)rmpp_get32(last + RMPP_PAYLEN_OFF);
	long seg_data = MAD_SIZE - rx->hdr_len;

	if (pad < 0 || pad > seg_data)
		pad = 0; /* nonsense: keep the whole data area, as the kernel */
	rx->len -= pad;
	rx->complete = 1;
}

int rmpp_rx_data(struct rmpp_rx *rx, const uint8_t seg[MAD_SIZE], uint32_t window,
		 size_t max_len)
{
	uint8_t flags = seg[RMPP_FLAGS_OFF] & RMPP_FLAGS_MASK;
	uint32_t num = rmpp_get32(seg + RMPP_SEGNUM_OFF);

	if (!rx->buf) {
		/* A new transfer starts with its FIRST segment, or not at all. */
		if (!(flags & RMPP_FLAG_FIRST) || num != 1)
			return 0;
		rx->hdr_len = rmpp_hdr_len(seg[1]);
		rx->max_len = max_len;
		rx->window = window;
		if (rx_append(rx, seg, MAD_SIZE) < 0)
			return RMPP_RX_ABORT;
		rx->seg = 1;
		rx->newwin = 1 + window;
		if (flags & RMPP_FLAG_LAST) {
			rx_finish(rx, seg);
			return RMPP_RX_ACK | RMPP_RX_DONE;
		}
		return RMPP_RX_ACK;
	}
	if (rx->complete || num <= rx->seg)
		return RMPP_RX_ACK; /* duplicate: say where we are */
	if (num != rx->seg + 1) {
		rx->gap = 1;
		return RMPP_RX_ACK; /* past a gap: the same */
	}
	if (rx_append(rx, seg + rx->hdr_len, MAD_SIZE - rx->hdr_len) < 0)
		return RMPP_RX_ABORT;
	rx->seg = num;
	if (flags & RMPP_FLAG_LAST) {
		rx_finish(rx, seg);
		return RMPP_RX_ACK | RMPP_RX_DONE;
	}
	if (num == rx->newwin) {
		rx->newwin += rx->window;
		rx->gap = 0;
		return RMPP_RX_ACK;
	}
	if (rx->gap) {
		rx->gap = 0;
		return RMPP_RX_ACK; /* the gap is filled: resume from here */
	}
	return 0;
}

void rmpp_rx_free(struct rmpp_rx *rx)
{
	free(rx->buf);
	rx->buf = NULL;
	rx->len = rx->cap = 0;
}

void rmpp_tx_start(struct rmpp_tx *tx, uint32_t seg_count)
{
	tx->seg_count = seg_count;
	tx->last_ack = 0;
	tx->sent = 0;
	tx->newwin = 1;
	tx->probing = 0;
}

int rmpp_tx_ack(struct rmpp_tx *tx, uint32_t seg, uint32_t newwin)
{
	int progress;

	if (seg > tx->seg_count || seg > tx->newwin || newwin < seg)
		return RMPP_TX_BAD;
	if (seg < tx->last_ack)
		return RMPP_TX_IGNORE;
	if (seg == tx->seg_count)
		return RMPP_TX_DONE;
	if (newwin > tx->seg_count)
		newwin = tx->seg_count;
	progress = seg > tx->last_ack || newwin > tx->newwin;
	tx->last_ack = seg;
	if (newwin > tx->newwin)
		tx->newwin = newwin;
	if (tx->probing) {
		/* The receiver is there and has everything up to seg. */
		tx->probing = 0;
		tx->sent = tx->last_ack;
		return progress ? RMPP_TX_PROGRESS : RMPP_TX_RESEND;
	}
	if (tx->sent < tx->last_ack)
		tx->sent = tx->last_ack;
	return progress ? RMPP_TX_PROGRESS : RMPP_TX_IGNORE;
}

uint32_t rmpp_tx_probe(struct rmpp_tx *tx)
{
	tx->probing = 1;
	return tx->last_ack + 1 <= tx->seg_count ? tx->last_ack + 1 : tx->seg_count;
}
