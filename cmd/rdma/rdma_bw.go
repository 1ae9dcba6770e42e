package rdma

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/verbs"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "rdma_bw",
		Summary: "RC RDMA WRITE bandwidth between two hosts, as perftest's ib_write_bw",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newRdmaBwCmd(f, nil) },
	})
}

// perftest's limits and defaults (perftest_parameters.h).
const (
	bwDefaultTCPPort = 18515
	bwDefaultSize    = 65536
	bwDefaultIters   = 5000
	bwMaxSizeAll     = 1 << 23
	bwMaxSize        = 1<<31 - 1
	bwMinIters       = 5
	bwMaxIters       = 100000000
	bwMaxTxDepth     = 15000
	bwDefaultInline  = 220
	// bwMaxSGE bounds --num-sge: more than devices offer (rxe 32, mlx5
	// 30); the QP's creation says when the device takes fewer.
	bwMaxSGE = 64
)

// rdmaBwOptions are rdma_bw's parsed flags.
type rdmaBwOptions struct {
	IO        cmdutil.IOStreams
	Server    string // the server's host name; empty: this side is the server
	Device    string // -d
	IBPort    int    // -i
	GIDIndex  int    // -x; -1: none (0 on Ethernet)
	Size      int    // -s
	Iters     int    // -n
	Duration  int    // -D, seconds; 0: iterations
	Bidir     bool   // -b
	All       bool   // -a
	TCPPort   int    // -p
	IPv6      bool   // -6: the exchange over IPv6 only (python-rdma's AF_INET6)
	Gbits     bool   // --report_gbits
	TxDepth   int    // -t
	CQMod     int    // -Q
	MTU       int    // -m as enum ibv_mtu; 0: the port's
	Inline    int    // -I
	Events    bool   // -e
	NoPeak    bool   // -N
	QPTimeout int    // -u
	SL        int    // -S
	// RDMACM is perftest's -R: the QP connected by rdma_cm, the exchange
	// over rdma_cm; CommCM is its -z: the exchange alone over rdma_cm.
	RDMACM, CommCM bool
	JSON           bool
	// Debug is python-rdma's --debug: the end port and the exchange's
	// address on stderr.
	Debug int
	// NumSGE is python-rdma's --num-sge: each write's data in this many
	// scatter/gather entries.
	NumSGE int
	// caArg and portArg are python-rdma's -C and -P, folded into Device
	// and IBPort (rdma_bw_endport.go).
	caArg, portArg string
	// open opens a device (verbs.Open; a fake in tests).
	open    func(string) (*verbs.Context, error)
	sizeArg string
	mtuArg  int
	cqModOK bool // -Q given
	ctx     context.Context
}

