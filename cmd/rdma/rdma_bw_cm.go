package rdma

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/perftest"
	"github.com/ibtool/ibtool/pkg/rdmacm"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// perftest's client tries the data QP's connection this many times, this
// far apart, while its server is not yet listening (rdma_cm_client_connection).
const (
	bwCMConnectTries = 10
	bwCMConnectPause = 100 * time.Millisecond
)

// bwCacheLine is the cache line size this side tells the peer (perftest
// reads it from sysfs; both take the larger of the two).
const bwCacheLine = 64

// bwCM is one side of a test over perftest's rdma_cm exchange: the
// exchange, and with -R the data QP's own rdma_cm connection.
type bwCM struct {
	o      *rdmaBwOptions
	p      bwParams
	comm   *bwComm
	dataCh *rdmacm.EventChannel
	data   *rdmacm.ID // -R: the data QP's connection
	listen *rdmacm.ID // -R server: the data connection's listener
	s      *bwSession
	mtu    int // enum ibv_mtu both sides use
}

// rdmaBwCMRun is rdma_bw with perftest's exchange over rdma_cm: -z (the
// exchange over its own rdma_cm connection, the QP connected from what
// it carries) and -R (the QP connected by rdma_cm too), in perftest 4.5's
// order, so that either side can be ib_write_bw with the same option.
// The server takes its parameters from its own flags, as perftest's does.
// A port that goes down under either connection ends it with the port's
// error (cmPortWatch).
func rdmaBwCMRun(o *rdmaBwOptions) error {
	ctx := o.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	ports := newCMPortWatch(ctx)
	defer ports.stop()
	return ports.why(rdmaBwCMTest(ports, o))
}

// rdmaBwCMTest is rdmaBwCMRun's test, its waits ended by ports.
func rdmaBwCMTest(ports *cmPortWatch, o *rdmaBwOptions) error {
	ctx := ports.ctx
	t := &bwCM{o: o, p: o.params()}
	defer t.close()
	if err := t.connectComm(ctx); err != nil {
		return err
	}
	ports.add(t.comm.id)
	wctx, stop := watchBwCM(ctx, t.comm.id, t.comm.role)
	defer stop()
	wctx, stopData, err := t.prepare(wctx)
	defer stopData()
	if err != nil {
		return err
	}
	if t.data != nil {
		ports.add(t.data)
	}
	rep, mine, err := t.trade(wctx)
	if err != nil {
		return err
	}
	if err := rep.begin(); err != nil {
		return err
	}
	verbs.Pattern(t.p.Seed).Fill(t.s.sendHalf())
	if err := t.run(wctx, rep, mine); err != nil {
		if cause := context.Cause(wctx); wctx.Err() != nil && ctx.Err() == nil {
			return cause
		}
		return err
	}
	if _, err := t.comm.handshake(wctx, "end of the test", mine); err != nil {
		return err
	}
	stopData()
	stop()
	if err := rep.end(); err != nil {
		return err
	}
	t.disconnect()
	return nil
}

// connectComm connects the exchange: the client to the server's address,
// the server by waiting on its port.
func (t *bwCM) connectComm(ctx context.Context) error {
	o := t.o
	var err error
	if o.Server == "" {
		t.comm, err = listenBwComm(ctx, uint16(o.TCPPort), o.debugf)
		return err
	}
	dst, err := bwCMAddr(ctx, o.Server, o.TCPPort)
	if err != nil {
		return err
	}
	o.debugf("Connecting to %s", dst)
	t.comm, err = dialBwComm(ctx, dst)
	return err
}

// prepare agrees on versions and MTU, opens the device and makes the
// QP: with -R connected by rdma_cm, its connection watched too in the
// context prepare returns (stopData ends that watch).
func (t *bwCM) prepare(ctx context.Context) (_ context.Context, stopData func(), err error) {
	stopData = func() {}
	if err := t.agree(ctx); err != nil {
		return ctx, stopData, err
	}
	if err := t.openSession(); err != nil {
		return ctx, stopData, err
	}
	if err := t.agreeMTU(ctx); err != nil {
		return ctx, stopData, err
	}
	if !t.o.RDMACM {
		return ctx, stopData, t.s.setup(t.o, t.p)
	}
	if err := t.connectData(ctx); err != nil {
		return ctx, stopData, err
	}
	ctx, stopData = watchBwCM(ctx, t.data, t.comm.role)
	return ctx, stopData, nil
}

