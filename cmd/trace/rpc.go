package trace

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/trace"
)

// filterRPCs keeps the RPC-over-RDMA messages of one QP (qp < 0: all):
// those whose SEND went to it, and the other half of their exchange.
func filterRPCs(rs []*trace.RPCRDMAMessage, qp int64) []*trace.RPCRDMAMessage {
	if qp < 0 {
		return rs
	}
	keep := map[int]bool{}
	for _, r := range rs {
		if int64(r.QP) == qp {
			keep[r.Index] = true
			if r.Peer > 0 {
				keep[r.Peer] = true
			}
		}
	}
	var out []*trace.RPCRDMAMessage
	for _, r := range rs {
		if keep[r.Index] {
			out = append(out, r)
		}
	}
	return out
}

// appendRPCHeader prints an RPC-over-RDMA transport header on one line:
// `RPC-over-RDMA RDMA_MSG xid 0x... credits 32 read [pos 140 0x77:4096@0x...]`.
func appendRPCHeader(b []byte, h *trace.RPCRDMAHeader) []byte {
	b = fmt.Appendf(b, "RPC-over-RDMA %v xid %#08x credits %d", h.Proc, h.XID, h.Credits)
	seg := func(s trace.RDMASegment) string { return fmt.Sprintf("%#08x:%d@%#x", s.Handle, s.Length, s.Offset) }
	chunk := func(ss []trace.RDMASegment) string {
		var parts []string
		for _, s := range ss {
			parts = append(parts, seg(s))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	if len(h.ReadList) > 0 {
		var parts []string
		for _, r := range h.ReadList {
			parts = append(parts, fmt.Sprintf("pos %d %s", r.Position, seg(r.RDMASegment)))
		}
		b = fmt.Appendf(b, " read [%s]", strings.Join(parts, ", "))
	}
	for i, c := range h.WriteList {
		b = fmt.Appendf(b, " write%d %s", i+1, chunk(c))
	}
	if h.HasReplyChunk {
		b = fmt.Appendf(b, " reply %s", chunk(h.ReplyChunk))
	}
	switch h.Proc {
	case trace.RDMAError:
		b = fmt.Appendf(b, " %v", h.Err)
		if h.Err == trace.ErrVers {
			b = fmt.Appendf(b, " versions %d-%d", h.VersLow, h.VersHigh)
		}
	case trace.RDMAMsgP:
		b = fmt.Appendf(b, " align %d thresh %d", h.Align, h.Thresh)
	}
	return b
}

// appendRPC prints one RPC-over-RDMA message: its header, chunks, the RPC
// and NFS lines and its problems, each line after indent.
func appendRPC(b []byte, r *trace.RPCRDMAMessage, indent string) []byte {
	b = append(b, indent...)
	if r.Header == nil {
		b = append(b, "RPC-over-RDMA: not decoded\n"...)
	} else {
		b = append(appendRPCHeader(b, r.Header), '\n')
	}
	for _, c := range r.Chunks {
		ops, packets := c.Ops()
		what := "RDMA READs"
		if c.Kind != trace.ChunkRead {
			what = "RDMA WRITEs"
		}
		b = fmt.Appendf(b, "%s  %s chunk %d", indent, c.Kind, c.Index)
		if c.Kind == trace.ChunkRead {
			b = fmt.Appendf(b, " position %d", c.Position)
		}
		b = fmt.Appendf(b, ": %d bytes in %d segments, %d %s (%d packets)", c.Length, len(c.Segments), ops, what, packets)
		if !c.Complete {
			b = append(b, " incomplete"...)
		}
		b = append(b, '\n')
	}
	if h := r.ONC; h != nil {
		dir := "call"
		if !h.Call {
			dir = "reply " + h.Status
		}
		b = fmt.Appendf(b, "%s  RPC %s xid %#08x prog %d vers %d proc %d, %d bytes", indent, dir, h.XID, h.Prog, h.Vers, h.Proc, r.RPCLength)
		if r.Peer > 0 {
			b = fmt.Appendf(b, " (%s @%d)", map[bool]string{true: "reply", false: "call"}[r.Call], r.Peer)
		}
		b = append(b, '\n')
	}
	if n := r.NFS; n != nil {
		b = fmt.Appendf(b, "%s  %v", indent, n)
		if !r.Call && n.Status != 0 {
			b = fmt.Appendf(b, " status %d", n.Status)
		}
		b = append(b, '\n')
	}
	for _, p := range r.Problems {
		b = fmt.Appendf(b, "%s  ! %s\n", indent, p)
	}
	return b
}

// writeTraceRPCs prints one block per RPC-over-RDMA message (--rpc).
func writeTraceRPCs(o *traceOptions, rs []*trace.RPCRDMAMessage, files map[int][]string) error {
	var b []byte
	incomplete := 0
	for _, r := range rs {
		if r.Transport == trace.TransportIWARP {
			b = fmt.Appendf(b, "@%d frame %d iWARP %s > %s send #%d ", r.Index, r.Frame, r.Src, r.Dst, r.Send)
		} else {
			b = fmt.Appendf(b, "@%d frame %d %s > %s QP %s send #%d ", r.Index, r.Frame, r.Src, r.Dst, traceQP(r.QP), r.Send)
		}
		b = appendRPC(b, r, "")
		for _, f := range files[r.Index] {
			b = fmt.Appendf(b, "  written to %s\n", f)
		}
		if !r.Complete {
			incomplete++
		}
	}
	b = fmt.Appendf(b, "# %d RPC-over-RDMA messages (%d incomplete)\n", len(rs), incomplete)
	_, err := o.IO.Out.Write(b)
	return err
}

// writeRPCFiles saves each RPC message whole and the data of NFS READs
// and WRITEs, returning the paths by RPC-over-RDMA message index.
func writeRPCFiles(dir string, rs []*trace.RPCRDMAMessage) (map[int][]string, error) {
	files := map[int][]string{}
	if len(rs) == 0 {
		return files, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, r := range rs {
		if r.Header == nil {
			continue
		}
		dirn := "reply"
		if r.Call {
			dirn = "call"
		}
		save := func(name string, data []byte) error {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return err
			}
			files[r.Index] = append(files[r.Index], p)
			return nil
		}
		if len(r.RPC) > 0 {
			if err := save(fmt.Sprintf("rpc%04d-xid%08x-%s.bin", r.Index, r.Header.XID, dirn), r.RPC); err != nil {
				return nil, err
			}
		}
		if r.NFS != nil && r.NFS.IO != nil && len(r.NFS.IO.Data) > 0 {
			io := r.NFS.IO
			name := fmt.Sprintf("rpc%04d-xid%08x-nfs-%s-off%d.bin", r.Index, r.Header.XID, strings.ToLower(io.Op), io.Offset)
			if err := save(name, io.Data); err != nil {
				return nil, err
			}
		}
	}
	return files, nil
}

// writeRPCSummary prints one row per RPC-over-RDMA connection (client,
// server): calls, replies, NFS READs and WRITEs and their bytes.
func writeRPCSummary(s cmdutil.IOStreams, rs []*trace.RPCRDMAMessage) error {
	type row struct {
		client, server                            string
		calls, replies, incomplete, reads, writes int
		rpcBytes, readBytes, writeBytes, chunkOps int64
	}
	var rows []*row
	byKey := map[[2]string]*row{}
	for _, r := range rs {
		k := [2]string{r.Src, r.Dst}
		if !r.Call {
			k = [2]string{r.Dst, r.Src}
		}
		w := byKey[k]
		if w == nil {
			w = &row{client: k[0], server: k[1]}
			byKey[k] = w
			rows = append(rows, w)
		}
		if r.Call {
			w.calls++
		} else {
			w.replies++
		}
		if !r.Complete {
			w.incomplete++
		}
		w.rpcBytes += int64(r.RPCLength)
		for _, c := range r.Chunks {
			ops, _ := c.Ops()
			w.chunkOps += int64(ops)
		}
		if n := r.NFS; n != nil && n.IO != nil && len(n.IO.Data) > 0 {
			if n.IO.Op == "READ" {
				w.reads++
				w.readBytes += int64(len(n.IO.Data))
			} else {
				w.writes++
				w.writeBytes += int64(len(n.IO.Data))
			}
		}
	}
	t := cmdutil.NewTable(s, "Client", "Server", "Calls", "Replies", "Incomplete", "RPC bytes", "Chunk ops",
		"NFS READs", "Read bytes", "NFS WRITEs", "Written bytes")
	n := strconv.Itoa
	for _, w := range rows {
		t.AddRow(w.client, w.server, n(w.calls), n(w.replies), n(w.incomplete), strconv.FormatInt(w.rpcBytes, 10),
			strconv.FormatInt(w.chunkOps, 10), n(w.reads), strconv.FormatInt(w.readBytes, 10), n(w.writes),
			strconv.FormatInt(w.writeBytes, 10))
	}
	return t.Render()
}

// rpcProblems counts RPC-over-RDMA messages that are not whole.
func rpcProblems(rs []*trace.RPCRDMAMessage) int {
	n := 0
	for _, r := range rs {
		if !r.Complete {
			n++
		}
	}
	return n
}

// appendIWARPMessage prints an iWARP message on one line: there is no QP
// or PSN, a Send has its MSN, and segments are DDP segments.
func appendIWARPMessage(b []byte, m *trace.Message, frames string, conns []*trace.Connection) []byte {
	b = fmt.Appendf(b, "#%d frame %s iWARP %s > %s %s", m.Index, frames, m.Src, m.Dst, m.Op)
	if m.MPA != nil {
		b = append(appendMPAFields(b, m.MPA), '\n')
		return appendMPA(b, m, conns)
	}
	if m.Op == trace.MsgSend {
		b = fmt.Appendf(b, " MSN %d", m.FirstPSN)
	}
	b = fmt.Appendf(b, " (%d segments)", m.Packets)
	if m.RKey != nil {
		b = fmt.Appendf(b, " stag %#08x", *m.RKey)
	}
	if m.VA != nil {
		b = fmt.Appendf(b, " to %#016x", *m.VA)
	}
	b = fmt.Appendf(b, " length %d", m.Length)
	if m.InvalidateRKey != nil {
		b = fmt.Appendf(b, " invalidate %#08x", *m.InvalidateRKey)
	}
	b = append(b, '\n')
	for _, p := range m.Problems {
		b = fmt.Appendf(b, "    ! %s\n", p)
	}
	return b
}
