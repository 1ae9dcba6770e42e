/*
 * rmpp_test.c: checks rmpp.c on its own (built and run by
 * TestRMPPArithmetic in rmppshim_test.go): segment plans and RMPP headers
 * for messages of every length around the segment boundaries, a round trip
 * through the receiver, its ACKs and its handling of duplicates and gaps,
 * and the sender's window. Prints one line per failure; exits 1 on any.
 */
#include "rmpp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                          \
	do {                                                      \
		if (!(cond)) {                                    \
			failures++;                               \
			printf("%s:%d: ", __FILE__, __LINE__);    \
			printf(__VA_ARGS__);                      \
			printf("\n");                             \
		}                                                 \
	} while (0)

/* sa_mad makes an SA GetTableResp of data_len data bytes, as opensm writes it. */
static uint8_t *sa_mad(size_t data_len)
{
	uint8_t *m = calloc(1, 56 + data_len);
	size_t i;

	m[0] = 1;    /* base version */
	m[1] = 0x03; /* SA */
	m[2] = 2;
	m[3] = 0x92; /* GetTableResp */
	memcpy(m + 8, "\x00\x01\x00\x00\xde\xad\xbe\xef", 8);
	m[16] = 0x00, m[17] = 0x11;                  /* NodeRecord */
	m[RMPP_FLAGS_OFF] = 0x70 | RMPP_FLAG_ACTIVE; /* RRespTime 14 */
	m[36] = 0xaa;                                /* SM_Key... */
	m[45] = 14;                                  /* AttributeOffset: 112 bytes */
	for (i = 0; i < data_len; i++)
		m[56 + i] = (uint8_t)(i * 7 + i / 251);
	return m;
}

static void test_plan(void)
{
	static const struct {
		size_t data_len;
		uint32_t segs;
		int pad;
		uint32_t first, last;
	} cases[] = {
		{0, 1, 200, 20, 20}, /* an empty table: one segment, all pad */
		{1, 1, 199, 21, 21},
		{112, 1, 88, 132, 132}, /* one NodeRecord */
		{200, 1, 0, 220, 220},
		{201, 2, 199, 241, 21},
		{400, 2, 0, 440, 220},
		{26208, 132, 192, 28848, 28}, /* 234 NodeRecords (the test fabric) */
		{6912, 35, 88, 7612, 132},    /* 864 LinkRecords */
		{63504, 318, 96, 69864, 124}, /* 882 PortInfoRecords */
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct rmpp_plan p;

		CHECK(rmpp_plan_mad(0x03, 56 + cases[i].data_len, &p) == 0, "plan %zu", cases[i].data_len);
		CHECK(p.hdr_len == 56 && p.seg_data == 200, "SA header %d, data %d", p.hdr_len, p.seg_data);
		CHECK(p.seg_count == cases[i].segs, "%zu bytes: %u segments, want %u", cases[i].data_len,
		      p.seg_count, cases[i].segs);
		CHECK(p.pad == cases[i].pad, "%zu bytes: pad %d, want %d", cases[i].data_len, p.pad,
		      cases[i].pad);
		CHECK(rmpp_paylen(&p, 1) == cases[i].first, "%zu bytes: first PayloadLength %u, want %u",
		      cases[i].data_len, rmpp_paylen(&p, 1), cases[i].first);
		CHECK(rmpp_paylen(&p, p.seg_count) == cases[i].last,
		      "%zu bytes: last PayloadLength %u, want %u", cases[i].data_len,
		      rmpp_paylen(&p, p.seg_count), cases[i].last);
		if (p.seg_count > 2)
			CHECK(rmpp_paylen(&p, 2) == 0, "middle PayloadLength %u", rmpp_paylen(&p, 2));
	}
	CHECK(rmpp_plan_mad(0x03, 55, &(struct rmpp_plan){0}) < 0, "a MAD shorter than its header");
	CHECK(rmpp_hdr_len(0x03) == 56 && rmpp_hdr_len(0x06) == 64 && rmpp_hdr_len(0x30) == 40,
	      "class header lengths");
	CHECK(rmpp_is_class(0x03) && rmpp_is_class(0x4f) && !rmpp_is_class(0x01) &&
		      !rmpp_is_class(0x81) && !rmpp_is_class(0x04) && !rmpp_is_class(0x21),
	      "RMPP classes");
}