func newRdmaBwCmd(f *cmdutil.Factory, runF func(*rdmaBwOptions) error) *cobra.Command {
	o := &rdmaBwOptions{IO: f.IO, open: verbs.Open}
	c := &cobra.Command{
		Use:   "rdma_bw [options] [server]",
		Short: "RC RDMA WRITE bandwidth between two hosts, as perftest's ib_write_bw",
		Long: `rdma_bw measures RDMA WRITE bandwidth over a reliable-connected QP between
a server (started without a host name) and a client (given the server's
host name), as perftest's ib_write_bw does, and prints its report layout.
The two exchange their QP numbers, PSNs, LIDs, GIDs, rkeys and buffer
addresses over TCP; the server takes the test parameters from the client.
The client writes seeded pseudo-random bytes; after each size both sides
compare checksums of what arrived with what was sent, and a mismatch
fails the run (exit 3). With -R (or -z) the exchange is perftest's over
rdma_cm instead, and the peer can be ib_write_bw -R (-z): both sides then
run their own flags, and the data is not checked.`,
		Example: `  rdma_bw -d rxe0                    # server
  rdma_bw -d rxe0 192.0.2.1          # client: 5000 writes of 64 KiB
  rdma_bw -d mlx5_0 -a 10.0.0.1      # every size from 2 bytes to 8 MiB
  rdma_bw -D 10 -b --json 10.0.0.1   # both ways for 10 s, as JSON
  rdma_bw -R 192.0.2.1               # against ib_write_bw -R's server`,
		Args: cmdutil.ArgsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Server = args[0]
			}
			if err := o.finish(c); err != nil {
				return err
			}
			if err := o.resolveBwEndPort(c, localDevices(f)); err != nil {
				return err
			}
			o.ctx = c.Context()
			if runF != nil {
				return runF(o)
			}
			return rdmaBwRun(o)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&o.Device, "ib-dev", "d", "", "use IB device <dev> (default the first device found)")
	fl.IntVarP(&o.IBPort, "ib-port", "i", 1, "use port <port> of IB device")
	fl.IntVarP(&o.GIDIndex, "gid-index", "x", -1, "source GID index (default 0 on RoCE, none on InfiniBand)")
	fl.StringVarP(&o.sizeArg, "size", "s", strconv.Itoa(bwDefaultSize), "size of message to exchange (K and M suffixes)")
	fl.IntVarP(&o.Iters, "iters", "n", bwDefaultIters, fmt.Sprintf("number of exchanges (at least %d)", bwMinIters))
	fl.IntVarP(&o.Duration, "duration", "D", 0, "run for this many seconds instead of -n iterations")
	fl.BoolVarP(&o.Bidir, "bidirectional", "b", false, "measure bidirectional bandwidth")
	fl.BoolVarP(&o.All, "all", "a", false, "run sizes from 2 till 2^23")
	fl.IntVarP(&o.TCPPort, "port", "p", bwDefaultTCPPort, "TCP port of the out-of-band exchange")
	fl.BoolVarP(&o.IPv6, "ipv6", "6", false, "use IPv6 for the out-of-band exchange (python-rdma's)")
	fl.BoolVar(&o.Gbits, "report_gbits", false, "report bandwidth in Gb/sec instead of MB/sec")
	fl.BoolP("CPU-freq", "F", false, "accepted for perftest compatibility (rdma_bw times with the monotonic clock)")
	fl.IntVarP(&o.TxDepth, "tx-depth", "t", 128, "size of the send queue (1 to 15000)")
	fl.IntVarP(&o.CQMod, "cq-mod", "Q", 100, "generate a completion every N writes (1 to 1024)")
	fl.IntVarP(&o.mtuArg, "mtu", "m", 0, "path MTU: 256, 512, 1024, 2048 or 4096 (default the port's active MTU)")
	fl.IntVarP(&o.Inline, "inline_size", "I", bwDefaultInline, "send messages up to this size inline (0 to 1024)")
	fl.BoolVarP(&o.Events, "events", "e", false, "sleep on the CQ's completion channel instead of polling")
	fl.BoolVarP(&o.NoPeak, "noPeak", "N", false, "do not compute the peak bandwidth")
	fl.IntVarP(&o.QPTimeout, "qp-timeout", "u", 14, "QP timeout: 4.096 us * 2^N (0 to 31)")
	fl.IntVarP(&o.SL, "sl", "S", 0, "service level (0 to 15)")
	fl.BoolVarP(&o.RDMACM, "rdma_cm", "R", false, "connect the QP with rdma_cm and exchange through rdma_cm, as perftest's -R (IPv4)")
	fl.BoolVarP(&o.CommCM, "comm_rdma_cm", "z", false, "exchange through an rdma_cm connection, the QP connected from it, as perftest's -z (IPv4)")
	fl.BoolVar(&o.JSON, "json", false, "one JSON document instead of the text report")
	fl.IntVar(&o.NumSGE, "num-sge", 1, fmt.Sprintf("split each write's data into this many scatter/gather entries, 1 to %d (python-rdma's; its -e is perftest's --events here)", bwMaxSGE))
	fl.CountVar(&o.Debug, "debug", "print the end port and where the exchange connects or listens on stderr (python-rdma's)")
	addBwEndPortFlags(c, o)
	return c
}

