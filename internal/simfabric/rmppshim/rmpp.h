/*
 * rmpp.h: the arithmetic of RMPP (IBA 13.6), the reliable multi-packet
 * protocol of the general-services classes, as the Linux kernel's MAD layer
 * does it for agents registered with an RMPP version: how a long MAD is cut
 * into 256-byte DATA segments, what their RMPP headers say, how a receiver
 * puts the segments back together and which ACKs it sends.
 *
 * Nothing here does I/O or takes a lock: rmppshim.c drives it, and
 * rmpp_test.c checks it on its own.
 */
#ifndef RMPPSHIM_RMPP_H
#define RMPPSHIM_RMPP_H

#include <stddef.h>
#include <stdint.h>

/* MAD layout (IBA 13.4.2, 13.6.2.1). */
#define MAD_SIZE 256        /* every MAD on the wire */
#define MAD_HDR_LEN 24      /* the common MAD header */
#define RMPP_HDR_OFF 24     /* the RMPP header follows it... */
#define RMPP_HDR_END 36     /* ...for 12 bytes */
#define RMPP_SEG_PAYLOAD (MAD_SIZE - RMPP_HDR_END) /* 220: PayloadLength's unit */

/* Bytes of the RMPP header. */
#define RMPP_VERSION_OFF 24
#define RMPP_TYPE_OFF 25
#define RMPP_FLAGS_OFF 26 /* RRespTime in the high 5 bits, flags in the low 3 */
#define RMPP_STATUS_OFF 27
#define RMPP_SEGNUM_OFF 28
#define RMPP_PAYLEN_OFF 32 /* PayloadLength in DATA, NewWindowLast in ACK */

#define RMPP_VERSION 1

/* ABORT status codes (IBA 13.6.2.1). */
enum rmpp_status {
	RMPP_STATUS_T2L = 118,        /* total time too long */
	RMPP_STATUS_W2S = 122,        /* NewWindowLast too small */
	RMPP_STATUS_S2B = 123,        /* segment number too big */
	RMPP_STATUS_UNSPECIFIED = 127,
};

enum rmpp_type {
	RMPP_TYPE_DATA = 1,
	RMPP_TYPE_ACK = 2,
	RMPP_TYPE_STOP = 3,
	RMPP_TYPE_ABORT = 4,
};

enum rmpp_flag {
	RMPP_FLAG_ACTIVE = 0x01,
	RMPP_FLAG_FIRST = 0x02,
	RMPP_FLAG_LAST = 0x04,
	RMPP_FLAGS_MASK = 0x07,
};

/* The Response bit of the method byte (byte 3). */
#define MAD_METHOD_OFF 3
#define MAD_METHOD_RESP 0x80

/* rmpp_is_class reports whether the kernel runs RMPP for mgmt_class. */
int rmpp_is_class(uint8_t mgmt_class);

/*
 * rmpp_hdr_len returns how many leading bytes of a MAD of mgmt_class every
 * segment repeats: the MAD header, the RMPP header and the class header (56
 * for the SA, whose class header is SM_Key, AttributeOffset and
 * ComponentMask).
 */
int rmpp_hdr_len(uint8_t mgmt_class);

/* rmpp_is_active reports whether mad (at least 36 bytes) takes part in RMPP. */
int rmpp_is_active(const uint8_t *mad);

uint32_t rmpp_get32(const uint8_t *p);
void rmpp_put32(uint8_t *p, uint32_t v);
uint64_t rmpp_get64(const uint8_t *p);

/* rmpp_plan is how a sender cuts one MAD into segments. */
struct rmpp_plan {
	int hdr_len;       /* bytes repeated at the head of every segment */
	int seg_data;      /* data bytes per segment: MAD_SIZE - hdr_len */
	size_t data_len;   /* data bytes after the header in the whole MAD */
	uint32_t seg_count;/* segments, at least 1 */
	int pad;           /* unused bytes of the last segment's data area */
};

/*
 * rmpp_plan_mad plans the segments of a mad_len-byte MAD (header and data,
 * as the application wrote it) of mgmt_class. It returns -1 when mad_len is
 * shorter than the header.
 */
int rmpp_plan_mad(uint8_t mgmt_class, size_t mad_len, struct rmpp_plan *p);

/* rmpp_paylen returns the PayloadLength of segment seg (1-based) of p. */
uint32_t rmpp_paylen(const struct rmpp_plan *p, uint32_t seg);

/*
 * rmpp_build_seg writes DATA segment seg (1-based) of mad, planned by p, to
 * out: the header repeated, the RMPP header set (version 1, type DATA,
 * ACTIVE and FIRST/LAST, RRespTime kept from mad, status 0, SegmentNumber,
 * PayloadLength) and the segment's slice of the data, zero-padded.
 */