static void test_segments(void)
{
	size_t data_len = 26208;
	uint8_t *m = sa_mad(data_len);
	struct rmpp_plan p;
	uint8_t seg[MAD_SIZE];
	uint32_t n;

	rmpp_plan_mad(0x03, 56 + data_len, &p);
	for (n = 1; n <= p.seg_count; n++) {
		uint8_t flags = RMPP_FLAG_ACTIVE | (n == 1 ? RMPP_FLAG_FIRST : 0) |
				(n == p.seg_count ? RMPP_FLAG_LAST : 0);
		size_t off = (size_t)(n - 1) * 200, len = data_len - off < 200 ? data_len - off : 200;

		rmpp_build_seg(m, &p, n, seg);
		CHECK(memcmp(seg, m, RMPP_HDR_OFF) == 0, "segment %u: MAD header not repeated", n);
		CHECK(memcmp(seg + RMPP_HDR_END, m + RMPP_HDR_END, 20) == 0,
		      "segment %u: SA header not repeated", n);
		CHECK(seg[RMPP_VERSION_OFF] == 1 && seg[RMPP_TYPE_OFF] == RMPP_TYPE_DATA &&
			      seg[RMPP_STATUS_OFF] == 0,
		      "segment %u: version %u type %u status %u", n, seg[24], seg[25], seg[27]);
		CHECK(seg[RMPP_FLAGS_OFF] == (0x70 | flags), "segment %u: flags 0x%02x, want 0x%02x", n,
		      seg[RMPP_FLAGS_OFF], 0x70 | flags);
		CHECK(rmpp_get32(seg + RMPP_SEGNUM_OFF) == n, "segment %u: number %u", n,
		      rmpp_get32(seg + RMPP_SEGNUM_OFF));
		CHECK(memcmp(seg + 56, m + 56 + off, len) == 0, "segment %u: data", n);
		if (len < 200)
			CHECK(seg[56 + len] == 0 && seg[MAD_SIZE - 1] == 0, "segment %u: pad not zero", n);
	}
	free(m);
}

/* feed gives segment n of m (planned by p) to rx and returns the action. */
static int feed(struct rmpp_rx *rx, const uint8_t *m, const struct rmpp_plan *p, uint32_t n)
{
	uint8_t seg[MAD_SIZE];

	rmpp_build_seg(m, p, n, seg);
	return rmpp_rx_data(rx, seg, 64, 1 << 24);
}

static void test_round_trip(void)
{
	static const size_t lens[] = {0, 1, 112, 199, 200, 201, 12800, 12801, 26208, 63504};
	size_t i;

	for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		uint8_t *m = sa_mad(lens[i]);
		struct rmpp_rx rx = {0};
		struct rmpp_plan p;
		uint32_t n, acks = 0;
		int act = 0;

		rmpp_plan_mad(0x03, 56 + lens[i], &p);
		for (n = 1; n <= p.seg_count; n++) {
			act = feed(&rx, m, &p, n);
			if (act & RMPP_RX_ACK) {
				acks++;
				/* ACKs at 1, at each window's end (65, 129, ...), at the last. */
				CHECK(n == 1 || n == p.seg_count || (n - 1) % 64 == 0,
				      "%zu bytes: ACK after segment %u", lens[i], n);
			}
			CHECK(!(act & RMPP_RX_DONE) == (n < p.seg_count), "%zu bytes: DONE after %u of %u",
			      lens[i], n, p.seg_count);
		}
		CHECK(rx.complete && rx.len == 56 + lens[i], "%zu bytes: reassembled %zu",
		      lens[i], rx.len);
		CHECK(rx.len >= 56 && memcmp(rx.buf + 56, m + 56, lens[i]) == 0,
		      "%zu bytes: reassembled data differ", lens[i]);
		CHECK(memcmp(rx.buf, m, RMPP_HDR_OFF) == 0, "%zu bytes: header differs", lens[i]);
		CHECK(acks == 1 + (p.seg_count > 1) + (p.seg_count - 1) / 64 -
				      (p.seg_count > 1 && (p.seg_count - 1) % 64 == 0),
		      "%zu bytes: %u ACKs for %u segments", lens[i], acks, p.seg_count);
		rmpp_rx_free(&rx);
		free(m);
	}
}