// finish checks the flags against perftest's ranges and applies its
// dependencies (force_dependecies): the send queue no deeper than the
// iterations, completions no sparser than the send queue, one completion
// a message above 8 KiB unless -Q says otherwise.
func (o *rdmaBwOptions) finish(c *cobra.Command) error {
	size, err := parseBwSize(o.sizeArg)
	if err != nil {
		return err
	}
	o.Size = size
	o.cqModOK = c.Flags().Changed("cq-mod")
	if o.mtuArg != 0 {
		m := 0
		for e := verbs.MTU256; e <= verbs.MTU4096; e++ {
			if e.Bytes() == o.mtuArg {
				m = int(e)
			}
		}
		if m == 0 {
			return cmdutil.UsageErrorf("invalid MTU %d: want 256, 512, 1024, 2048 or 4096", o.mtuArg)
		}
		o.MTU = m
	}
	checks := []struct {
		name      string
		v, lo, hi int
	}{
		{"-i port", o.IBPort, 1, 255}, {"-x GID index", o.GIDIndex, -1, 255}, {"-n iterations", o.Iters, bwMinIters, bwMaxIters},
		{"-D duration", o.Duration, 0, 1 << 30}, {"-p TCP port", o.TCPPort, 1, 65535}, {"-t tx depth", o.TxDepth, 1, bwMaxTxDepth},
		{"-Q CQ moderation", o.CQMod, 1, 1024}, {"-I inline size", o.Inline, 0, 1024}, {"-u QP timeout", o.QPTimeout, 0, 31},
		{"-S service level", o.SL, 0, 15}, {"--num-sge", o.NumSGE, 1, bwMaxSGE},
	}
	for _, ch := range checks {
		if ch.v < ch.lo || ch.v > ch.hi {
			return cmdutil.UsageErrorf("invalid %s %d: want %d to %d", ch.name, ch.v, ch.lo, ch.hi)
		}
	}
	if o.All && o.Duration > 0 {
		return cmdutil.UsageErrorf("duration mode (-D) does not run all sizes (-a)")
	}
	if o.RDMACM || o.CommCM {
		if o.IPv6 {
			return cmdutil.UsageErrorf("perftest's rdma_cm exchange (-R, -z) is IPv4 only, not with -6")
		}
	} else if o.Server == "" {
		return nil // the server takes the client's parameters
	}
	// Over perftest's exchange the server runs its own flags, as
	// perftest's does.
	o.applyDependencies()
	return nil
}

// applyDependencies is perftest's force_dependecies for a WRITE test.
func (o *rdmaBwOptions) applyDependencies() {
	if o.Duration == 0 && o.TxDepth > o.Iters {
		o.TxDepth = o.Iters
	}
	if o.Size > 8192 && !o.All && !o.Events && !o.cqModOK {
		o.CQMod = 1
	}
	if o.CQMod > o.TxDepth {
		o.CQMod = o.TxDepth
	}
}

// parseBwSize reads -s as perftest does (a K or M suffix multiplies by
// 2^10 or 2^20), with decimal or 0x hex digits and never octal.
func parseBwSize(s string) (int, error) {
	num, mult := s, uint64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		num, mult = s[:len(s)-1], 1<<10
	case strings.HasSuffix(s, "M"):
		num, mult = s[:len(s)-1], 1<<20
	}
	var n uint64
	var err error
	if h, ok := strings.CutPrefix(strings.ToLower(num), "0x"); ok {
		n, err = strconv.ParseUint(h, 16, 32)
	} else {
		n, err = strconv.ParseUint(num, 10, 32)
	}
	if err != nil || n*mult < 1 || n*mult > bwMaxSize {
		return 0, cmdutil.UsageErrorf("invalid message size %q: want 1 to %d bytes (K and M suffixes allowed)", s, bwMaxSize)
	}
	return int(n * mult), nil
}

// params are the client's test parameters, sent to the server.
func (o *rdmaBwOptions) params() bwParams {
	return bwParams{Size: o.Size, Iters: o.Iters, Duration: o.Duration, All: o.All, Bidir: o.Bidir, TxDepth: o.TxDepth,
		CQMod: o.CQMod, Inline: o.Inline, NoPeak: o.NoPeak, Seed: rand.Uint64()}
}

// sizes are the message sizes of the run: 2 to 2^23 with -a.
func (p bwParams) sizes() []int {
	if !p.All {
		return []int{p.Size}
	}
	var s []int
	for i := 1; i < 24; i++ {
		s = append(s, 1<<i)
	}
	return s
}

