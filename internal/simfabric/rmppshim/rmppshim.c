/*
 * rmppshim.c: an LD_PRELOAD layer, loaded ahead of Debian's libumad2sim.so
 * (ibsim 0.10), that does for opensm and the infiniband-diags tools what the
 * kernel's MAD layer does and the umad2sim shim does not: RMPP, the
 * segmentation and reassembly of MADs longer than 256 bytes (SA GetTable
 * responses and the like), for agents registered with an RMPP version.
 *
 * How it sits between the application and the shim:
 *
 *  - ioctl(REGISTER_AGENT/UNREGISTER_AGENT) on a umad fd (the shim numbers
 *    them 1024-2047) passes through; the layer notes each agent's class and
 *    RMPP version, and which fd the shim routes each class to.
 *  - connect() of the shim's data socket to ibsim ("<sock>:out<N>") is noted.
 *    On the first write through an RMPP agent the layer "activates": the fd
 *    the shim reads and writes becomes one end of a socket pair, the real
 *    socket moves to a new fd that a reader thread of ours drains. Whatever
 *    is not ours to handle goes on, unchanged, through the pair to the shim;
 *    what the shim writes to its old fd goes to the real socket. Tools that
 *    never write through an RMPP agent (smpquery, ibnetdiscover, ...) never
 *    activate and see the shim alone, at no cost; RMPPSHIM_GUARD=1
 *    activates at the connect (see there).
 *  - write() of an RMPP-active MAD through an RMPP agent is cut into DATA
 *    segments, sent through the shim's own write() window by window as ACKs
 *    come back. When none comes in time, the first segment not acknowledged
 *    goes again and the window is resent from the ACK that draws (see
 *    rmpp_tx_probe); a segment ibsim returns undelivered hurries that.
 *  - RMPP-active DATA for an RMPP agent is put back together and
 *    acknowledged; the whole message waits in a queue of ours for the fd
 *    the shim would have delivered it to, and read() hands it out as the
 *    kernel does (ENOSPC with the full length in the header when the buffer
 *    is short, the message kept). To wake a poll() sleeping in the shim, a
 *    marker packet goes through the pair to that fd; read() and poll() drop
 *    markers. As the kernel, a reassembled response reaches only an agent
 *    that sent the request, and an unfinished receive is aborted (ABORT to
 *    the sender) on a timeout, at unregister, close and exit.
 *  - ACK, STOP and ABORT for our transfers, and the packets ibsim returns
 *    with a status when it could not deliver one of ours, never reach the
 *    application; nor, once active, a packet of a class no agent takes,
 *    which would crash the shim.
 *
 * The reassembly needs whole segments, which is why the layer reads the
 * socket itself: the shim hands the application only the first 224 bytes
 * of each MAD intact (its receive buffer is sizeof(struct sim_request),
 * 288 bytes, less a 64-byte umad header).
 *
 * Environment: RMPPSHIM_DEBUG=1 logs the RMPP header of every write through
 * an RMPP agent as the application wrote it, and every transfer's course,
 * to stderr; 2 adds every ACK, 3 every packet. RMPPSHIM_RETRY_MS (default
 * 150), RMPPSHIM_RETRIES (8), RMPPSHIM_RECV_TIMEOUT_MS (2000) and
 * RMPPSHIM_WINDOW (64) tune the protocol. RMPPSHIM_DROP_RECV=2,70 loses
 * those incoming DATA segment numbers once per transfer (a test's lost
 * packets). RMPPSHIM_GUARD=1 activates the layer at once.
 *
 * Written for this project; the facts come from umad2sim.c, ibsim, libibumad
 * and the kernel's documented user_mad ABI.
 */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE /* its inline read() and poll() would clash with ours */

#include <arpa/inet.h>
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "rmpp.h"

/* ---- The ABI between libibumad, the kernel and the shim ---- */

/* struct ib_user_mad, the header in front of every MAD read or written. */
struct umad_hdr {
	uint32_t agent_id;
	uint32_t status;
	uint32_t timeout_ms;
	uint32_t retries;
	uint32_t length; /* header and MAD */
	uint32_t qpn;    /* network order */
	uint32_t qkey;   /* network order */
	uint16_t lid;    /* network order */
	uint8_t sl;
	uint8_t path_bits;
	uint8_t grh_present;
	uint8_t gid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t gid[16];
	uint32_t flow_label;
	uint16_t pkey_index;
	uint8_t reserved[6];
};
_Static_assert(sizeof(struct umad_hdr) == 64, "struct ib_user_mad is 64 bytes");

#define UMAD_HDR_LEN ((int)sizeof(struct umad_hdr))
#define UMAD_FRAME (UMAD_HDR_LEN + MAD_SIZE)

/* struct ib_user_mad_reg_req. */
struct reg_req {
	uint32_t id;
	uint32_t method_mask[4];
	uint8_t qpn;
	uint8_t mgmt_class;
	uint8_t mgmt_class_version;
	uint8_t oui[3];
	uint8_t rmpp_version;
};

#define IOCTL_REGISTER_AGENT _IOWR(0x1b, 1, struct reg_req)
#define IOCTL_UNREGISTER_AGENT _IOW(0x1b, 2, uint32_t)

/* struct sim_request: one datagram between a client and ibsim. */
struct sim_req {
	uint32_t dlid; /* the LID in network order, in the low 16 bits */
	uint32_t slid;
	uint32_t dqp;
	uint32_t sqp;
	uint32_t status; /* network order; ibsim sets 110 on an undelivered packet */
	uint64_t length;
	uint8_t mad[MAD_SIZE];
};
_Static_assert(sizeof(struct sim_req) == 288, "struct sim_request is 288 bytes");

/* The shim's fd numbers: 1024-2047 umad, 2048 and up issm. */
#define UMAD_FD_MIN 1024
#define UMAD_FD_END 2048
#define MAX_AGENTS 32 /* the shim's agent table */

#define QP1_QKEY 0x80010000u
#define MAX_MESSAGE (64u << 20) /* a longer RMPP message is aborted */
#define BOUNCE_RETRY_MS 10      /* resend this soon when ibsim returns a segment */

/*
 * The TID (low 48 bits: ibsim puts its client id in the top 16) of the
 * SubnGet(NodeInfo) we send ourselves at activation; see kick_shim.
 */
#define KICK_TID48 0x72707070696bULL

/* The marker's signature, at MAD offset MARKER_OFF (base version 0). */
static const char marker_magic[16] = "rmppshim-wakeup";
#define MARKER_OFF 40

/* ---- What the application's calls go on to (the shim's, then libc's) ---- */

static ssize_t (*next_read)(int, void *, size_t);
static ssize_t (*next_write)(int, const void *, size_t);
static int (*next_poll)(struct pollfd *, nfds_t, int);
static int (*next_ioctl)(int, unsigned long, ...);
static int (*next_close)(int);
static int (*next_connect)(int, const struct sockaddr *, socklen_t);

/* ---- Tunables ---- */

#define MAX_DROPS 16

static struct {
	int debug;
	int guard; /* RMPPSHIM_GUARD: activate at once, see connect() */
	int retry_ms;
	int retries;
	int recv_timeout_ms;
	uint32_t window;
	uint32_t drop_recv[MAX_DROPS]; /* segment numbers to lose once */
	int ndrop_recv;
} cfg;