// trade trades the QPs' addresses (and with -z connects the QP from the
// peer's): the report to print, and this side's address for the
// handshakes to come.
func (t *bwCM) trade(ctx context.Context) (*bwReport, perftest.Dest, error) {
	o := t.o
	local := t.s.dest()
	local.MTU = t.mtu
	mine := perftest.Dest{LID: uint32(local.LID), QPN: local.QPN, PSN: local.PSN, RKey: local.RKey, VAddr: local.Addr, GID: local.GID,
		GIDIndex: int32(t.s.gidIndex)}
	rd, err := t.comm.handshake(ctx, "QP address", mine)
	if err != nil {
		return nil, mine, err
	}
	remote := bwDest{LID: uint16(rd.LID), QPN: rd.QPN, PSN: rd.PSN, GID: rd.GID, RKey: rd.RKey, Addr: rd.VAddr, MTU: t.mtu}
	o.debugf("path to peer LID %d QPN %#06x PSN %#06x, MR peer raddr=%x peer rkey=%x", remote.LID, remote.QPN, remote.PSN, remote.Addr, remote.RKey)
	if !o.RDMACM {
		if err := t.s.connect(o, local, remote); err != nil {
			return nil, mine, err
		}
	}
	// perftest trades the addresses once more to print the peer's, and
	// once after its QP reached RTS.
	for _, what := range []string{"QP address", "ready"} {
		if _, err := t.comm.handshake(ctx, what, mine); err != nil {
			return nil, mine, err
		}
	}
	return &bwReport{o: o, p: t.p, s: t.s, device: t.s.dev.Name(), local: local, remote: remote, mtu: verbs.MTU(t.mtu)}, mine, nil
}

// bwCMAddr is the server's IPv4 address and the port (perftest's -R is
// IPv4 only).
func bwCMAddr(ctx context.Context, host string, port int) (netip.AddrPort, error) {
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip4", host)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("resolving the server %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return netip.AddrPort{}, fmt.Errorf("resolving the server %s: no IPv4 address", host)
	}
	return netip.AddrPortFrom(addrs[0].Unmap(), uint16(port)), nil
}

// agree trades versions, the page and cache line sizes, and the MTUs.
func (t *bwCM) agree(ctx context.Context) error {
	b, err := t.comm.xchg(ctx, "version", perftest.AppendVersion(nil, perftest.Version))
	if err != nil {
		return err
	}
	if _, err := perftest.ParseVersion(b); err != nil {
		return err
	}
	for _, m := range []struct {
		what string
		v    uint32
	}{{"page size", uint32(os.Getpagesize())}, {"cache line size", bwCacheLine}} {
		b, err := t.comm.xchg(ctx, m.what, perftest.AppendUint32(nil, m.v))
		if err != nil {
			return err
		}
		if _, err := perftest.ParseUint32(b); err != nil {
			return fmt.Errorf("the %s's %s: %w", t.comm.role, m.what, err)
		}
	}
	return nil
}

// openSession opens the device and port the QP is on: with -R those
// rdma_cm binds the exchange's address to (-d, when given, must name the
// same device); with -z -d's device and -i's port, as perftest's, or
// without -d the exchange's.
func (t *bwCM) openSession() error {
	o := t.o
	d, err := t.comm.id.Device()
	if err != nil {
		return err
	}
	onAddr := o.Device == "" || o.Device == d.Name
	if o.RDMACM && !onAddr {
		return cmdutil.UsageErrorf("the address of the rdma_cm exchange is on %s, not on -d %s", d.Name, o.Device)
	}
	if onAddr {
		o.Device, o.IBPort = d.Name, t.comm.id.Addr().Port
	}
	dev, err := o.open(o.Device)
	if err != nil {
		return err
	}
	if t.s, err = newBwSession(o, dev); err != nil {
		return err
	}
	if o.GIDIndex < 0 && t.s.gidIndex >= 0 && onAddr {
		return t.s.useAddrGID(o.IBPort, t.comm.id.Addr().Local.Addr())
	}
	return nil
}

