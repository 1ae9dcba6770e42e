package trace

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad/umad"
	"github.com/ibtool/ibtool/pkg/madtext"
	"github.com/ibtool/ibtool/pkg/trace"
)

// python-rdma's decode_mad -v (--verbosity) prints the headers in front of
// the MAD as well: the kernel's umad header with --umad, the LRH, GRH, BTH
// and DETH with -l. -vv also prints the input, after -o, in hex. ibtool's
// decode_mad prints the MAD header without -v.

// appendInput is -vv's dump of the bytes decoded, after the offset.
func appendInput(b, data []byte) []byte {
	b = fmt.Appendf(b, "# input: %d bytes\n", len(data))
	return madtext.AppendXdump(b, data)
}

// appendUMADHeader prints the umad header of a frame: the address the
// kernel reports and the status.
func appendUMADHeader(b []byte, frame []byte) []byte {
	p, err := umad.DecodeFrame(frame)
	if err != nil {
		return fmt.Appendf(b, "# umad header: %v\n", err)
	}
	a := p.Addr
	b = append(b, "# umad header\n"...)
	line := func(label, format string, v ...any) {
		b = madtext.AppendDotted(b, label)
		b = fmt.Appendf(b, format, v...)
		b = append(b, '\n')
	}
	line("status", "%d", int(p.Status))
	line("qpn", "%d", a.QPN)
	line("qkey", "0x%08x", a.QKey)
	line("lid", "%d", a.LID)
	line("sl", "%d", a.SL)
	line("path_bits", "%d", a.PathBits)
	line("grh_present", "%d", map[bool]int{true: 1}[a.HasGRH])
	if a.HasGRH {
		line("gid_index", "%d", a.GRH.GIDIndex)
		line("hop_limit", "%d", a.GRH.HopLimit)
		line("traffic_class", "%d", a.GRH.TrafficClass)
		line("gid", "%v", a.GRH.GID)
		line("flow_label", "0x%05x", a.GRH.FlowLabel)
	}
	line("pkey_index", "%d", a.PKeyIndex)
	return b
}

// appendPacketHeaders prints the LRH, GRH, BTH and DETH of a packet that
// carries a MAD (-l).
func appendPacketHeaders(b []byte, p *trace.Packet) []byte {
	line := func(label, format string, v ...any) {
		b = madtext.AppendDotted(b, label)
		b = fmt.Appendf(b, format, v...)
		b = append(b, '\n')
	}
	if l := p.LRH; l != nil {
		b = append(b, "# LRH\n"...)
		line("VL", "%d", l.VL)
		line("LVer", "%d", l.LVer)
		line("SL", "%d", l.SL)
		line("LNH", "%d", l.LNH)
		line("DLID", "%d", l.DLID)
		line("PktLen", "%d", l.PktLen)
		line("SLID", "%d", l.SLID)
	}
	if g := p.GRH; g != nil {
		b = append(b, "# GRH\n"...)
		line("IPVer", "%d", g.IPVer)
		line("TClass", "%d", g.TClass)
		line("FlowLabel", "0x%05x", g.FlowLabel)
		line("PayLen", "%d", g.PayLen)
		line("NxtHdr", "0x%02x", g.NxtHdr)
		line("HopLmt", "%d", g.HopLmt)
		line("SGID", "%v", g.SGID)
		line("DGID", "%v", g.DGID)
	}
	h := p.BTH
	b = append(b, "# BTH\n"...)
	line("OpCode", "%v", h.Opcode)
	line("SE", "%v", h.SE)
	line("MigReq", "%v", h.MigReq)
	line("PadCnt", "%d", h.PadCnt)
	line("TVer", "%d", h.TVer)
	line("P_Key", "0x%04x", h.PKey)
	line("DestQP", "%d", h.DestQP)
	line("AckReq", "%v", h.AckReq)
	line("PSN", "%d", h.PSN)
	if d := p.DETH; d != nil {
		b = append(b, "# DETH\n"...)
		line("Q_Key", "0x%08x", d.QKey)
		line("SrcQP", "%d", d.SrcQP)
	}
	return b
}