/* ---- State, all under lk ---- */

struct agent {
	int used;
	int fd;
	uint8_t mgmt_class;
	uint8_t rmpp_version;
};

/* A MAD waiting in our queue for an fd. */
struct item {
	struct item *next;
	int whole;  /* reassembled: too short a read gets ENOSPC, not a cut */
	size_t len; /* umad header and MAD */
	uint8_t data[];
};

struct fdq {
	struct item *head, *tail;
	unsigned markers; /* markers sent to the shim's queue and not yet seen */
};

/* An RMPP message we send. */
struct send_xfer {
	struct send_xfer *next;
	int fd;
	uint8_t mgmt_class;
	int resp;       /* sent as a response: ibsim leaves its TID alone */
	uint64_t tid;   /* as on the wire (the shim puts the agent in bits 32-47) */
	uint16_t dlid;  /* network order */
	struct umad_hdr hdr;
	uint8_t *mad;   /* as the application wrote it */
	struct rmpp_plan plan;
	struct rmpp_tx tx;
	int retries;
	uint32_t lost;  /* a segment ibsim returned undelivered, not yet acknowledged */
	int64_t deadline;
};

/* An RMPP message we receive. */
struct recv_xfer {
	struct recv_xfer *next;
	int fd;
	uint32_t agent;
	uint8_t mgmt_class;
	uint64_t tid;
	uint16_t slid; /* network order */
	uint32_t sqp;  /* network order */
	uint32_t drops[MAX_DROPS]; /* RMPPSHIM_DROP_RECV segments already lost */
	int ndrops;
	struct rmpp_rx rx;
	int64_t deadline;
};

/* A datagram from ibsim, waiting for the worker. */
struct pkt {
	struct pkt *next;
	ssize_t len;
	struct sim_req req;
};

/* Something the worker does once it has let go of lk. */
struct action {
	struct action *next;
	enum { ACT_WRITE, ACT_FORWARD, ACT_DELIVER } kind;
	int fd;             /* ACT_WRITE, ACT_DELIVER */
	struct item *item;  /* ACT_DELIVER */
	uint8_t mgmt_class; /* ACT_DELIVER: routes the marker */
	uint32_t agent;     /* ACT_DELIVER */
	size_t len;
	uint8_t buf[sizeof(struct sim_req) > UMAD_FRAME ? sizeof(struct sim_req) : UMAD_FRAME];
};

/*
 * Three locks: lk guards the protocol state; in_lk only the reader's queue,
 * so that the reader never waits for the worker and ibsim can always
 * deliver to us; fwd_lk is held while a datagram goes to the shim
 * (to_shim), after a last look at its class: unregister and close take it
 * once after they changed the class table, and then no packet for the class
 * is on its way. lk may be held when fwd_lk is taken (a marker goes out
 * under lk, see deliver_item), never the other way; the reader only tries
 * fwd_lk. Nothing else is held across a call that may block for long.
 */
static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t in_lk = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t fwd_lk = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t in_cv; /* packets in, or a transfer started */
static int in_kick;         /* a transfer started: the worker's timers changed */
static int in_busy;         /* the worker holds packets: none may overtake them */
static struct agent agents[MAX_AGENTS];
static int class_agent[256]; /* the shim's agent_idx: -1 when none */
static int class_fd[256];    /* the shim's agent_fds: -1 when none */
static struct fdq fdqs[UMAD_FD_END - UMAD_FD_MIN];
static struct send_xfer *sends;
static struct recv_xfer *recvs;
static struct pkt *in_head, *in_tail; /* under in_lk */

/*
 * Requests our RMPP agents sent lately: as the kernel, we deliver a
 * reassembled response only to an agent that asked for it (a transfer
 * meant for a process gone before it ended would otherwise reach the next
 * process ibsim gives the same client id and agent).
 */
#define MAX_ASKED 256
#define ASKED_MS 30000
static struct asked {
	uint32_t agent;
	uint64_t tid48;
	int64_t at; /* 0: free */
} asked[MAX_ASKED];
static unsigned asked_next;

/* The shim's data socket, and after activation where it really is. */
static int sim_fd = -1;  /* the fd the shim uses (S) */
static int real_fd = -1; /* atomic: the real socket, after activation (R) */
static int fwd_fd = -1;  /* our end of the pair S now names (B) */
static int activated;    /* atomic */
static int exiting;      /* atomic: the process is ending, the shim gets nothing more */
static pthread_mutex_t act_lk = PTHREAD_MUTEX_INITIALIZER;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_once_t at_exit_once = PTHREAD_ONCE_INIT;

/* ---- Helpers ---- */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* logf_ writes one debug line to stderr (fd 2 is never a umad fd). */
static void logf_(const char *fmt, ...)
{
	static int64_t t0;
	char line[512];
	int64_t t = now_ms();
	int n;
	va_list ap;

	if (!t0)
		t0 = t;
	n = snprintf(line, sizeof line, "rmppshim[%d] %lld.%03lld: ", (int)getpid(),
		     (long long)(t - t0) / 1000, (long long)(t - t0) % 1000);

	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof line - n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof line)
		n = sizeof line - 1;
	line[n++] = '\n';
	if (next_write(2, line, n) < 0)
		return;
}

#define DBG(...)                       \
	do {                           \
		if (cfg.debug)         \
			logf_(__VA_ARGS__); \
	} while (0)

static int is_umad_fd(int fd)
{
	return fd >= UMAD_FD_MIN && fd < UMAD_FD_END;
}

static int env_int(const char *name, int def, int min)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	v = strtol(s, &end, 10);
	return *end || v < min || v > 1 << 30 ? def : (int)v;
}

