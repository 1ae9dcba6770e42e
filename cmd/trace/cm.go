package trace

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/ibtool/ibtool/pkg/trace"
)

// appendCM prints a CM message's lines under its MAD's message line: the
// message's fields, rdma_cm's header, a known ULP's private data, the
// private data itself and the connection.
func appendCM(b []byte, m *trace.Message, conns []*trace.Connection, verbose int) []byte {
	cm := m.CM
	b = append(appendCMFields(append(b, "    CM "...), cm), '\n')
	if verbose > 0 {
		b = appendCMPaths(b, cm)
	}
	if h := cm.RDMACM; h != nil {
		b = fmt.Appendf(b, "    rdma_cm %s port %d > %s port %d\n", h.Src, h.SrcPort, h.Dst, h.DstPort)
	}
	b = appendULP(b, cm.ULP)
	b = appendPrivateData(b, cm.PrivateData, cm.PrivateDataUsed)
	return appendConnection(b, m, conns, cm.Type == trace.CMREQ || cm.Type == trace.CMSIDRREQ)
}

// appendCMFields prints what a CM message says on one line.
func appendCMFields(b []byte, cm *trace.CMMessage) []byte {
	b = append(b, cm.Type.String()...)
	ids := func(c trace.CMCommIDs) {
		b = fmt.Appendf(b, " comm %#08x remote comm %#08x", c.LocalCommID, c.RemoteCommID)
	}
	switch {
	case cm.REQ != nil:
		r := cm.REQ
		b = fmt.Appendf(b, " comm %#08x service %#016x (%s) QP %#06x starting PSN %#06x %v", r.LocalCommID, r.ServiceID,
			trace.ServiceName(r.ServiceID), r.LocalQPN, r.StartingPSN, r.TransportType)
		b = fmt.Appendf(b, " pkey %#04x MTU %s resp res %d init depth %d retry %d rnr retry %d guid %v",
			r.PKey, cmMTU(r.PathMTU), r.ResponderResources, r.InitiatorDepth, r.RetryCount, r.RNRRetryCount, r.LocalCAGUID)
		if r.SRQ {
			b = append(b, " srq"...)
		}
	case cm.REP != nil:
		r := cm.REP
		ids(r.CMCommIDs)
		b = fmt.Appendf(b, " QP %#06x starting PSN %#06x resp res %d init depth %d rnr retry %d guid %v",
			r.LocalQPN, r.StartingPSN, r.ResponderResources, r.InitiatorDepth, r.RNRRetryCount, r.LocalCAGUID)
		if r.SRQ {
			b = append(b, " srq"...)
		}
	case cm.RTU != nil:
		ids(*cm.RTU)
	case cm.REJ != nil:
		r := cm.REJ
		ids(r.CMCommIDs)
		b = fmt.Appendf(b, " %s rejected: %v (%d)", r.RejectedName(), r.Reason, uint16(r.Reason))
		if len(r.ARI) > 0 {
			b = fmt.Appendf(b, " ari %x", []byte(r.ARI))
		}
	case cm.MRA != nil:
		ids(cm.MRA.CMCommIDs)
		b = fmt.Appendf(b, " of %s service timeout %d", cm.MRA.MRAedName(), cm.MRA.ServiceTimeout)
	case cm.DREQ != nil:
		ids(cm.DREQ.CMCommIDs)
		b = fmt.Appendf(b, " QP %#06x", cm.DREQ.RemoteQPN)
	case cm.DREP != nil:
		ids(*cm.DREP)
	case cm.SIDRREQ != nil:
		r := cm.SIDRREQ
		b = fmt.Appendf(b, " request %#08x service %#016x (%s) pkey %#04x", r.RequestID, r.ServiceID,
			trace.ServiceName(r.ServiceID), r.PKey)
	case cm.SIDRREP != nil:
		r := cm.SIDRREP
		b = fmt.Appendf(b, " request %#08x status %d (%s) QP %#06x qkey %#08x service %#016x", r.RequestID, r.Status,
			trace.SIDRStatusName(r.Status), r.QPN, r.QKey, r.ServiceID)
	case cm.LAP != nil:
		l := cm.LAP
		ids(l.CMCommIDs)
		b = fmt.Appendf(b, " QP %#06x alternate LID %d > %d GID %v > %v", l.RemoteQPN, l.Alternate.LocalLID,
			l.Alternate.RemoteLID, l.Alternate.LocalGID, l.Alternate.RemoteGID)
	case cm.APR != nil:
		ids(cm.APR.CMCommIDs)
		b = fmt.Appendf(b, " status %d", cm.APR.Status)
	}
	return b
}