// rdmaBwRun is one side of the test.
func rdmaBwRun(o *rdmaBwOptions) error {
	if o.RDMACM || o.CommCM {
		return rdmaBwCMRun(o)
	}
	ctx := o.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	s, err := openBwSession(o)
	if err != nil {
		return err
	}
	defer s.close()
	o.debugf("Using end port %s/%d", s.dev.Name(), o.IBPort)
	peer, err := bwConnect(ctx, o)
	if err != nil {
		return err
	}
	defer peer.conn.Close()
	stop := context.AfterFunc(ctx, func() { peer.conn.Close() })
	defer stop()

	var p bwParams
	if o.Server != "" {
		p = o.params()
		err = peer.send("params", p)
	} else {
		err = peer.recv("params", &p)
	}
	if err != nil {
		return err
	}
	if err := checkBwParams(p); err != nil {
		return err
	}
	if err := s.setup(o, p); err != nil {
		return err
	}
	local := s.dest()
	var remote bwDest
	if err := peer.exchange("dest", local, &remote); err != nil {
		return err
	}
	o.debugf("path to peer LID %d QPN %#06x PSN %#06x, MR peer raddr=%x peer rkey=%x", remote.LID, remote.QPN, remote.PSN, remote.Addr, remote.RKey)
	if err := s.connect(o, local, remote); err != nil {
		return err
	}
	var ready struct{}
	if err := peer.exchange("ready", struct{}{}, &ready); err != nil {
		return err
	}
	rep := &bwReport{o: o, p: p, s: s, device: s.dev.Name(), local: local, remote: remote, mtu: pathMTU(o, local, remote)}
	if err := rep.begin(); err != nil {
		return err
	}
	// The client writes the seed's bytes; in a bidirectional test the
	// server writes bytes of a seed of its own.
	seed := p.Seed
	if o.Server == "" {
		seed = ^seed
	}
	verbs.Pattern(seed).Fill(s.sendHalf())
	sender := o.Server != "" || p.Bidir
	for _, size := range p.sizes() {
		if err := bwOneSize(ctx, o, p, s, peer, rep, size, sender); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var dataErr *bwDataError
			if errors.As(err, &dataErr) {
				_ = rep.end() // the report stands; the data did not
			}
			return err
		}
	}
	return rep.end()
}

// checkBwParams refuses parameters from a client that would not fit this
// side's limits.
func checkBwParams(p bwParams) error {
	if p.Size < 1 || p.Size > bwMaxSize || p.TxDepth < 1 || p.TxDepth > bwMaxTxDepth || p.CQMod < 1 || p.CQMod > p.TxDepth || (p.Duration == 0 && p.Iters < 1) {
		return fmt.Errorf("the client sent parameters out of range: %+v", p)
	}
	return nil
}

// bwConnect listens for the client (server) or dials the server
// (client).
func bwConnect(ctx context.Context, o *rdmaBwOptions) (*bwPeer, error) {
	addr := net.JoinHostPort(o.Server, strconv.Itoa(o.TCPPort))
	network := "tcp"
	if o.IPv6 {
		network = "tcp6"
	}
	if o.Server != "" {
		o.debugf("Connecting to %s", addr)
		var d net.Dialer
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, fmt.Errorf("connecting to the server: %w", err)
		}
		return newBwPeer(conn, "server"), nil
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("listening for the client: %w", err)
	}
	defer ln.Close()
	o.debugf("Listening on %s", ln.Addr())
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	conn, err := ln.Accept()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("waiting for the client: %w", err)
	}
	return newBwPeer(conn, "client"), nil
}