/* init finds the functions we wrap and reads the environment. */
static void init(void)
{
	pthread_condattr_t ca;
	const char *s;
	int i;

	next_read = (ssize_t(*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	next_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	next_poll = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
	next_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	next_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	next_connect = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
	if (!next_read || !next_write || !next_poll || !next_ioctl || !next_close || !next_connect)
		abort();

	cfg.debug = env_int("RMPPSHIM_DEBUG", 0, 0);
	cfg.guard = env_int("RMPPSHIM_GUARD", 0, 0);
	cfg.retry_ms = env_int("RMPPSHIM_RETRY_MS", 150, 1);
	cfg.retries = env_int("RMPPSHIM_RETRIES", 8, 0);
	cfg.recv_timeout_ms = env_int("RMPPSHIM_RECV_TIMEOUT_MS", 2000, 1);
	cfg.window = env_int("RMPPSHIM_WINDOW", 64, 1);
	s = getenv("RMPPSHIM_DROP_RECV");
	while (s && *s && cfg.ndrop_recv < MAX_DROPS) {
		char *end;
		unsigned long v = strtoul(s, &end, 10);

		if (end == s)
			break;
		cfg.drop_recv[cfg.ndrop_recv++] = v;
		s = *end == ',' ? end + 1 : end;
	}

	for (i = 0; i < 256; i++)
		class_agent[i] = class_fd[i] = -1;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&in_cv, &ca);
	pthread_condattr_destroy(&ca);
}

static void ensure_init(void)
{
	pthread_once(&once, init);
}

/* agent_of returns the agent the shim would deliver mad to, -1 if none. */
static int agent_of(const uint8_t *mad)
{
	if (mad[MAD_METHOD_OFF] & MAD_METHOD_RESP)
		return (int)((rmpp_get64(mad + 8) >> 32) & 0xffff);
	return class_agent[mad[1]];
}

static struct agent *rmpp_agent(int id)
{
	if (id < 0 || id >= MAX_AGENTS || !agents[id].used || !agents[id].rmpp_version)
		return NULL;
	return &agents[id];
}

/* wire_tid returns the TID the shim sends for mad through agent. */
static uint64_t wire_tid(const uint8_t *mad, uint32_t agent)
{
	uint64_t tid = rmpp_get64(mad + 8);

	if (!(mad[MAD_METHOD_OFF] & MAD_METHOD_RESP))
		tid = (tid & 0xffff0000ffffffffULL) | (uint64_t)(agent & 0xffff) << 32;
	return tid;
}

/* note_request remembers a request agent sent; lk held. */
static void note_request(uint32_t agent, uint64_t tid)
{
	struct asked *a = &asked[asked_next++ % MAX_ASKED];

	a->agent = agent;
	a->tid48 = tid & 0xffffffffffffULL;
	a->at = now_ms();
}

/* take_request reports (and forgets) whether agent asked for tid; lk held. */
static int take_request(uint32_t agent, uint64_t tid)
{
	int64_t now = now_ms();
	int i;

	for (i = 0; i < MAX_ASKED; i++)
		if (asked[i].at && now - asked[i].at < ASKED_MS && asked[i].agent == agent &&
		    asked[i].tid48 == (tid & 0xffffffffffffULL)) {
			asked[i].at = 0;
			return 1;
		}
	return 0;
}

static struct action *new_action(struct action ***tail, int kind)
{
	struct action *a = calloc(1, sizeof *a);

	if (!a)
		return NULL;
	a->kind = kind;
	**tail = a;
	*tail = &a->next;
	return a;
}

/* queue_write queues a umad frame (hdr and mad) for the shim's write on fd. */
static void queue_write(struct action ***tail, int fd, const struct umad_hdr *hdr,
			const uint8_t mad[MAD_SIZE])
{
	struct action *a = new_action(tail, ACT_WRITE);

	if (!a)
		return;
	a->fd = fd;
	a->len = UMAD_FRAME;
	memcpy(a->buf, hdr, UMAD_HDR_LEN);
	((struct umad_hdr *)a->buf)->length = UMAD_FRAME;
	memcpy(a->buf + UMAD_HDR_LEN, mad, MAD_SIZE);
}

/* ---- Sending ---- */

/* send_window queues the segments s may send now. */
static void send_window(struct send_xfer *s, struct action ***tail)
{
	uint8_t seg[MAD_SIZE];

	while (s->tx.sent < s->tx.newwin) {
		s->tx.sent++;
		rmpp_build_seg(s->mad, &s->plan, s->tx.sent, seg);
		queue_write(tail, s->fd, &s->hdr, seg);
	}
}

/*
 * probe_send queues, after a timeout, the first segment s has no ACK for;
 * the ACK it draws resends the window from there (see rmpp_tx_probe).
 */
static void probe_send(struct send_xfer *s, struct action ***tail)
{
	uint8_t seg[MAD_SIZE];
	uint32_t n = rmpp_tx_probe(&s->tx);

	s->lost = 0; /* the probe's ACK, or its return, says more */

	DBG("send tid 0x%016llx: no ACK in time: segment %u again (retry %d)",
	    (unsigned long long)s->tid, n, s->retries);
	rmpp_build_seg(s->mad, &s->plan, n, seg);
	queue_write(tail, s->fd, &s->hdr, seg);
}

static void free_send(struct send_xfer *s)
{
	free(s->mad);
	free(s);
}

/* unlink_send takes s off the list. */
static void unlink_send(struct send_xfer *s)
{
	struct send_xfer **pp;

	for (pp = &sends; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			return;
		}
}

static struct send_xfer *find_send(uint8_t mgmt_class, uint64_t tid, uint16_t lid)
{
	struct send_xfer *s;

	for (s = sends; s; s = s->next) {
		/* ibsim puts its client id in bits 48-63 of a request's TID. */
		uint64_t mask = s->resp ? ~0ULL : 0xffffffffffffULL;

		if (s->mgmt_class == mgmt_class && s->dlid == lid && ((s->tid ^ tid) & mask) == 0)
			return s;
	}
	return NULL;
}

static void run_actions(struct action *a);

/*
 * rmpp_send starts sending mad (mad_len bytes, RMPP-active) through the
 * agent in hdr on fd. It returns what write returns.
 */
static ssize_t rmpp_send(int fd, const struct umad_hdr *hdr, const uint8_t *mad, size_t mad_len,
			 size_t count)
{
	struct action *acts = NULL, **tail = &acts;
	struct send_xfer *s = calloc(1, sizeof *s);

	if (!s || rmpp_plan_mad(mad[1], mad_len, &s->plan) < 0 || !(s->mad = malloc(mad_len))) {
		free(s);
		return next_write(fd, hdr, count); /* as the shim would */
	}
	memcpy(s->mad, mad, mad_len);
	s->fd = fd;
	s->hdr = *hdr;
	s->mgmt_class = mad[1];
	s->resp = !!(mad[MAD_METHOD_OFF] & MAD_METHOD_RESP);
	s->tid = wire_tid(mad, hdr->agent_id);
	s->dlid = hdr->lid;
	rmpp_tx_start(&s->tx, s->plan.seg_count);
	DBG("send: agent %u class 0x%02x method 0x%02x attr 0x%04x tid 0x%016llx to lid %u: "
	    "%zu bytes, %u segments, pad %d",
	    hdr->agent_id, mad[1], mad[MAD_METHOD_OFF], mad[16] << 8 | mad[17],
	    (unsigned long long)s->tid, ntohs(s->dlid), mad_len, s->plan.seg_count, s->plan.pad);

	pthread_mutex_lock(&lk);
	s->next = sends;
	sends = s;
	send_window(s, &tail);
	s->deadline = now_ms() + cfg.retry_ms;
	pthread_mutex_unlock(&lk);
	pthread_mutex_lock(&in_lk);
	in_kick = 1; /* the worker must time this transfer */
	pthread_cond_signal(&in_cv);
	pthread_mutex_unlock(&in_lk);
	run_actions(acts);
	return count;
}

/* on_ack applies an ACK, STOP or ABORT from the receiver to s. */
static void on_ack(struct send_xfer *s, const struct sim_req *r, struct action ***tail)
{
	const uint8_t *mad = r->mad;
	uint8_t type = mad[RMPP_TYPE_OFF];
	uint32_t seg = rmpp_get32(mad + RMPP_SEGNUM_OFF);
	uint32_t newwin = rmpp_get32(mad + RMPP_PAYLEN_OFF);
	uint8_t abort_mad[MAD_SIZE];

	if (type != RMPP_TYPE_ACK) {
		DBG("send tid 0x%016llx: %s status %u from the receiver: dropped",
		    (unsigned long long)s->tid, type == RMPP_TYPE_STOP ? "STOP" : "ABORT",
		    mad[RMPP_STATUS_OFF]);
		unlink_send(s);
		free_send(s);
		return;
	}
	if (cfg.debug > 1)
		logf_("send tid 0x%016llx: ACK of %u, window to %u", (unsigned long long)s->tid, seg,
		      newwin);
	switch (rmpp_tx_ack(&s->tx, seg, newwin)) {
	case RMPP_TX_DONE:
		DBG("send tid 0x%016llx: all %u segments acknowledged", (unsigned long long)s->tid,
		    s->tx.seg_count);
		unlink_send(s);
		free_send(s);
		break;
	case RMPP_TX_PROGRESS:
		s->retries = 0;
		/* fall through */
	case RMPP_TX_RESEND:
		send_window(s, tail);
		if (s->lost <= s->tx.last_ack)
			s->lost = 0;
		/* A segment known lost is not waited for: probe soon. */
		s->deadline = now_ms() + (s->lost ? BOUNCE_RETRY_MS : cfg.retry_ms);
		break;
	case RMPP_TX_BAD:
		DBG("send tid 0x%016llx: ACK of %u, window to %u, out of range: aborted",
		    (unsigned long long)s->tid, seg, newwin);
		/* An ABORT goes the way DATA went: turn the ACK around. */
		rmpp_build_abort(mad, s->plan.hdr_len,
				 seg > s->tx.seg_count ? RMPP_STATUS_S2B : RMPP_STATUS_W2S, abort_mad);
		queue_write(tail, s->fd, &s->hdr, abort_mad);
		unlink_send(s);
		free_send(s);
		break;
	}
}

/* ---- Receiving ---- */

static struct recv_xfer *find_recv(uint8_t mgmt_class, uint64_t tid, uint16_t slid)
{
	struct recv_xfer *x;

	for (x = recvs; x; x = x->next)
		if (x->mgmt_class == mgmt_class && x->tid == tid && x->slid == slid)
			return x;
	return NULL;
}

static void drop_recv(struct recv_xfer *x)
{
	struct recv_xfer **pp;

	for (pp = &recvs; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			break;
		}
	rmpp_rx_free(&x->rx);
	free(x);
}

/* lose_once reports whether RMPPSHIM_DROP_RECV asks to lose seg now. */
static int lose_once(struct recv_xfer *x, uint32_t seg)
{
	int i;

	for (i = 0; i < x->ndrops; i++)
		if (x->drops[i] == seg)
			return 0;
	for (i = 0; i < cfg.ndrop_recv; i++)
		if (cfg.drop_recv[i] == seg && x->ndrops < MAX_DROPS) {
			x->drops[x->ndrops++] = seg;
			return 1;
		}
	return 0;
}

/* reply_hdr is the umad header of an ACK or ABORT x sends back. */
static void reply_hdr(const struct recv_xfer *x, struct umad_hdr *h)
{
	memset(h, 0, sizeof *h);
	h->agent_id = x->agent;
	h->qpn = x->sqp;
	h->qkey = htonl(QP1_QKEY);
	h->lid = x->slid;
}

/*
 * abort_recv queues an ABORT with status for x, unfinished, and forgets x:
 * the sender stops at once instead of resending to a process that is gone
 * (on ibsim, to the next process the node's client slot goes to).
 */
static void abort_recv(struct recv_xfer *x, uint8_t status, struct action ***tail)
{
	struct umad_hdr h;
	uint8_t reply[MAD_SIZE];

	if (!x->rx.complete && x->rx.len >= MAD_SIZE) {
		DBG("recv tid 0x%016llx: aborted at segment %u (status %u)",
		    (unsigned long long)x->tid, x->rx.seg, status);
		reply_hdr(x, &h);
		rmpp_build_abort(x->rx.buf, x->rx.hdr_len, status, reply);
		queue_write(tail, x->fd, &h, reply);
	}
	drop_recv(x);
}

/* abort_fd aborts every unfinished receive of fd (agent, if not -1). */
static void abort_fd(int fd, int agent, struct action ***tail)
{
	struct recv_xfer *x, *xn;

	for (x = recvs; x; x = xn) {
		xn = x->next;
		if (x->fd == fd && (agent < 0 || x->agent == (uint32_t)agent))
			abort_recv(x, RMPP_STATUS_UNSPECIFIED, tail);
	}
}

/* on_data takes a DATA segment r for agent (an RMPP agent of ours). */
static void on_data(const struct sim_req *r, int agent, struct action ***tail)
{
	const uint8_t *mad = r->mad;
	uint64_t tid = rmpp_get64(mad + 8);
	uint16_t slid = (uint16_t)r->slid;
	uint32_t seg = rmpp_get32(mad + RMPP_SEGNUM_OFF);
	struct recv_xfer *x = find_recv(mad[1], tid, slid);
	struct umad_hdr h;
	uint8_t reply[MAD_SIZE];
	struct action *a;
	int act;

	if (!x) {
		if (!(mad[RMPP_FLAGS_OFF] & RMPP_FLAG_FIRST) || seg != 1) {
			DBG("recv tid 0x%016llx: segment %u of no transfer: dropped",
			    (unsigned long long)tid, seg);
			return;
		}
		if (!(x = calloc(1, sizeof *x)))
			return;
		x->fd = class_fd[mad[1]];
		x->agent = agent;
		x->mgmt_class = mad[1];
		x->tid = tid;
		x->slid = slid;
		x->sqp = r->sqp;
		x->next = recvs;
		recvs = x;
		DBG("recv tid 0x%016llx from lid %u: first segment, PayloadLength %u",
		    (unsigned long long)tid, ntohs(slid), rmpp_get32(mad + RMPP_PAYLEN_OFF));
	}
	x->deadline = now_ms() + cfg.recv_timeout_ms;
	if (lose_once(x, seg)) {
		DBG("recv tid 0x%016llx: segment %u lost (RMPPSHIM_DROP_RECV)",
		    (unsigned long long)tid, seg);
		return;
	}
	act = rmpp_rx_data(&x->rx, mad, cfg.window, MAX_MESSAGE);
	reply_hdr(x, &h);
	if (act & RMPP_RX_ABORT) {
		DBG("recv tid 0x%016llx: too long or out of memory: aborted", (unsigned long long)tid);
		rmpp_build_abort(mad, rmpp_hdr_len(mad[1]), RMPP_STATUS_UNSPECIFIED, reply);
		queue_write(tail, x->fd, &h, reply);
		drop_recv(x);
		return;
	}
	if (act & RMPP_RX_ACK) {
		rmpp_build_ack(mad, x->rx.hdr_len, x->rx.seg, x->rx.newwin, reply);
		queue_write(tail, x->fd, &h, reply);
	}
	if (!(act & RMPP_RX_DONE))
		return;
	DBG("recv tid 0x%016llx: complete, %u segments, %zu bytes", (unsigned long long)tid,
	    x->rx.seg, x->rx.len);
	if ((mad[MAD_METHOD_OFF] & MAD_METHOD_RESP) && !take_request(x->agent, tid)) {
		DBG("recv tid 0x%016llx: a response to no request of agent %u: dropped",
		    (unsigned long long)tid, x->agent);
		return;
	}
	/* The header the shim would have written for the first segment. */
	a = new_action(tail, ACT_DELIVER);
	if (!a || !(a->item = malloc(sizeof *a->item + UMAD_HDR_LEN + x->rx.len)))
		return;
	memset(&h, 0, sizeof h);
	h.agent_id = x->agent;
	h.length = UMAD_HDR_LEN + x->rx.len;
	h.qpn = x->sqp;
	h.lid = x->slid;
	a->item->next = NULL;
	a->item->whole = 1;
	a->item->len = UMAD_HDR_LEN + x->rx.len;
	memcpy(a->item->data, &h, UMAD_HDR_LEN);
	memcpy(a->item->data + UMAD_HDR_LEN, x->rx.buf, x->rx.len);
	a->fd = x->fd;
	a->mgmt_class = x->mgmt_class;
	a->agent = x->agent;
	/* x stays until it times out, to acknowledge duplicates. */
}

/*
 * handle_packet decides what a datagram from ibsim is: ours to take
 * (RMPP for an RMPP agent of ours) or the shim's.
 */
static void handle_packet(struct pkt *p, struct action ***tail)
{
	const struct sim_req *r = &p->req;
	const uint8_t *mad = r->mad;
	uint8_t type = mad[RMPP_TYPE_OFF];
	uint64_t tid = rmpp_get64(mad + 8);
	int agent = agent_of(mad);
	struct send_xfer *s;
	struct recv_xfer *x;
	struct action *a;

	if (cfg.debug > 2)
		logf_("in: %zd bytes status %u class 0x%02x method 0x%02x tid 0x%016llx rmpp type %u "
		      "flags 0x%02x segment %u from lid %u", p->len, ntohl(r->status), mad[1],
		      mad[MAD_METHOD_OFF], (unsigned long long)tid, type, mad[RMPP_FLAGS_OFF],
		      rmpp_get32(mad + RMPP_SEGNUM_OFF), ntohs((uint16_t)r->slid));
	if (p->len != (ssize_t)sizeof *r || !rmpp_is_active(mad))
		goto forward;
	if (ntohl(r->status)) {
		/* ibsim could not deliver a packet we sent and returned it. */
		if (type == RMPP_TYPE_DATA && (s = find_send(mad[1], tid, (uint16_t)r->dlid))) {
			uint32_t seg = rmpp_get32(mad + RMPP_SEGNUM_OFF);

			DBG("send tid 0x%016llx: segment %u undelivered (status %u)",
			    (unsigned long long)tid, seg, ntohl(r->status));
			if (seg > s->tx.last_ack && (!s->lost || seg < s->lost))
				s->lost = seg;
			if (s->deadline > now_ms() + BOUNCE_RETRY_MS)
				s->deadline = now_ms() + BOUNCE_RETRY_MS;
			return;
		}
		if (rmpp_agent(class_agent[mad[1]]))
			return; /* ours, of a transfer gone, or one of our ACKs or ABORTs */
		goto forward;
	}
	switch (type) {
	case RMPP_TYPE_DATA:
		if (!rmpp_agent(agent))
			goto forward;
		on_data(r, agent, tail);
		return;
	case RMPP_TYPE_ACK:
	case RMPP_TYPE_STOP:
	case RMPP_TYPE_ABORT:
		if ((s = find_send(mad[1], tid, (uint16_t)r->slid))) {
			on_ack(s, r, tail);
			return;
		}
		if (type != RMPP_TYPE_ACK && (x = find_recv(mad[1], tid, (uint16_t)r->slid))) {
			DBG("recv tid 0x%016llx: %s from the sender: dropped", (unsigned long long)tid,
			    type == RMPP_TYPE_STOP ? "STOP" : "ABORT");
			drop_recv(x);
			return;
		}
		if (rmpp_agent(agent)) {
			if (cfg.debug > 1)
				logf_("type %u tid 0x%016llx segment %u from lid %u: no such transfer",
				      type, (unsigned long long)tid, rmpp_get32(mad + RMPP_SEGNUM_OFF),
				      ntohs((uint16_t)r->slid));
			return; /* for a transfer long gone */
		}
		goto forward;
	default:
		if (rmpp_agent(agent))
			return; /* not RMPP as we know it */
		goto forward;
	}
forward:
	a = new_action(tail, ACT_FORWARD);
	if (!a)
		return;
	a->len = p->len;
	memcpy(a->buf, r, p->len);
}

/* run_timers resends windows nobody acknowledged and forgets old receives. */
static int64_t run_timers(struct action ***tail)
{
	int64_t now = now_ms(), next = now + 60000;
	struct send_xfer *s, *sn;
	struct recv_xfer *x, *xn;

	for (s = sends; s; s = sn) {
		sn = s->next;
		if (s->deadline <= now) {
			if (s->retries >= cfg.retries) {
				DBG("send tid 0x%016llx: no ACK after %d retries, at segment %u of %u: "
				    "given up", (unsigned long long)s->tid, s->retries, s->tx.last_ack,
				    s->tx.seg_count);
				unlink_send(s);
				free_send(s);
				continue;
			}
			s->retries++;
			probe_send(s, tail);
			s->deadline = now + cfg.retry_ms;
		}
		if (s->deadline < next)
			next = s->deadline;
	}
	for (x = recvs; x; x = xn) {
		xn = x->next;
		if (x->deadline <= now) {
			if (!x->rx.complete)
				DBG("recv tid 0x%016llx: no segment for %d ms, at %u",
				    (unsigned long long)x->tid, cfg.recv_timeout_ms, x->rx.seg);
			abort_recv(x, RMPP_STATUS_T2L, tail);
			continue;
		}
		if (x->deadline < next)
			next = x->deadline;
	}
	return next;
}

/*
 * to_shim sends a datagram on to the shim, unless the process is ending or
 * no agent takes its class (the shim would crash on it: no queue to put it
 * in; the kernel drops a MAD for no agent). It returns 1 when sent, 0 when
 * dropped, -1 when it would have to wait and may not (the reader's case).
 */
static int to_shim(const struct sim_req *r, size_t len, int wait)
{
	int ret = 0;

	if (wait)
		pthread_mutex_lock(&fwd_lk);
	else if (pthread_mutex_trylock(&fwd_lk))
		return -1;
	if (!__atomic_load_n(&exiting, __ATOMIC_ACQUIRE) &&
	    __atomic_load_n(&class_fd[r->mad[1]], __ATOMIC_RELAXED) >= 0) {
		ssize_t n = send(fwd_fd, r, len, MSG_NOSIGNAL | (wait ? 0 : MSG_DONTWAIT));

		ret = n == (ssize_t)len ? 1 : !wait && n < 0 && errno == EAGAIN ? -1 : 0;
		if (n < 0 && ret == 0)
			DBG("to the shim: %s", strerror(errno));
	} else if (cfg.debug > 1) {
		logf_("class 0x%02x method 0x%02x tid 0x%016llx: no agent, dropped", r->mad[1],
		      r->mad[MAD_METHOD_OFF], (unsigned long long)rmpp_get64(r->mad + 8));
	}
	pthread_mutex_unlock(&fwd_lk);
	return ret;
}

/* class_barrier returns once no datagram decided on before is still being sent. */
static void class_barrier(void)
{
	pthread_mutex_lock(&fwd_lk);
	pthread_mutex_unlock(&fwd_lk);
}

/* send_marker wakes a poll() sleeping in the shim on the fd of mgmt_class. */
static void send_marker(uint8_t mgmt_class, uint32_t agent)
{
	struct sim_req m;

	memset(&m, 0, sizeof m);
	m.length = htobe64(MAD_SIZE); /* big-endian, as the shim writes it */
	m.mad[1] = mgmt_class;
	m.mad[MAD_METHOD_OFF] = MAD_METHOD_RESP;      /* the shim takes the agent... */
	rmpp_put32(m.mad + 8, agent & 0xffff);        /* ...from TID bits 32-47 */
	memcpy(m.mad + MARKER_OFF, marker_magic, sizeof marker_magic);
	to_shim(&m, sizeof m, 1);
}

static int is_marker(const uint8_t *frame, ssize_t n)
{
	const uint8_t *mad = frame + UMAD_HDR_LEN;

	return n >= UMAD_HDR_LEN + MARKER_OFF + (ssize_t)sizeof marker_magic && mad[0] == 0 &&
	       memcmp(mad + MARKER_OFF, marker_magic, sizeof marker_magic) == 0;
}

/*
 * deliver_item queues a reassembled MAD for its fd and sends the marker that
 * wakes a poll() in the shim. Both happen under lk, and only while the
 * shim still routes the class to the fd: the shim crashes on a packet for a
 * class nobody has registered, so unregister and close wait for the
 * markers in flight (drain_shim), and none may start after they looked.
 */
static void deliver_item(struct action *a)
{
	struct fdq *q;

	pthread_mutex_lock(&lk);
	if (!is_umad_fd(a->fd) || class_fd[a->mgmt_class] != a->fd ||
	    __atomic_load_n(&exiting, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&lk);
		free(a->item);
		return;
	}
	q = &fdqs[a->fd - UMAD_FD_MIN];
	if (q->tail)
		q->tail->next = a->item;
	else
		q->head = a->item;
	q->tail = a->item;
	q->markers++;
	send_marker(a->mgmt_class, a->agent);
	pthread_mutex_unlock(&lk);
}

/* drain waits, 200 ms at most, until the reader of fd's peer took all we sent. */
static void drain(int fd)
{
	int i, outq;

	for (i = 0; i < 200; i++) {
		if (next_ioctl(fd, SIOCOUTQ, &outq) < 0 || outq == 0)
			break;
		usleep(1000);
	}
}

/*
 * drain_shim waits (a little) until the shim has taken every datagram we
 * sent it, markers included, and routed them.
 */
static void drain_shim(void)
{
	drain(fwd_fd);
	usleep(2000); /* taken is not yet routed: the shim's receiver looks up the fd next */
}

/* run_actions does, in order, what the worker or a writer decided. */
static void run_actions(struct action *a)
{
	struct action *next;

	for (; a; a = next) {
		next = a->next;
		switch (a->kind) {
		case ACT_WRITE: {
			ssize_t n = next_write(a->fd, a->buf, a->len);

			if (n < 0)
				DBG("write on fd %d: %s", a->fd, strerror(errno));
			else if (cfg.debug > 2)
				logf_("wrote %zd on fd %d: type %u method 0x%02x tid 0x%016llx", n, a->fd,
				      a->buf[UMAD_HDR_LEN + RMPP_TYPE_OFF], a->buf[UMAD_HDR_LEN + 3],
				      (unsigned long long)rmpp_get64(a->buf + UMAD_HDR_LEN + 8));
			break;
		}
		case ACT_FORWARD:
			to_shim((const struct sim_req *)a->buf, a->len, 1);
			break;
		case ACT_DELIVER:
			deliver_item(a);
			break;
		}
		free(a);
	}
}

/* reader drains the real socket into the worker's queue; it never blocks on
 * anything else, so ibsim can always deliver to us. */
static void *reader(void *arg)
{
	(void)arg;
	for (;;) {
		struct pkt *p = malloc(sizeof *p);

		if (!p) {
			sleep(1);
			continue;
		}
		p->next = NULL;
		p->len = recv(real_fd, &p->req, sizeof p->req, 0);
		if (p->len < 0) {
			free(p);
			if (errno == EINTR)
				continue;
			if (errno == EBADF || errno == ENOTSOCK)
				return NULL;
			DBG("recv: %s", strerror(errno));
			continue;
		}
		if (p->len == (ssize_t)sizeof p->req && p->req.mad[1] == 0x81 &&
		    (rmpp_get64(p->req.mad + 8) & 0xffffffffffffULL) == KICK_TID48) {
			DBG("kick answered");
			free(p);
			continue;
		}
		pthread_mutex_lock(&in_lk);
		if (!in_head && !in_busy && p->len == (ssize_t)sizeof p->req && !p->req.status &&
		    !rmpp_is_active(p->req.mad) && to_shim(&p->req, p->len, 0) >= 0) {
			/* Nothing of ours ahead of it: straight on to the shim. */
			pthread_mutex_unlock(&in_lk);
			free(p);
			continue;
		}
		if (in_tail)
			in_tail->next = p;
		else
			in_head = p;
		in_tail = p;
		pthread_cond_signal(&in_cv);
		pthread_mutex_unlock(&in_lk);
	}
	return NULL;
}

/* worker runs the protocol: packets in, timers, and what they call for. */
static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		struct action *acts = NULL, **tail = &acts;
		struct pkt *p, *batch;
		struct timespec ts;
		int64_t next;

		pthread_mutex_lock(&lk);
		next = run_timers(&tail);
		pthread_mutex_unlock(&lk);
		run_actions(acts);

		pthread_mutex_lock(&in_lk);
		ts.tv_sec = next / 1000;
		ts.tv_nsec = next % 1000 * 1000000;
		while (!in_head && !in_kick && now_ms() < next)
			if (pthread_cond_timedwait(&in_cv, &in_lk, &ts) == ETIMEDOUT)
				break;
		batch = in_head;
		in_head = in_tail = NULL;
		in_kick = 0;
		in_busy = batch != NULL;
		pthread_mutex_unlock(&in_lk);

		acts = NULL;
		tail = &acts;
		pthread_mutex_lock(&lk);
		for (p = batch; p; p = p->next)
			handle_packet(p, &tail);
		pthread_mutex_unlock(&lk);
		while (batch) {
			p = batch->next;
			free(batch);
			batch = p;
		}
		run_actions(acts);
		pthread_mutex_lock(&in_lk);
		in_busy = 0;
		pthread_mutex_unlock(&in_lk);
	}
	return NULL;
}