// appendCMPaths prints the paths a REQ or LAP describes, a line each.
func appendCMPaths(b []byte, cm *trace.CMMessage) []byte {
	path := func(name string, p *trace.CMPath) {
		b = fmt.Appendf(b, "    %s path LID %d > %d GID %v > %v flow label %#05x traffic class %d hop limit %d SL %d rate %d ack timeout %d",
			name, p.LocalLID, p.RemoteLID, p.LocalGID, p.RemoteGID, p.FlowLabel, p.TrafficClass, p.HopLimit, p.SL, p.PacketRate, p.LocalACKTimeout)
		if p.SubnetLocal {
			b = append(b, " subnet local"...)
		}
		b = append(b, '\n')
	}
	switch {
	case cm.REQ != nil:
		path("primary", &cm.REQ.Primary)
		if cm.REQ.Alternate != nil {
			path("alternate", cm.REQ.Alternate)
		}
	case cm.LAP != nil:
		path("alternate", &cm.LAP.Alternate)
	}
	return b
}

// cmMTU prints a REQ's path MTU code as bytes.
func cmMTU(code uint8) string {
	if code >= 1 && code <= 5 {
		return fmt.Sprint(128 << code)
	}
	return fmt.Sprintf("code %d", code)
}

// appendULP prints a connection user's private data trace knows.
func appendULP(b []byte, u *trace.ConnectPrivate) []byte {
	if u == nil {
		return b
	}
	b = fmt.Appendf(b, "    %s private data: version %d, inline send %d recv %d", u.Protocol, u.Version, u.InlineSend, u.InlineRecv)
	if u.RemoteInvalidate {
		b = append(b, ", remote invalidation"...)
	}
	return append(b, '\n')
}

// appendPrivateData prints private data up to its last byte that is not
// zero; nothing when it is all zeros.
func appendPrivateData(b []byte, pd []byte, used int) []byte {
	if used == 0 {
		return b
	}
	b = fmt.Appendf(b, "    private data %d bytes", len(pd))
	if used < len(pd) {
		b = fmt.Appendf(b, " (zeros after %d)", used)
	}
	return fmt.Appendf(b, ": %s\n", hex.EncodeToString(pd[:used]))
}

// appendConnection prints the connection a message belongs to: in full
// under the message that started it, by its index under the others.
func appendConnection(b []byte, m *trace.Message, conns []*trace.Connection, full bool) []byte {
	if m.Connection < 1 || m.Connection > len(conns) {
		return b
	}
	c := conns[m.Connection-1]
	if !full {
		return fmt.Appendf(b, "    connection %d\n", c.Index)
	}
	return append(appendConnectionLine(append(b, "    "...), c), '\n')
}

// appendConnectionLine describes a connection: its service, state, and
// each direction's QP and first PSN as the data lines print them.
func appendConnectionLine(b []byte, c *trace.Connection) []byte {
	b = fmt.Appendf(b, "connection %d %s %v, %s", c.Index, c.Service, c.Transport, c.State)
	if c.Reject != "" {
		b = fmt.Appendf(b, " (%s)", c.Reject)
	}
	dir := func(src, dst string, qp, psn *uint32) {
		b = fmt.Appendf(b, " %s > %s", src, dst)
		if qp != nil {
			b = fmt.Appendf(b, " QP %#06x", *qp)
		}
		if psn != nil {
			b = fmt.Appendf(b, " from PSN %#06x", *psn)
		}
	}
	b = append(b, ':')
	dir(c.Active, c.Passive, c.PassiveQP, c.ActivePSN)
	if c.Transport != trace.TransportIWARP && c.Transport != trace.TransportUD {
		b = append(b, ',')
		dir(c.Passive, c.Active, c.ActiveQP, c.PassivePSN)
	}
	return b
}

// appendMPA prints an MPA Request's or Reply's lines under its message
// line: the revision 2 control, a known ULP's private data, the private
// data and the connection.
func appendMPA(b []byte, m *trace.Message, conns []*trace.Connection) []byte {
	f := m.MPA
	if v := f.V2; v != nil {
		b = fmt.Appendf(b, "    MPA v2 IRD %d ORD %d", v.IRD, v.ORD)
		var flags []string
		for _, fl := range []struct {
			on   bool
			name string
		}{{v.PeerToPeer, "peer-to-peer"}, {v.ZeroLengthRTR, "zero-length RTR"}, {v.WriteRTR, "RDMA WRITE RTR"}, {v.ReadRTR, "RDMA READ RTR"}} {
			if fl.on {
				flags = append(flags, fl.name)
			}
		}
		if len(flags) > 0 {
			b = fmt.Appendf(b, " %s", strings.Join(flags, ", "))
		}
		b = append(b, '\n')
	}
	b = appendULP(b, f.ULP)
	b = appendPrivateData(b, f.PrivateData, len(f.PrivateData))
	return appendConnection(b, m, conns, f.Request)
}

// appendMPAFields prints an MPA start frame's flags on its message line.
func appendMPAFields(b []byte, f *trace.MPAStartFrame) []byte {
	b = fmt.Appendf(b, " rev %d M %d C %d R %d", f.Rev, btoi(f.Markers), btoi(f.CRC), btoi(f.Reject))
	if f.Enhanced {
		b = append(b, " enhanced"...)
	}
	return fmt.Appendf(b, " private data %d", len(f.PrivateData))
}