// bwOneSize runs one message size: both sides clear what the peer will
// write, start together, the senders write, and both compare checksums
// of what arrived with what was sent.
func bwOneSize(ctx context.Context, o *rdmaBwOptions, p bwParams, s *bwSession, peer *bwPeer, rep *bwReport, size int, sender bool) error {
	peerSends := o.Server == "" || p.Bidir
	if peerSends {
		clear(s.recvHalf()[:size])
	}
	var g bwGo
	if err := peer.exchange("go", bwGo{Size: size}, &g); err != nil {
		return err
	}
	if g.Size != size {
		return fmt.Errorf("the %s runs size %d where this side runs %d", peer.role, g.Size, size)
	}
	var mine, theirs bwResultMsg
	if sender {
		wctx, stop := peer.watch(ctx)
		st, err := s.runWrites(wctx, p, size, rep.remote, o.Events)
		if gone := stop(); gone != nil && err != nil {
			return gone
		}
		if err != nil {
			return err
		}
		mine = bwResultMsg{Stats: &st, SentSum: checksum(s.sendHalf()[:size])}
	}
	if err := peer.exchange("result", mine, &theirs); err != nil {
		return err
	}
	var check bwCheckMsg
	var got bwCheckMsg
	if peerSends {
		got.RecvSum = checksum(s.recvHalf()[:size])
	}
	if err := peer.exchange("check", got, &check); err != nil {
		return err
	}
	stats, other := mine.Stats, theirs.Stats
	if stats == nil {
		stats, other = theirs.Stats, nil
	}
	if stats == nil {
		return fmt.Errorf("neither side sent at size %d", size)
	}
	line := stats.result(other, o.Gbits)
	verr := bwVerify(o, p, s, size, sender, peerSends, mine, theirs, got, check)
	rep.add(bwJSONResult{bwResult: line, DataVerified: verr == nil, SentSHA256: mine.SentSum, ReceivedSHA256: got.RecvSum})
	return verr
}

// bwDataError is a checksum mismatch: bytes that did not arrive as sent.
type bwDataError struct {
	Size      int
	Direction string // "client to server" or "server to client"
	Sent, Got string
	Offset    int // first differing byte, when this side holds both copies; -1 otherwise
}

func (e *bwDataError) Error() string {
	at := ""
	if e.Offset >= 0 {
		at = fmt.Sprintf(", first difference at byte %d", e.Offset)
	}
	return fmt.Sprintf("data check failed at size %d (%s): sent bytes with SHA-256 %.16s, %.16s arrived%s", e.Size, e.Direction, e.Sent, e.Got, at)
}

// bwVerify compares, for each direction that carried data, the sender's
// checksum with the receiver's. For bytes that arrived here it also finds
// the first wrong byte, from the sender's seed.
func bwVerify(o *rdmaBwOptions, p bwParams, s *bwSession, size int, sender, peerSends bool, mine, theirs bwResultMsg, got, check bwCheckMsg) error {
	me, them, peerSeed := "server", "client", p.Seed
	if o.Server != "" {
		me, them, peerSeed = "client", "server", ^p.Seed
	}
	if sender && mine.SentSum != check.RecvSum {
		return &bwDataError{Size: size, Direction: me + " to " + them, Sent: mine.SentSum, Got: check.RecvSum, Offset: -1}
	}
	if peerSends && theirs.SentSum != got.RecvSum {
		return &bwDataError{Size: size, Direction: them + " to " + me, Sent: theirs.SentSum, Got: got.RecvSum, Offset: verbs.Pattern(peerSeed).FirstDiff(s.recvHalf()[:size])}
	}
	return nil
}

// bwReport prints the test as perftest does: the settings, both sides'
// addresses, the table; or, with --json, one document at the end.
type bwReport struct {
	o             *rdmaBwOptions
	p             bwParams
	s             *bwSession
	device        string // s's device name
	local, remote bwDest
	mtu           verbs.MTU
	results       []bwJSONResult
}

// bwJSONResult is one size in the JSON document, with the SHA-256 of
// the bytes this side wrote and of those it received (each message of a
// size carries the same bytes), for a capture's payloads to be checked
// against.
type bwJSONResult struct {
	bwResult
	DataVerified   bool   `json:"dataVerified"`
	SentSHA256     string `json:"sentSHA256,omitempty"`
	ReceivedSHA256 string `json:"receivedSHA256,omitempty"`
}