/* is_data_socket_name reports whether addr is ibsim's "<sock>:out<N>". */
static int is_data_socket_name(const struct sockaddr *addr, socklen_t len)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)addr;
	size_t n, i;
	const char *name;

	if (!addr || addr->sa_family != AF_UNIX || len <= offsetof(struct sockaddr_un, sun_path) + 1 ||
	    un->sun_path[0] != 0)
		return 0;
	name = un->sun_path + 1;
	n = len - offsetof(struct sockaddr_un, sun_path) - 1;
	while (n > 0 && name[n - 1] == 0)
		n--; /* the shim counts the name's terminating NUL in len */
	for (i = n; i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9'; i--)
		;
	return i < n && i >= 4 && memcmp(name + i - 4, ":out", 4) == 0;
}

/*
 * at_exit runs when the process ends, before the shim's own exit handler
 * (we register ours later, at the first agent), while the shim can still
 * send. It aborts the
 * receives still under way, for the same reason as abort_recv, and stops
 * feeding the shim: its exit handler holds its lock while it waits for its
 * receiver thread to end, and a receiver that has just read a packet waits
 * for that lock (a hang). Last, it waits for ibsim to read what we sent:
 * ibsim takes a client's disconnect before its data and then never reads
 * that data, so the last ACK of a transfer would be lost, and the sender
 * would resend to whoever attaches at the node next.
 */