void rmpp_build_seg(const uint8_t *mad, const struct rmpp_plan *p, uint32_t seg,
		    uint8_t out[MAD_SIZE]);

/*
 * rmpp_build_ack writes to out the ACK of a DATA segment: its first hdr_len
 * bytes with the Response bit toggled, type ACK, flags ACTIVE (RRespTime
 * kept), SegmentNumber seg and NewWindowLast newwin; the rest zero.
 */
void rmpp_build_ack(const uint8_t data_seg[MAD_SIZE], int hdr_len, uint32_t seg,
		    uint32_t newwin, uint8_t out[MAD_SIZE]);

/*
 * rmpp_build_abort writes to out an ABORT with status for a DATA segment,
 * addressed as rmpp_build_ack addresses an ACK.
 */
void rmpp_build_abort(const uint8_t data_seg[MAD_SIZE], int hdr_len,
		      uint8_t status, uint8_t out[MAD_SIZE]);

/* The receiving side of one transfer. */
struct rmpp_rx {
	int hdr_len;
	uint8_t *buf;    /* header, then the data areas in order */
	size_t len, cap; /* bytes in buf, bytes allocated */
	size_t max_len;  /* a longer message is aborted */
	uint32_t seg;    /* last segment received in order */
	uint32_t newwin; /* NewWindowLast last announced */
	uint32_t window; /* segments per window */
	int gap;         /* a segment past a gap came: ACK the next in order */
	int complete;    /* the LAST segment is in */
};

/* What rmpp_rx_data asks the caller to do, as bits. */
enum rmpp_rx_action {
	RMPP_RX_ACK = 0x1,   /* send rmpp_build_ack(seg, rx->seg, rx->newwin) */
	RMPP_RX_DONE = 0x2,  /* the message is complete: rx->buf, rx->len */
	RMPP_RX_ABORT = 0x4, /* abort the transfer (too long, no memory) */
};

/*
 * rmpp_rx_data feeds DATA segment seg to rx, a zeroed struct for a new
 * transfer (then seg must be the FIRST, number 1) or one fed before. It
 * keeps segments in order only: a duplicate or a segment past a gap is
 * dropped and the last in-order one acknowledged again. An ACK goes out for
 * the first segment, at each window's end and for the last, and for the
 * segment that fills a gap (the sender's probe; see rmpp_tx_probe).
 */
int rmpp_rx_data(struct rmpp_rx *rx, const uint8_t seg[MAD_SIZE], uint32_t window,
		 size_t max_len);

/* rmpp_rx_free frees rx's buffer. */
void rmpp_rx_free(struct rmpp_rx *rx);

/* The sending side of one transfer, as far as ACKs move it. */
struct rmpp_tx {
	uint32_t seg_count;
	uint32_t last_ack; /* highest segment acknowledged */
	uint32_t sent;     /* highest segment sent */
	uint32_t newwin;   /* highest segment the receiver takes */
	int probing;       /* a probe is out: the next ACK says where to resume */
};

/* What rmpp_tx_ack reports. */
enum rmpp_tx_result {
	RMPP_TX_IGNORE = 0,   /* stale or duplicate ACK: nothing to do */
	RMPP_TX_PROGRESS = 1, /* acknowledged further: send tx->sent+1 .. tx->newwin */
	RMPP_TX_RESEND = 2,   /* the probe's answer: send tx->sent+1 .. tx->newwin again */
	RMPP_TX_DONE = 3,     /* the last segment is acknowledged */
	RMPP_TX_BAD = 4,      /* ACK out of range: abort the transfer */
};

/* rmpp_tx_start readies tx for seg_count segments, window 1 (segment 1). */
void rmpp_tx_start(struct rmpp_tx *tx, uint32_t seg_count);

/* rmpp_tx_ack applies an ACK of segment seg with NewWindowLast newwin. */
int rmpp_tx_ack(struct rmpp_tx *tx, uint32_t seg, uint32_t newwin);

/*
 * rmpp_tx_probe is what a sender does when no ACK came in time: it returns
 * the segment to send again, the first not acknowledged, and marks tx so
 * that the ACK it draws resends the window from the receiver's position.
 * Any receiver answers it (a duplicate is acknowledged again; a segment
 * that fills a gap or ends a window is acknowledged), and a receiver gone
 * gets one stray packet per retry, not a window of them: on ibsim a stray
 * packet lands at the next client of the same node, and the umad2sim shim
 * crashes on a class its process has not registered.
 */
uint32_t rmpp_tx_probe(struct rmpp_tx *tx);

#endif
