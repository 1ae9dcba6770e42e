package trace

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madtext"
	"github.com/ibtool/ibtool/pkg/trace"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "trace",
		Summary: "decode an RDMA packet capture (pcap, pcapng) and reassemble its messages",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newTraceCmd(f, traceRun) },
	})
}

// traceOptions are trace's flags.
type traceOptions struct {
	IO      cmdutil.IOStreams
	File    string
	Hex     bool
	Packets bool
	Summary bool
	JSON    bool
	Write   string
	QP      int64 // -1: every QP
	Port    uint16
	Check   bool
	Verbose int
	// RPC shows RPC-over-RDMA messages instead of RDMA ones; RPCRDMA
	// decodes every SEND as RPC-over-RDMA, not only where found by shape.
	RPC     bool
	RPCRDMA bool
}

func newTraceCmd(f *cmdutil.Factory, runF func(*traceOptions) error) *cobra.Command {
	o := &traceOptions{IO: f.IO}
	var qp string
	c := &cobra.Command{
		Use:   "trace [options] FILE",
		Short: "decode an RDMA packet capture (pcap, pcapng) and reassemble its messages",
		Long: `trace reads a packet capture (pcap or pcapng, from tcpdump, Wireshark, ibdump;
FILE "-" is standard input) of RoCEv2, RoCEv1 or native InfiniBand traffic,
decodes every packet (LRH, GRH, BTH and extended headers, MADs on QP0/QP1)
and checks its ICRC, then puts the packets of each queue pair back together
by PSN: every SEND, RDMA WRITE and RDMA READ (matched with its responses),
atomic and datagram is printed with its QP, PSN range, R_Key, address and
length. Lost, duplicated, retransmitted and reordered packets, NAKs and bad
ICRCs are printed as "!" lines where they happened. iWARP (RDMAP over DDP
over MPA over TCP) is put together the same way. How connections were set
up is decoded too: the CM's REQ, REP, RTU, REJ, DREQ and DREP MADs (with
rdma_cm's addresses and ports) and iWARP's MPA Request and Reply, and each
queue pair names its connection. RPC-over-RDMA (NFS over
RDMA) is decoded on top: each RPC's chunks are filled from the RDMA READs
and WRITEs with their handles, and the RPC, NFS READ and WRITE shown.`,
		Example: `  tcpdump -i any -w rdma.pcap udp port 4791    # capture RoCEv2
  ibtool trace rdma.pcap                       # the messages
  ibtool trace -x --qp 0x11 rdma.pcap          # with their bytes, one QP
  ibtool trace --summary rdma.pcap             # per queue pair
  ibtool trace --packets -v rdma.pcap          # every packet, MADs decoded
  ibtool trace --write out/ --json rdma.pcap   # payloads to files, JSON index
  ibtool trace --rpc nfs.pcap                  # NFS over RDMA (RoCE, IB, iWARP): RPCs and chunks`,
		Args: cmdutil.ArgsRange(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			o.File = args[0]
			o.QP = -1
			if qp != "" {
				v, err := strconv.ParseUint(qp, 0, 24)
				if err != nil {
					return cmdutil.UsageErrorf("--qp %q: not a QP number (0 to 0xffffff)", qp)
				}
				o.QP = int64(v)
			}
			if cmdutil.Count(o.Packets, o.Summary) > 1 || cmdutil.Count(o.Packets, o.RPC) > 1 {
				return cmdutil.UsageErrorf("--packets, --summary and --rpc are different views; pick one")
			}
			return runF(o)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&o.Hex, "hex", "x", false, "hex dump each message's payload (in JSON: a \"payload\" hex string)")
	fl.BoolVar(&o.Packets, "packets", false, "one line per packet instead of messages")
	fl.BoolVar(&o.Summary, "summary", false, "one row per queue pair: operations, bytes, retransmissions, NAKs")
	fl.BoolVar(&o.JSON, "json", false, "one JSON document")
	fl.StringVar(&o.Write, "write", "", "save each message's payload to a file in `DIR`")
	fl.StringVar(&qp, "qp", "", "only this QP (as requester or responder)")
	fl.Uint16Var(&o.Port, "port", trace.RoCEv2Port, "the RoCEv2 UDP port")
	fl.BoolVar(&o.Check, "check", false, "exit 1 when the capture shows a problem (a gap, bad ICRC, malformed packet, incomplete message)")
	fl.BoolVar(&o.RPC, "rpc", false, "one block per RPC-over-RDMA message: chunks, RPC, NFS (with --summary: one row per connection)")
	fl.BoolVar(&o.RPCRDMA, "rpcrdma", false, "decode every SEND as RPC-over-RDMA, not only on connections where it is recognized")
	fl.CountVarP(&o.Verbose, "verbose", "v", "more detail: every header of a packet, MADs field by field")
	return c
}

// traceCapture is a capture decoded and reassembled.
type traceCapture struct {
	packets []*trace.Packet
	res     *trace.Result
	rpcs    []*trace.RPCRDMAMessage
	readErr error // the capture file ended in the middle of a record
}

// readTrace decodes every frame of the capture and reassembles them.
func readTrace(o *traceOptions) (*traceCapture, error) {
	var in io.Reader = o.IO.In
	if o.File != "-" {
		f, err := os.Open(o.File)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		in = f
	}
	tc := &traceCapture{}
	var packet func(*trace.Packet)
	if o.Packets {
		packet = func(p *trace.Packet) {
			if p.IsRDMA() {
				tc.packets = append(tc.packets, p)
			}
		}
	}
	res, err := trace.ReadAll(in, trace.ReadOptions{Decode: trace.DecodeOptions{RoCEv2Port: o.Port}, Packet: packet})
	var cut *trace.TruncatedError
	switch {
	case errors.As(err, &cut):
		tc.readErr = fmt.Errorf("%s: %w", o.File, err)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", o.File, err)
	}
	tc.res = res
	tc.rpcs = trace.AssembleRPC(tc.res.Messages, trace.RPCOptions{Force: o.RPCRDMA})
	return tc, nil
}

func traceRun(o *traceOptions) error {
	tc, err := readTrace(o)
	if err != nil {
		return err
	}
	if tc.readErr != nil {
		fmt.Fprintf(o.IO.ErrOut, "trace: %v\n", tc.readErr)
	}
	res := filterTrace(tc.res, o.QP)
	rpcs := filterRPCs(tc.rpcs, o.QP)
	files, rpcFiles := map[int]string{}, map[int][]string{}
	if o.Write != "" {
		if files, err = writePayloads(o.Write, res.Messages); err != nil {
			return err
		}
		if rpcFiles, err = writeRPCFiles(o.Write, rpcs); err != nil {
			return err
		}
	}
	switch {
	case o.JSON:
		err = writeTraceJSON(o, tc, res, files, rpcs, rpcFiles)
	case o.Summary && o.RPC:
		err = writeRPCSummary(o.IO, rpcs)
	case o.Summary:
		err = writeTraceSummary(o.IO, res)
		if err == nil && len(rpcs) > 0 {
			fmt.Fprintln(o.IO.Out)
			err = writeRPCSummary(o.IO, rpcs)
		}
	case o.Packets:
		err = writeTracePackets(o, tc.packets)
	case o.RPC:
		err = writeTraceRPCs(o, rpcs, rpcFiles)
	default:
		err = writeTraceMessages(o, res, files, rpcs)
	}
	if err != nil {
		return err
	}
	if o.Check {
		if n := traceProblems(res) + rpcProblems(rpcs) + btoi(tc.readErr != nil); n > 0 {
			return &cmdutil.FindingsError{Summary: fmt.Sprintf("%d problems in the capture", n)}
		}
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// traceProblems counts incomplete messages and events that mean lost or
// damaged data (a retransmission that got through is not one).
func traceProblems(res *trace.Result) int {
	n := 0
	for _, m := range res.Messages {
		if !m.Complete {
			n++
		}
	}
	for _, e := range res.Events {
		switch e.Kind {
		case trace.EventGap, trace.EventBadICRC, trace.EventBadCRC, trace.EventMalformed, trace.EventUnmatched:
			n++
		}
	}
	return n
}

// filterTrace keeps what concerns one QP (qp < 0: everything).
func filterTrace(res *trace.Result, qp int64) *trace.Result {
	if qp < 0 {
		return res
	}
	q := uint32(qp)
	out := &trace.Result{Frames: res.Frames, Packets: res.Packets, Connections: res.Connections}
	// The CM messages of a connection that set the QP up go with it.
	conns := map[int]bool{}
	for _, c := range res.Connections {
		if c.ActiveQP != nil && *c.ActiveQP == q || c.PassiveQP != nil && *c.PassiveQP == q {
			conns[c.Index] = true
		}
	}
	for _, m := range res.Messages {
		if m.QP == q || (m.SrcQP != nil && *m.SrcQP == q) || m.CM != nil && conns[m.Connection] {
			out.Messages = append(out.Messages, m)
		}
	}
	for _, e := range res.Events {
		if e.QP == q {
			out.Events = append(out.Events, e)
		}
	}
	for _, s := range res.QPs {
		if s.QP == q || (s.PeerQP != nil && *s.PeerQP == q) {
			out.QPs = append(out.QPs, s)
		}
	}
	return out
}

// payloadFileName names a message's payload file so scripts can find it:
// index, QP and operation.
func payloadFileName(m *trace.Message) string {
	op := strings.ToLower(strings.ReplaceAll(string(m.Op), " ", "_"))
	qp := fmt.Sprintf("qp%06x", m.QP)
	if trace.IsUnknownQP(m.QP) {
		qp = "qp-unknown"
	}
	return fmt.Sprintf("%04d-%s-%s.bin", m.Index, qp, op)
}

// writePayloads saves each message that moved data to a file in dir and
// returns the paths by message index.
func writePayloads(dir string, ms []*trace.Message) (map[int]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	files := map[int]string{}
	for _, m := range ms {
		if m.Length == 0 {
			continue
		}
		path := filepath.Join(dir, payloadFileName(m))
		if err := os.WriteFile(path, m.Payload, 0o644); err != nil {
			return nil, err
		}
		files[m.Index] = path
	}
	return files, nil
}

// traceJSONMessage is a message in trace's JSON, with its payload in hex
// (-x) and the file it was written to (--write).
type traceJSONMessage struct {
	*trace.Message
	Payload string `json:"payload,omitempty"`
	File    string `json:"file,omitempty"`
}

// traceJSONRPC is an RPC-over-RDMA message in trace's JSON, with the
// whole RPC message in hex (-x) and the files it was written to (--write).
type traceJSONRPC struct {
	*trace.RPCRDMAMessage
	Message string   `json:"message,omitempty"`
	Files   []string `json:"files,omitempty"`
}

func writeTraceJSON(o *traceOptions, tc *traceCapture, res *trace.Result, files map[int]string, rpcs []*trace.RPCRDMAMessage, rpcFiles map[int][]string) error {
	doc := struct {
		File        string              `json:"file"`
		Frames      int                 `json:"frames"`
		RDMAPackets int                 `json:"rdmaPackets"`
		ReadError   string              `json:"readError,omitempty"`
		Packets     []*trace.Packet     `json:"packets,omitempty"`
		Messages    []traceJSONMessage  `json:"messages"`
		Events      []trace.Event       `json:"events"`
		QPs         []*trace.QPStats    `json:"queuePairs"`
		Connections []*trace.Connection `json:"connections,omitempty"`
		RPCs        []traceJSONRPC      `json:"rpcs,omitempty"`
	}{File: o.File, Frames: res.Frames, RDMAPackets: res.Packets, Packets: tc.packets,
		Messages: []traceJSONMessage{}, Events: res.Events, QPs: res.QPs, Connections: res.Connections}
	if tc.readErr != nil {
		doc.ReadError = tc.readErr.Error()
	}
	if doc.Events == nil {
		doc.Events = []trace.Event{}
	}
	for _, m := range res.Messages {
		jm := traceJSONMessage{Message: m, File: files[m.Index]}
		if o.Hex {
			jm.Payload = hex.EncodeToString(m.Payload)
		}
		doc.Messages = append(doc.Messages, jm)
	}
	for _, r := range rpcs {
		jr := traceJSONRPC{RPCRDMAMessage: r, Files: rpcFiles[r.Index]}
		if o.Hex {
			jr.Message = hex.EncodeToString(r.RPC)
		}
		doc.RPCs = append(doc.RPCs, jr)
	}
	return cmdutil.WriteJSONDocument(o.IO.Out, doc)
}

func writeTraceSummary(s cmdutil.IOStreams, res *trace.Result) error {
	t := cmdutil.NewTable(s, "Src", "Dst", "QP", "Peer QP", "Transport", "Packets", "Messages", "Sends", "Writes", "Reads",
		"Atomics", "Bytes", "Incomplete", "Duplicates", "Out of order", "Missing", "NAKs", "RNR NAKs", "Bad ICRC", "CNPs",
		"Connection")
	for _, q := range res.QPs {
		peer := "-"
		if q.PeerQP != nil {
			peer = traceQP(*q.PeerQP)
		}
		n := func(v int) string { return strconv.Itoa(v) }
		qp := traceQP(q.QP)
		if q.Transport == trace.TransportIWARP {
			qp = "-"
		}
		conn := "-"
		if q.Connection > 0 && q.Connection <= len(res.Connections) {
			conn = fmt.Sprintf("%d %s", q.Connection, res.Connections[q.Connection-1].Service)
		}
		t.AddRow(q.Src, q.Dst, qp, peer, q.Transport.String(), n(q.Packets), n(q.Messages), n(q.Sends),
			n(q.Writes), n(q.Reads), n(q.Atomics), strconv.FormatInt(q.Bytes, 10), n(q.Incomplete), n(q.Duplicates),
			n(q.OutOfOrder), n(q.Missing), n(q.NAKs), n(q.RNRNAKs), n(q.BadICRC), n(q.CNPs), conn)
	}
	return t.Render()
}

// traceQP prints a QP number, "?" for one the capture did not show.
func traceQP(qp uint32) string {
	if trace.IsUnknownQP(qp) {
		return "?"
	}
	return fmt.Sprintf("%#06x", qp)
}

// writeTraceMessages prints messages and events in capture order, then a
// line of totals.
func writeTraceMessages(o *traceOptions, res *trace.Result, files map[int]string, rpcs []*trace.RPCRDMAMessage) error {
	bySend := map[int]*trace.RPCRDMAMessage{}
	for _, r := range rpcs {
		bySend[r.Send] = r
	}
	var b []byte
	ev := res.Events
	flushEvents := func(upTo int) {
		for len(ev) > 0 && ev[0].Frame <= upTo {
			b = appendTraceEvent(b, ev[0])
			ev = ev[1:]
		}
	}
	incomplete := 0
	for _, m := range res.Messages {
		flushEvents(m.Frame - 1)
		b = appendTraceMessage(b, m, o.Verbose, res.Connections)
		if r := bySend[m.Index]; r != nil {
			b = appendRPC(b, r, "    ")
		}
		if f := files[m.Index]; f != "" {
			b = fmt.Appendf(b, "    written to %s\n", f)
		}
		if o.Hex && len(m.Payload) > 0 {
			for _, line := range strings.SplitAfter(strings.TrimSuffix(hex.Dump(m.Payload), "\n"), "\n") {
				b = append(append(b, "    "...), line...)
			}
			b = append(b, '\n')
		}
		if !m.Complete {
			incomplete++
		}
		if len(b) > 1<<16 {
			if _, err := o.IO.Out.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	flushEvents(int(^uint(0) >> 1))
	b = fmt.Appendf(b, "# %d frames, %d RDMA packets, %d messages (%d incomplete), %d events\n",
		res.Frames, res.Packets, len(res.Messages), incomplete, len(res.Events))
	_, err := o.IO.Out.Write(b)
	return err
}

// appendTraceMessage prints one message on a line, its problems on lines
// of their own, and with -v a MAD's fields.
func appendTraceMessage(b []byte, m *trace.Message, verbose int, conns []*trace.Connection) []byte {
	frames := strconv.Itoa(m.Frame)
	if m.LastFrame != m.Frame {
		frames += "-" + strconv.Itoa(m.LastFrame)
	}
	if m.Transport == trace.TransportIWARP {
		return appendIWARPMessage(b, m, frames, conns)
	}
	b = fmt.Appendf(b, "#%d frame %s %v %s > %s QP %s", m.Index, frames, m.Transport, m.Src, m.Dst, traceQP(m.QP))
	if m.SrcQP != nil {
		b = fmt.Appendf(b, " (from QP %s)", traceQP(*m.SrcQP))
	}
	b = fmt.Appendf(b, " %s PSN %#06x", m.Op, m.FirstPSN)
	if m.LastPSN != m.FirstPSN {
		b = fmt.Appendf(b, "-%#06x", m.LastPSN)
	}
	b = fmt.Appendf(b, " (%d packets)", m.Packets)
	if m.RKey != nil {
		b = fmt.Appendf(b, " rkey %#08x", *m.RKey)
	}
	if m.VA != nil {
		b = fmt.Appendf(b, " va %#016x", *m.VA)
	}
	b = fmt.Appendf(b, " length %d", m.Length)
	if m.Immediate != nil {
		b = fmt.Appendf(b, " imm %#08x", *m.Immediate)
	}
	if m.InvalidateRKey != nil {
		b = fmt.Appendf(b, " invalidate %#08x", *m.InvalidateRKey)
	}
	if a := m.Atomic; a != nil {
		b = fmt.Appendf(b, " swap/add %#x compare %#x", a.SwapAdd, a.Compare)
	}
	if m.OriginalData != nil {
		b = fmt.Appendf(b, " original %#x", *m.OriginalData)
	}
	if h := m.MAD; h != nil {
		b = fmt.Appendf(b, " MAD %v %v attr %#04x mod %#x tid %#016x", h.MgmtClass, h.Method, uint16(h.AttrID), h.AttrMod, h.TID)
		if h.Status != 0 {
			b = fmt.Appendf(b, " status %#04x", uint16(h.Status))
		}
	}
	b = append(b, '\n')
	for _, p := range m.Problems {
		b = fmt.Appendf(b, "    ! %s\n", p)
	}
	if m.CM != nil {
		b = appendCM(b, m, conns, verbose)
	}
	if m.MAD != nil && verbose > 0 {
		b = appendTraceMAD(b, m.Payload)
	}
	return b
}

// appendTraceMAD prints a MAD's header and, for attributes ibtool knows,
// its fields, as decode_mad does, indented.
func appendTraceMAD(b []byte, data []byte) []byte {
	var h = traceMADHeader(data)
	if h == nil {
		return b
	}
	d := madtext.AppendHeaderDump(nil, *h)
	if l, off := mad.LayoutOfMAD(*h); l != nil && len(data) >= off+l.Size {
		d = fmt.Appendf(d, "# %s\n", l.Name)
		d = madtext.AppendDump(d, l, data[off:])
	}
	for _, line := range strings.SplitAfter(strings.TrimSuffix(string(d), "\n"), "\n") {
		b = append(append(b, "    "...), line...)
	}
	return append(b, '\n')
}

func appendTraceEvent(b []byte, e trace.Event) []byte {
	b = fmt.Appendf(b, "! frame %d %s", e.Frame, e.Kind)
	if e.TCPSeq != nil {
		b = fmt.Appendf(b, " %s > %s seq %d", e.Src, e.Dst, *e.TCPSeq)
	} else if e.Src != "" {
		b = fmt.Appendf(b, " %s > %s QP %s PSN %#06x", e.Src, e.Dst, traceQP(e.QP), e.PSN)
	}
	return fmt.Appendf(b, ": %s\n", e.Detail)
}

// writeTracePackets prints one line per RDMA packet; -v adds every header
// field and MADs field by field.
func writeTracePackets(o *traceOptions, ps []*trace.Packet) error {
	var b []byte
	var t0 int64
	if len(ps) > 0 {
		t0 = ps[0].Time.UnixNano()
	}
	for _, p := range ps {
		if o.QP >= 0 && int64(p.BTH.DestQP) != o.QP && (p.DETH == nil || int64(p.DETH.SrcQP) != o.QP) {
			continue
		}
		b = appendTracePacket(b, p, float64(p.Time.UnixNano()-t0)/1e9, o.Verbose)
		if o.Hex && len(p.Payload) > 0 {
			for _, line := range strings.SplitAfter(strings.TrimSuffix(hex.Dump(p.Payload), "\n"), "\n") {
				b = append(append(b, "    "...), line...)
			}
			b = append(b, '\n')
		}
		if len(b) > 1<<16 {
			if _, err := o.IO.Out.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	_, err := o.IO.Out.Write(b)
	return err
}

func appendTracePacket(b []byte, p *trace.Packet, rel float64, verbose int) []byte {
	b = fmt.Appendf(b, "%d %.6f %v %s > %s", p.Frame, rel, p.Encap, p.Src, p.Dst)
	if p.Err != nil && p.BTH.Opcode == 0 && p.BTH.PSN == 0 && p.BTH.DestQP == 0 {
		return fmt.Appendf(b, " error: %v\n", p.Err)
	}
	b = fmt.Appendf(b, " %v QP %s PSN %#06x", p.BTH.Opcode, traceQP(p.BTH.DestQP), p.BTH.PSN)
	if p.BTH.AckReq {
		b = append(b, " A"...)
	}
	if p.BTH.SE {
		b = append(b, " SE"...)
	}
	if p.BTH.FECN || p.BTH.BECN {
		b = fmt.Appendf(b, " FECN %v BECN %v", p.BTH.FECN, p.BTH.BECN)
	}
	if d := p.DETH; d != nil {
		b = fmt.Appendf(b, " DETH(qkey %#08x src QP %s)", d.QKey, traceQP(d.SrcQP))
	}
	if r := p.RETH; r != nil {
		b = fmt.Appendf(b, " RETH(va %#016x rkey %#08x len %d)", r.VA, r.RKey, r.DMALength)
	}
	if a := p.AETH; a != nil {
		b = fmt.Appendf(b, " AETH(%v MSN %#06x)", a, a.MSN)
	}
	if a := p.AtomicETH; a != nil {
		b = fmt.Appendf(b, " AtomicETH(va %#016x rkey %#08x swap/add %#x compare %#x)", a.VA, a.RKey, a.SwapAdd, a.Compare)
	}
	if a := p.AtomicAckETH; a != nil {
		b = fmt.Appendf(b, " AtomicAckETH(%#x)", *a)
	}
	if v := p.ImmDt; v != nil {
		b = fmt.Appendf(b, " ImmDt(%#08x)", *v)
	}
	if v := p.IETH; v != nil {
		b = fmt.Appendf(b, " IETH(%#08x)", *v)
	}
	if p.PayloadLen > 0 {
		b = fmt.Appendf(b, " payload %d", p.PayloadLen)
	}
	switch {
	case p.Truncated:
		b = fmt.Appendf(b, " (cut to %d by the capture)", len(p.Payload))
	case p.ICRCStatus == trace.ICRCBad:
		b = fmt.Appendf(b, " ICRC bad (%#08x, computed %#08x)", p.ICRC, p.WantICRC)
	case p.ICRCStatus == trace.ICRCGood:
		b = append(b, " ICRC ok"...)
	}
	if h := p.MAD; h != nil {
		b = fmt.Appendf(b, " MAD %v %v attr %#04x tid %#016x", h.MgmtClass, h.Method, uint16(h.AttrID), h.TID)
	}
	if p.Err != nil {
		b = fmt.Appendf(b, " error: %v", p.Err)
	}
	b = append(b, '\n')
	if verbose > 0 {
		if l := p.LRH; l != nil {
			b = fmt.Appendf(b, "    LRH VL %d LVer %d SL %d LNH %d DLID %d PktLen %d SLID %d\n", l.VL, l.LVer, l.SL, l.LNH, l.DLID, l.PktLen, l.SLID)
		}
		if g := p.GRH; g != nil {
			b = fmt.Appendf(b, "    GRH IPVer %d TClass %d FlowLabel %#05x PayLen %d NxtHdr %#02x HopLmt %d SGID %v DGID %v\n",
				g.IPVer, g.TClass, g.FlowLabel, g.PayLen, g.NxtHdr, g.HopLmt, g.SGID, g.DGID)
		}
		h := p.BTH
		b = fmt.Appendf(b, "    BTH OpCode %#02x SE %v M %v PadCnt %d TVer %d P_Key %#04x FECN %v BECN %v DestQP %#06x A %v PSN %#06x\n",
			uint8(h.Opcode), h.SE, h.MigReq, h.PadCnt, h.TVer, h.PKey, h.FECN, h.BECN, h.DestQP, h.AckReq, h.PSN)
		if p.CM != nil {
			b = append(appendCMFields(append(b, "    CM "...), p.CM), '\n')
		}
		if p.MAD != nil {
			b = appendTraceMAD(b, p.MADData)
		}
	}
	return b
}

// traceMADHeader decodes a MAD header, nil when data is too short.
func traceMADHeader(data []byte) *mad.Header {
	var h mad.Header
	if h.UnmarshalBinary(data) != nil {
		return nil
	}
	return &h
}