static void at_exit(void)
{
	struct action *acts = NULL, **tail = &acts;

	if (!__atomic_load_n(&activated, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&lk);
	__atomic_store_n(&exiting, 1, __ATOMIC_RELEASE);
	while (recvs)
		abort_recv(recvs, RMPP_STATUS_UNSPECIFIED, &tail);
	pthread_mutex_unlock(&lk);
	run_actions(acts);
	class_barrier();
	drain_shim();
	drain(real_fd);
}

static void register_at_exit(void)
{
	atexit(at_exit);
}

/*
 * kick_shim gets the shim's receiver thread out of a poll() it may be in on
 * the real socket, so that it polls the pair from now on: Linux's poll()
 * waits on the files it was given, and after dup2 the shim's fd names
 * another one, which it only looks at when the old one wakes it. So: a
 * marker into the pair for fd (agent's), then a packet onto the real socket:
 * a directed-route SubnGet(NodeInfo) of zero hops, which ibsim answers for
 * our own node; the reader drops the answer.
 */
static void kick_shim(uint32_t agent)
{
	struct sim_req k;
	struct agent *ag;

	pthread_mutex_lock(&lk);
	ag = agent < MAX_AGENTS && agents[agent].used ? &agents[agent] : NULL;
	if (ag && is_umad_fd(ag->fd) && class_fd[ag->mgmt_class] == ag->fd) {
		fdqs[ag->fd - UMAD_FD_MIN].markers++;
		send_marker(ag->mgmt_class, agent);
	}
	pthread_mutex_unlock(&lk);
	if (!ag)
		return;

	memset(&k, 0, sizeof k);
	k.dlid = k.slid = 0xffff; /* directed route: permissive LIDs */
	k.length = htobe64(MAD_SIZE);
	k.mad[0] = 1;    /* base version */
	k.mad[1] = 0x81; /* SM class, directed route */
	k.mad[2] = 1;    /* class version */
	k.mad[3] = 0x01; /* Get */
	rmpp_put32(k.mad + 8, (uint32_t)(KICK_TID48 >> 32));
	rmpp_put32(k.mad + 12, (uint32_t)KICK_TID48);
	k.mad[16] = 0x00, k.mad[17] = 0x11; /* NodeInfo */
	k.mad[32] = k.mad[33] = k.mad[34] = k.mad[35] = 0xff; /* DrSLID, DrDLID */
	if (send(real_fd, &k, sizeof k, MSG_NOSIGNAL) < 0)
		DBG("kick: %s", strerror(errno));
}

/*
 * activate moves the shim's data socket behind our reader (see the top of
 * the file) on the first write through an RMPP agent, agent. It returns 0
 * when the layer is active.
 */
static int activate(uint32_t agent)
{
	int sp[2], r, ret = -1;
	sigset_t all, old;
	pthread_t t;

	if (__atomic_load_n(&activated, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&act_lk);
	if (activated) {
		ret = 0;
		goto out;
	}
	if (sim_fd < 0) {
		DBG("no ibsim data socket seen: RMPP off");
		goto out;
	}
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp) < 0)
		goto out;
	r = fcntl(sim_fd, F_DUPFD_CLOEXEC, 3);
	if (r < 0 || r >= UMAD_FD_MIN || sp[1] >= UMAD_FD_MIN) {
		next_close(sp[0]);
		next_close(sp[1]);
		if (r >= 0)
			next_close(r);
		goto out;
	}
	fwd_fd = sp[1];
	/* From here on the shim's writes go to r; then its reads come from us. */
	__atomic_store_n(&real_fd, r, __ATOMIC_RELEASE);
	if (dup2(sp[0], sim_fd) < 0) {
		DBG("dup2: %s", strerror(errno));
		abort(); /* half moved: nothing sane is left */
	}
	next_close(sp[0]);

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&t, NULL, reader, NULL) == 0)
		pthread_detach(t);
	else
		abort();
	if (pthread_create(&t, NULL, worker, NULL) == 0)
		pthread_detach(t);
	else
		abort();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	__atomic_store_n(&activated, 1, __ATOMIC_RELEASE); /* before any marker */
	kick_shim(agent);
	DBG("active: ibsim socket fd %d read by us on fd %d", sim_fd, r);
	ret = 0;