static void test_receiver_order(void)
{
	uint8_t *m = sa_mad(26208); /* 132 segments */
	struct rmpp_rx rx = {0};
	struct rmpp_plan p;
	uint8_t seg[MAD_SIZE], ack[MAD_SIZE];

	rmpp_plan_mad(0x03, 56 + 26208, &p);
	CHECK(feed(&rx, m, &p, 2) == 0 && !rx.buf, "a transfer must start with segment 1");
	CHECK(feed(&rx, m, &p, 1) == RMPP_RX_ACK && rx.seg == 1 && rx.newwin == 65,
	      "segment 1: seg %u newwin %u", rx.seg, rx.newwin);
	CHECK(feed(&rx, m, &p, 2) == 0 && rx.seg == 2, "segment 2 in order");
	CHECK(feed(&rx, m, &p, 2) == RMPP_RX_ACK && rx.seg == 2, "a duplicate is acknowledged");
	CHECK(feed(&rx, m, &p, 4) == RMPP_RX_ACK && rx.seg == 2, "past a gap: dropped, acknowledged");
	CHECK(feed(&rx, m, &p, 3) == RMPP_RX_ACK && rx.seg == 3, "the gap filled: acknowledged");
	CHECK(feed(&rx, m, &p, 4) == 0 && rx.seg == 4, "then on in order, quietly");

	/* The ACK: the header turned around, type ACK, segment and window. */
	rmpp_build_seg(m, &p, 4, seg);
	rmpp_build_ack(seg, 56, rx.seg, rx.newwin, ack);
	CHECK(ack[MAD_METHOD_OFF] == 0x12, "ACK method 0x%02x, want the Response bit off",
	      ack[MAD_METHOD_OFF]);
	CHECK(ack[RMPP_TYPE_OFF] == RMPP_TYPE_ACK && ack[RMPP_FLAGS_OFF] == (0x70 | RMPP_FLAG_ACTIVE),
	      "ACK type %u flags 0x%02x", ack[RMPP_TYPE_OFF], ack[RMPP_FLAGS_OFF]);
	CHECK(rmpp_get32(ack + RMPP_SEGNUM_OFF) == 4 && rmpp_get32(ack + RMPP_PAYLEN_OFF) == 65,
	      "ACK segment %u window %u", rmpp_get32(ack + RMPP_SEGNUM_OFF),
	      rmpp_get32(ack + RMPP_PAYLEN_OFF));
	CHECK(memcmp(ack + 8, m + 8, 8) == 0 && memcmp(ack + 36, m + 36, 20) == 0 && ack[56] == 0,
	      "ACK keeps TID and SA header, data zero");
	rmpp_rx_free(&rx);

	/* Too long a message is aborted. */
	memset(&rx, 0, sizeof rx);
	rmpp_build_seg(m, &p, 1, seg);
	CHECK(rmpp_rx_data(&rx, seg, 64, 300) == RMPP_RX_ACK, "first segment under the limit");
	rmpp_build_seg(m, &p, 2, seg);
	CHECK(rmpp_rx_data(&rx, seg, 64, 300) == RMPP_RX_ABORT, "over the limit: abort");
	rmpp_rx_free(&rx);
	free(m);
}

static void test_sender(void)
{
	struct rmpp_tx tx;

	rmpp_tx_start(&tx, 132);
	CHECK(tx.newwin == 1 && tx.sent == 0, "the first window is segment 1");
	tx.sent = 1;
	CHECK(rmpp_tx_ack(&tx, 1, 65) == RMPP_TX_PROGRESS && tx.newwin == 65, "ACK 1, window 65");
	tx.sent = 65;
	CHECK(rmpp_tx_ack(&tx, 30, 65) == RMPP_TX_PROGRESS && tx.last_ack == 30 && tx.sent == 65,
	      "a receiver's position, nothing to resend yet");
	CHECK(rmpp_tx_ack(&tx, 30, 65) == RMPP_TX_IGNORE, "the same ACK again: nothing");
	CHECK(rmpp_tx_ack(&tx, 20, 65) == RMPP_TX_IGNORE, "an older ACK: nothing");
	CHECK(rmpp_tx_probe(&tx) == 31 && tx.probing, "a probe resends the first unacknowledged");
	CHECK(rmpp_tx_ack(&tx, 30, 65) == RMPP_TX_RESEND && tx.sent == 30 && !tx.probing,
	      "the probe's answer: resend from 31");
	tx.sent = 65;
	CHECK(rmpp_tx_ack(&tx, 65, 129) == RMPP_TX_PROGRESS && tx.newwin == 129, "next window");
	CHECK(rmpp_tx_ack(&tx, 65, 200) == RMPP_TX_PROGRESS && tx.newwin == 132,
	      "a window past the end is cut to the last segment");
	CHECK(rmpp_tx_ack(&tx, 133, 140) == RMPP_TX_BAD, "an ACK past the last segment");
	CHECK(rmpp_tx_ack(&tx, 100, 90) == RMPP_TX_BAD, "a window ending before the ACK");
	tx.sent = 132;
	CHECK(rmpp_tx_ack(&tx, 132, 132) == RMPP_TX_DONE, "the last ACK ends it");

	rmpp_tx_start(&tx, 1);
	tx.sent = 1;
	CHECK(rmpp_tx_probe(&tx) == 1, "a one-segment message probes segment 1");
	CHECK(rmpp_tx_ack(&tx, 1, 1) == RMPP_TX_DONE, "and its ACK ends it");
}

int main(void)
{
	test_plan();
	test_segments();
	test_round_trip();
	test_receiver_order();
	test_sender();
	if (failures) {
		printf("%d failures\n", failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