// useAddrGID takes the GID of the local IP address a (IPv4-mapped: the
// RoCE v2 GID rdma_cm uses), as perftest's get_best_gid_index prefers it
// to index 0's link-local one, which cannot reach the peer's IPv4 GID.
// With none, the session keeps the GID it has.
func (s *bwSession) useAddrGID(port int, a netip.Addr) error {
	want := a.As16()
	for i := range s.port.GIDTblLen {
		g, err := s.dev.QueryGID(port, i)
		if err != nil {
			return err
		}
		if g == want {
			s.gidIndex, s.gid = i, g
			return nil
		}
	}
	return nil
}

// agreeMTU trades the MTUs (enum ibv_mtu, -m's or the port's) and takes
// the smaller.
func (t *bwCM) agreeMTU(ctx context.Context) error {
	m := int(t.s.port.ActiveMTU)
	if t.o.MTU != 0 {
		m = t.o.MTU
	}
	b, err := t.comm.xchg(ctx, "MTU", perftest.AppendMTU(nil, m))
	if err != nil {
		return err
	}
	rm, err := perftest.ParseMTU(b)
	if err != nil {
		return err
	}
	t.mtu = min(m, rm)
	return nil
}

// connectData connects the data QP through rdma_cm (-R), between two
// handshakes as perftest does: the server listens on the test's port
// again, the client connects there.
func (t *bwCM) connectData(ctx context.Context) error {
	var err error
	if t.dataCh, err = rdmacm.NewEventChannel(); err != nil {
		return err
	}
	if t.o.Server == "" {
		// Listening before the first handshake's answer spares the
		// client its retries.
		if t.listen, err = t.dataCh.CreateID(rdmacm.PortSpaceTCP); err != nil {
			return err
		}
		if err := t.listen.Bind(netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(t.o.TCPPort))); err != nil {
			return err
		}
		if err := t.listen.Listen(1); err != nil {
			return err
		}
	}
	if _, err := t.comm.handshake(ctx, "start of the rdma_cm connection", perftest.Dest{}); err != nil {
		return err
	}
	if err := t.s.alloc(t.o, t.p); err != nil {
		return err
	}
	if t.o.Server != "" {
		err = t.dialData(ctx)
	} else {
		err = t.acceptData(ctx)
	}
	if err != nil {
		return err
	}
	_, err = t.comm.handshake(ctx, "end of the rdma_cm connection", perftest.Dest{})
	return err
}

// bwDataConnParam is what both sides of the data connection ask for:
// perftest's retry counts, and no RDMA READs.
var bwDataConnParam = rdmacm.ConnParam{RetryCount: 7, RNRRetryCount: 7}

// dialData connects the data QP, again while the server refuses (it may
// not listen yet).
func (t *bwCM) dialData(ctx context.Context) error {
	dst := t.comm.id.Peer()
	for try := 1; ; try++ {
		id, err := t.dataCh.CreateID(rdmacm.PortSpaceTCP)
		if err != nil {
			return err
		}
		t.data = id
		if err := id.ResolveAddr(ctx, netip.AddrPort{}, dst, bwCMResolveTimeout); err != nil {
			return err
		}
		if err := id.ResolveRoute(ctx, bwCMResolveTimeout); err != nil {
			return err
		}
		if t.s.qp, err = t.s.createQP(t.p, func(c verbs.QPConfig) (*verbs.QP, error) { return id.CreateQP(t.s.pd, c) }); err != nil {
			return err
		}
		_, err = id.Connect(ctx, bwDataConnParam)
		if err == nil {
			t.s.qpMade(t.p)
			return nil
		}
		t.s.qp = nil
		id.Close()
		t.data = nil
		if !errors.Is(err, syscall.ECONNREFUSED) || try == bwCMConnectTries {
			return err
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(bwCMConnectPause):
		}
	}
}

// acceptData waits for the client's data connection and accepts it.
func (t *bwCM) acceptData(ctx context.Context) error {
	for t.data == nil {
		ev, err := t.listen.Await(ctx, "wait for the client's QP")
		if err != nil {
			return err
		}
		if ev.Type == rdmacm.EventConnectRequest {
			t.data = ev.ID
		}
	}
	var err error
	if t.s.qp, err = t.s.createQP(t.p, func(c verbs.QPConfig) (*verbs.QP, error) { return t.data.CreateQP(t.s.pd, c) }); err != nil {
		t.data.Reject(nil)
		return err
	}
	t.s.qpMade(t.p)
	if err := t.data.Accept(ctx, bwDataConnParam); err != nil {
		return err
	}
	t.listen.Close()
	t.listen = nil
	return nil
}