out:
	pthread_mutex_unlock(&act_lk);
	return ret;
}

/* deliver hands the head of q to a read of count bytes into buf; lk held. */
static ssize_t deliver(struct fdq *q, void *buf, size_t count)
{
	struct item *it = q->head;
	size_t n;

	if (count < (size_t)UMAD_HDR_LEN) {
		errno = EINVAL;
		return -1;
	}
	if (it->whole && count < it->len) {
		/* As the kernel: the header with the full length, the first
		 * segment's worth of MAD, ENOSPC, and the message stays. */
		n = count < (size_t)UMAD_FRAME ? count : (size_t)UMAD_FRAME;
		memcpy(buf, it->data, n);
		errno = ENOSPC;
		return -1;
	}
	n = it->len < count ? it->len : count; /* a shim frame is cut, as the shim does */
	memcpy(buf, it->data, n);
	q->head = it->next;
	if (!q->head)
		q->tail = NULL;
	free(it);
	return n;
}

/* stash keeps a frame taken from the shim at the end of q. */
static void stash(struct fdq *q, const uint8_t *frame, size_t n)
{
	struct item *it = malloc(sizeof *it + n);

	if (!it)
		return;
	it->next = NULL;
	it->whole = 0;
	it->len = n;
	memcpy(it->data, frame, n);
	pthread_mutex_lock(&lk);
	if (q->tail)
		q->tail->next = it;
	else
		q->head = it;
	q->tail = it;
	pthread_mutex_unlock(&lk);
}