func (r *bwReport) begin() error {
	if r.o.JSON {
		return nil
	}
	o, p := r.o, r.p
	b := []byte(resultLine)
	kind := "RDMA_Write "
	if p.Bidir {
		kind += "Bidirectional "
	}
	b = fmt.Appendf(b, "                    %sBW Test\n", kind)
	b = fmt.Appendf(b, " Dual-port       : OFF\t\tDevice         : %s\n", r.device)
	b = fmt.Appendf(b, " Number of qps   : 1\t\tTransport type : IB\n")
	b = fmt.Appendf(b, " Connection type : RC\t\tUsing SRQ      : OFF\n")
	if o.Server != "" || p.Bidir {
		b = fmt.Appendf(b, " TX depth        : %d\n", p.TxDepth)
	}
	b = fmt.Appendf(b, " CQ Moderation   : %d\n", p.CQMod)
	b = fmt.Appendf(b, " Mtu             : %d[B]\n", r.mtu.Bytes())
	b = fmt.Appendf(b, " Link type       : %s\n", map[bool]string{true: "Ethernet", false: "IB"}[r.s.port.LinkLayer == verbs.LinkLayerEthernet])
	if r.s.gidIndex >= 0 {
		b = fmt.Appendf(b, " GID index       : %d\n", r.s.gidIndex)
	}
	b = fmt.Appendf(b, " Max inline data : %d[B]\n", r.s.inline)
	b = fmt.Appendf(b, " rdma_cm QPs\t : %s\n", map[bool]string{true: "ON", false: "OFF"}[o.RDMACM])
	b = fmt.Appendf(b, " Data ex. method : %s\n", map[bool]string{true: "rdma_cm", false: "Ethernet"}[o.RDMACM || o.CommCM])
	if o.RDMACM && o.Server == "" {
		b = append(b, resultLine...)
		b = append(b, " Waiting for client rdma_cm QP to connect\n Please run the same command with the IB/RoCE interface IP\n"...)
	}
	b = append(b, resultLine...)
	b = appendDest(b, "local", &r.local, r.s.gidIndex >= 0, o.RDMACM || o.CommCM)
	b = appendDest(b, "remote", &r.remote, r.s.gidIndex >= 0, o.RDMACM || o.CommCM)
	b = append(b, resultLine...)
	b = append(b, resultHeader(o.Gbits)...)
	_, err := r.o.IO.Out.Write(b)
	return err
}

// add prints one size's line as soon as it is measured.
func (r *bwReport) add(res bwJSONResult) {
	r.results = append(r.results, res)
	if !r.o.JSON {
		_, _ = r.o.IO.Out.Write(appendResult(nil, res.bwResult))
	}
}

func (r *bwReport) end() error {
	if !r.o.JSON {
		_, err := r.o.IO.Out.Write([]byte(resultLine))
		return err
	}
	role := "server"
	if r.o.Server != "" {
		role = "client"
	}
	return cmdutil.WriteJSONDocument(r.o.IO.Out, bwJSONDoc{
		Test: "RDMA_Write", Role: role, Device: r.device, IBPort: r.o.IBPort, GIDIndex: r.s.gidIndex,
		Bidirectional: r.p.Bidir, ConnectionType: "RC", MTU: r.mtu.Bytes(), TxDepth: r.p.TxDepth,
		CQModeration: r.p.CQMod, MaxInlineData: r.s.inline, Duration: r.p.Duration,
		Local: r.local, Remote: r.remote, Results: r.results,
	})
}

// bwJSONDoc is the --json document: the settings, both sides' addresses
// and a result for each size.
type bwJSONDoc struct {
	Bidirectional  bool           `json:"bidirectional"`
	ConnectionType string         `json:"connectionType"`
	CQModeration   int            `json:"cqModeration"`
	Device         string         `json:"device"`
	Duration       int            `json:"duration"`
	GIDIndex       int            `json:"gidIndex"`
	IBPort         int            `json:"ibPort"`
	Local          bwDest         `json:"local"`
	MaxInlineData  int            `json:"maxInlineData"`
	MTU            int            `json:"mtu"`
	Remote         bwDest         `json:"remote"`
	Results        []bwJSONResult `json:"results"`
	Role           string         `json:"role"`
	Test           string         `json:"test"`
	TxDepth        int            `json:"txDepth"`
}