// run is the test after the handshakes: the client writes (both sides
// with -b), each size's line printed, and the reports traded as
// perftest does.
func (t *bwCM) run(ctx context.Context, rep *bwReport, mine perftest.Dest) error {
	o, p := t.o, t.p
	if !p.Bidir {
		var last bwResult
		if o.Server != "" {
			for _, size := range p.sizes() {
				st, err := t.s.runWrites(ctx, p, size, rep.remote, o.Events)
				if err != nil {
					return err
				}
				last = st.result(nil, o.Gbits)
				rep.add(bwJSONResult{bwResult: last, SentSHA256: checksum(t.s.sendHalf()[:size])})
			}
		}
		// The server waits here while the client writes.
		if _, err := t.comm.handshake(ctx, "end of the run", mine); err != nil {
			return err
		}
		theirs, err := t.xchgReport(ctx, ptReportOf(last))
		if err != nil {
			return err
		}
		if o.Server == "" {
			rep.add(bwJSONResult{bwResult: ptResult(theirs, o.Gbits)})
		}
		return nil
	}
	for _, size := range p.sizes() {
		if _, err := t.comm.handshake(ctx, "start of size "+fmt.Sprint(size), mine); err != nil {
			return err
		}
		st, err := t.s.runWrites(ctx, p, size, rep.remote, o.Events)
		if err != nil {
			return err
		}
		if p.All {
			if _, err := t.comm.handshake(ctx, "end of size "+fmt.Sprint(size), mine); err != nil {
				return err
			}
		}
		line := st.result(nil, o.Gbits)
		theirs, err := t.xchgReport(ctx, ptReportOf(line))
		if err != nil {
			return err
		}
		line.BWPeak += theirs.Peak
		line.BWAvg += theirs.Average
		line.MsgRate += theirs.MsgRate
		line.accurate = o.Gbits && line.BWAvg < 0.1
		rep.add(bwJSONResult{bwResult: line, SentSHA256: checksum(t.s.sendHalf()[:size])})
	}
	return nil
}

// xchgReport trades reports, field by field.
func (t *bwCM) xchgReport(ctx context.Context, mine perftest.Report) (perftest.Report, error) {
	var theirs [][]byte
	for _, m := range mine.Messages() {
		b, err := t.comm.xchg(ctx, "report", m)
		if err != nil {
			return perftest.Report{}, err
		}
		theirs = append(theirs, b)
	}
	r, err := perftest.ParseReport(theirs)
	if err != nil {
		return r, fmt.Errorf("the %s's report: %w", t.comm.role, err)
	}
	return r, nil
}

// disconnect ends the data connection (-R): the client waits a moment
// for the server's side of it, as perftest's does.
func (t *bwCM) disconnect() {
	if t.data == nil {
		return
	}
	if err := t.data.Disconnect(); err != nil || t.o.Server == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, _ = t.data.Await(ctx, "disconnect")
}

// close frees everything: the data ID with its QP, the session, the
// exchange.
func (t *bwCM) close() {
	if t.data != nil {
		t.data.Close()
		if t.s != nil {
			t.s.qp = nil // the ID's, gone with it
		}
	}
	if t.listen != nil {
		t.listen.Close()
	}
	if t.dataCh != nil {
		t.dataCh.Close()
	}
	if t.s != nil {
		t.s.close()
	}
	if t.comm != nil {
		t.comm.close()
	}
}

// watchBwCM watches a connection's CM events while the test runs: the
// context it returns ends, with an error naming the peer, when the
// peer disconnects (the kernel does it for a process that dies) or an
// error event comes. stop ends the watch.
func watchBwCM(parent context.Context, id *rdmacm.ID, peer string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := id.Await(ctx, "connection")
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				cancel(fmt.Errorf("the connection to the %s failed during the test: %w", peer, err))
				return
			}
			if ev.Type == rdmacm.EventDisconnected {
				cancel(fmt.Errorf("the %s disconnected during the test", peer))
				return
			}
		}
	}()
	var once bool
	return ctx, func() {
		if once {
			return
		}
		once = true
		cancel(context.Canceled)
		<-done
	}
}