/* ---- The wrapped calls ---- */

/*
 * connect notes the shim's data socket. With RMPPSHIM_GUARD=1 the layer
 * activates there and then, before the shim's receiver thread starts: the
 * shim never sees a packet of a class the process has no agent for (it
 * crashes on one: a resend meant for the node's previous client can be
 * that), at the cost of one more hop per packet.
 */
int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	int r;

	ensure_init();
	r = next_connect(fd, addr, len);
	if (r == 0 && is_data_socket_name(addr, len) && sim_fd < 0) {
		sim_fd = fd;
		if (cfg.guard)
			activate(MAX_AGENTS);
	}
	return r;
}

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;
	int r;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	ensure_init();
	if (!is_umad_fd(fd) || !arg)
		return next_ioctl(fd, request, arg);
	if (request == IOCTL_UNREGISTER_AGENT) {
		uint32_t id = *(const uint32_t *)arg;
		struct action *acts = NULL, **tail = &acts;

		pthread_mutex_lock(&lk);
		abort_fd(fd, id, &tail);
		if (id < MAX_AGENTS && agents[id].used) {
			class_agent[agents[id].mgmt_class] = -1;
			__atomic_store_n(&class_fd[agents[id].mgmt_class], -1, __ATOMIC_RELAXED);
			agents[id].used = 0;
		}
		pthread_mutex_unlock(&lk);
		run_actions(acts); /* the ABORTs go out through the agent still there */
		if (__atomic_load_n(&activated, __ATOMIC_ACQUIRE)) {
			class_barrier();
			drain_shim();
		}
		return next_ioctl(fd, request, arg);
	}
	r = next_ioctl(fd, request, arg);
	if (r == 0 && request == IOCTL_REGISTER_AGENT) {
		const struct reg_req *req = arg;

		/* After the shim's own exit handler, which is in place by now
		 * (umad2sim_init registers it), so that ours runs first. */
		pthread_once(&at_exit_once, register_at_exit);

		pthread_mutex_lock(&lk);
		if (req->id < MAX_AGENTS) {
			agents[req->id] = (struct agent){1, fd, req->mgmt_class, req->rmpp_version};
			class_agent[req->mgmt_class] = req->id;
			__atomic_store_n(&class_fd[req->mgmt_class], fd, __ATOMIC_RELAXED);
		}
		pthread_mutex_unlock(&lk);
		DBG("fd %d: agent %u for class 0x%02x, RMPP version %u", fd, req->id,
		    req->mgmt_class, req->rmpp_version);
	}
	return r;
}

int close(int fd)
{
	ensure_init();
	if (is_umad_fd(fd)) {
		struct fdq *q = &fdqs[fd - UMAD_FD_MIN];
		struct send_xfer *s, *sn;
		struct action *acts = NULL, **tail = &acts;
		struct item *it;
		int i;

		pthread_mutex_lock(&lk);
		abort_fd(fd, -1, &tail);
		for (i = 0; i < MAX_AGENTS; i++)
			if (agents[i].used && agents[i].fd == fd)
				agents[i].used = 0;
		for (i = 0; i < 256; i++)
			if (class_fd[i] == fd) {
				class_agent[i] = -1;
				__atomic_store_n(&class_fd[i], -1, __ATOMIC_RELAXED);
			}
		while ((it = q->head)) {
			q->head = it->next;
			free(it);
		}
		q->tail = NULL;
		q->markers = 0;
		for (s = sends; s; s = sn) {
			sn = s->next;
			if (s->fd == fd) {
				unlink_send(s);
				free_send(s);
			}
		}
		pthread_mutex_unlock(&lk);
		run_actions(acts);
		if (__atomic_load_n(&activated, __ATOMIC_ACQUIRE)) {
			class_barrier();
			drain_shim();
		}
	}
	return next_close(fd);
}

ssize_t write(int fd, const void *buf, size_t count)
{
	const struct umad_hdr *h = buf;
	const uint8_t *mad = (const uint8_t *)buf + UMAD_HDR_LEN;
	int rmpp, r;

	ensure_init();
	if (fd >= 0 && fd == sim_fd && (r = __atomic_load_n(&real_fd, __ATOMIC_ACQUIRE)) >= 0)
		return send(r, buf, count, MSG_NOSIGNAL); /* the shim, to ibsim */
	if (!is_umad_fd(fd) || count < (size_t)UMAD_HDR_LEN + RMPP_HDR_END)
		return next_write(fd, buf, count);
	pthread_mutex_lock(&lk);
	rmpp = rmpp_agent(h->agent_id) != NULL;
	if (rmpp && !(mad[MAD_METHOD_OFF] & MAD_METHOD_RESP))
		note_request(h->agent_id, wire_tid(mad, h->agent_id));
	pthread_mutex_unlock(&lk);
	if (!rmpp)
		return next_write(fd, buf, count);
	DBG("write: agent %u, %zu bytes: class 0x%02x method 0x%02x attr 0x%04x; RMPP version %u "
	    "type %u flags 0x%02x status %u segment %u length %u",
	    h->agent_id, count, mad[1], mad[MAD_METHOD_OFF], mad[16] << 8 | mad[17],
	    mad[RMPP_VERSION_OFF], mad[RMPP_TYPE_OFF], mad[RMPP_FLAGS_OFF], mad[RMPP_STATUS_OFF],
	    rmpp_get32(mad + RMPP_SEGNUM_OFF), rmpp_get32(mad + RMPP_PAYLEN_OFF));
	/* Whatever an RMPP agent sends may bring RMPP back: listen first. */
	if (activate(h->agent_id) < 0 || !rmpp_is_active(mad))
		return next_write(fd, buf, count);
	return rmpp_send(fd, h, mad, count - UMAD_HDR_LEN, count);
}

ssize_t read(int fd, void *buf, size_t count)
{
	uint8_t frame[2 * UMAD_FRAME];
	struct fdq *q;
	ssize_t n;

	ensure_init();
	if (!is_umad_fd(fd) || !__atomic_load_n(&activated, __ATOMIC_ACQUIRE))
		return next_read(fd, buf, count);
	q = &fdqs[fd - UMAD_FD_MIN];
	for (;;) {
		unsigned markers;

		pthread_mutex_lock(&lk);
		if (q->head) {
			n = deliver(q, buf, count);
			pthread_mutex_unlock(&lk);
			return n;
		}
		markers = q->markers;
		pthread_mutex_unlock(&lk);
		if (!markers)
			return next_read(fd, buf, count);
		/* A marker may be ahead in the shim's queue: sift it out. */
		n = next_read(fd, frame, sizeof frame);
		if (n > 0 && is_marker(frame, n)) {
			pthread_mutex_lock(&lk);
			if (q->markers)
				q->markers--;
			pthread_mutex_unlock(&lk);
			continue;
		}
		if (n <= 0)
			return n; /* the shim's -EWOULDBLOCK and the like */
		if ((size_t)n > count)
			n = count;
		memcpy(buf, frame, n);
		return n;
	}
}

int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	uint8_t frame[2 * UMAD_FRAME];
	int64_t deadline;
	struct fdq *q;
	nfds_t i;
	int fd;

	ensure_init();
	if (!__atomic_load_n(&activated, __ATOMIC_ACQUIRE))
		return next_poll(fds, nfds, timeout);
	/* The shim waits for the first umad fd of the set only; so do we. */
	for (i = 0; i < nfds && !is_umad_fd(fds[i].fd); i++)
		;
	if (i == nfds)
		return next_poll(fds, nfds, timeout);
	fd = fds[i].fd;
	q = &fdqs[fd - UMAD_FD_MIN];
	deadline = timeout < 0 ? -1 : now_ms() + timeout;
	for (;;) {
		unsigned markers;
		int have, r, left;
		ssize_t n;

		pthread_mutex_lock(&lk);
		have = q->head != NULL;
		pthread_mutex_unlock(&lk);
		if (have) {
			fds[i].revents = POLLIN;
			return 1;
		}
		left = deadline < 0 ? -1 : (int)(deadline > now_ms() ? deadline - now_ms() : 0);
		r = next_poll(fds, nfds, left);
		if (r <= 0 || !(fds[i].revents & POLLIN))
			return r;
		pthread_mutex_lock(&lk);
		have = q->head != NULL;
		markers = q->markers;
		pthread_mutex_unlock(&lk);
		if (have || !markers)
			return r;
		/* Perhaps only a marker woke us: look. */
		n = next_read(fd, frame, sizeof frame);
		if (n > 0 && is_marker(frame, n)) {
			pthread_mutex_lock(&lk);
			if (q->markers)
				q->markers--;
			pthread_mutex_unlock(&lk);
			continue;
		}
		if (n > 0) {
			stash(q, frame, n);
			return r;
		}
		if (left == 0)
			return 0;
	}
}
