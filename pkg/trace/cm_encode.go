package trace

import (
	"encoding/binary"
	"net/netip"
)

// AppendBinary appends the message as the 232 bytes that follow a CM
// MAD's header: its body and its private data field (PrivateData, cut or
// zero-padded to the field's size). Tests use it to make CM MADs.
func (m *CMMessage) AppendBinary(b []byte) []byte {
	var d [cmDataLen]byte
	m.encodeBody(d[:])
	if off, n, ok := cmPrivate(m.Type); ok {
		copy(d[off:off+n], m.PrivateData)
	}
	return append(b, d[:]...)
}

func putCommIDs(d []byte, c CMCommIDs) {
	binary.BigEndian.PutUint32(d, c.LocalCommID)
	binary.BigEndian.PutUint32(d[4:], c.RemoteCommID)
}

func putU24(d []byte, v uint32, low byte) {
	binary.BigEndian.PutUint32(d, v<<8|uint32(low))
}

func putGID(d []byte, a netip.Addr) {
	if a.IsValid() {
		g := a.As16()
		copy(d, g[:])
	}
}

func (m *CMMessage) encodeBody(d []byte) {
	be := binary.BigEndian
	switch {
	case m.REQ != nil:
		r := m.REQ
		be.PutUint32(d, r.LocalCommID)
		be.PutUint64(d[8:], r.ServiceID)
		be.PutUint64(d[16:], uint64(r.LocalCAGUID))
		be.PutUint32(d[28:], r.LocalQKey)
		putU24(d[32:], r.LocalQPN, r.ResponderResources)
		putU24(d[36:], r.LocalEECN, r.InitiatorDepth)
		putU24(d[40:], r.RemoteEECN, r.RemoteCMResponseTimeout<<3|uint8(r.TransportType&3)<<1|bit(r.EndToEndFlowControl, 1))
		putU24(d[44:], r.StartingPSN, r.LocalCMResponseTimeout<<3|r.RetryCount&7)
		be.PutUint16(d[48:], r.PKey)
		d[50] = r.PathMTU<<4 | bit(r.RDCExists, 8) | r.RNRRetryCount&7
		d[51] = r.MaxCMRetries<<4 | bit(r.SRQ, 8) | r.ExtendedTransportType&7
		encodeREQPath(d[52:96], &r.Primary)
		if r.Alternate != nil {
			encodeREQPath(d[96:140], r.Alternate)
		}
	case m.MRA != nil:
		putCommIDs(d, m.MRA.CMCommIDs)
		d[8], d[9] = m.MRA.MessageMRAed<<6, m.MRA.ServiceTimeout<<3
	case m.REJ != nil:
		r := m.REJ
		putCommIDs(d, r.CMCommIDs)
		d[8], d[9] = r.MessageRejected<<6, r.RejectInfoLength<<1
		be.PutUint16(d[10:], uint16(r.Reason))
		copy(d[12:84], r.ARI)
	case m.REP != nil:
		r := m.REP
		putCommIDs(d, r.CMCommIDs)
		be.PutUint32(d[8:], r.LocalQKey)
		putU24(d[12:], r.LocalQPN, 0)
		putU24(d[16:], r.LocalEECN, 0)
		putU24(d[20:], r.StartingPSN, 0)
		d[24], d[25] = r.ResponderResources, r.InitiatorDepth
		d[26] = r.TargetACKDelay<<3 | r.FailoverAccepted&3<<1 | bit(r.EndToEndFlowControl, 1)
		d[27] = r.RNRRetryCount<<5 | bit(r.SRQ, 0x10)
		be.PutUint64(d[28:], uint64(r.LocalCAGUID))
	case m.RTU != nil:
		putCommIDs(d, *m.RTU)
	case m.DREQ != nil:
		putCommIDs(d, m.DREQ.CMCommIDs)
		putU24(d[8:], m.DREQ.RemoteQPN, 0)
	case m.DREP != nil:
		putCommIDs(d, *m.DREP)
	case m.SIDRREQ != nil:
		be.PutUint32(d, m.SIDRREQ.RequestID)
		be.PutUint16(d[4:], m.SIDRREQ.PKey)
		be.PutUint64(d[8:], m.SIDRREQ.ServiceID)
	case m.SIDRREP != nil:
		r := m.SIDRREP
		be.PutUint32(d, r.RequestID)
		d[4], d[5] = r.Status, r.AdditionalInfoLength
		putU24(d[8:], r.QPN, 0)
		be.PutUint64(d[12:], r.ServiceID)
		be.PutUint32(d[20:], r.QKey)
		copy(d[24:96], r.ClassPortInfo)
	case m.LAP != nil:
		l := m.LAP
		putCommIDs(d, l.CMCommIDs)
		putU24(d[12:], l.RemoteQPN, l.RemoteCMResponseTimeout<<3)
		p := &l.Alternate
		be.PutUint16(d[20:], p.LocalLID)
		be.PutUint16(d[22:], p.RemoteLID)
		putGID(d[24:40], p.LocalGID)
		putGID(d[40:56], p.RemoteGID)
		be.PutUint32(d[56:], p.FlowLabel<<12|uint32(p.TrafficClass))
		d[60], d[61] = p.HopLimit, p.PacketRate&0x3f
		d[62], d[63] = p.SL<<4|bit(p.SubnetLocal, 8), p.LocalACKTimeout<<3
	case m.APR != nil:
		a := m.APR
		putCommIDs(d, a.CMCommIDs)
		d[8], d[9] = a.AdditionalInfoLength, a.Status
		copy(d[12:84], a.AdditionalInfo)
	}
}

func encodeREQPath(d []byte, p *CMPath) {
	binary.BigEndian.PutUint16(d, p.LocalLID)
	binary.BigEndian.PutUint16(d[2:], p.RemoteLID)
	putGID(d[4:20], p.LocalGID)
	putGID(d[20:36], p.RemoteGID)
	binary.BigEndian.PutUint32(d[36:], p.FlowLabel<<12|uint32(p.PacketRate&0x3f))
	d[40], d[41] = p.TrafficClass, p.HopLimit
	d[42], d[43] = p.SL<<4|bit(p.SubnetLocal, 8), p.LocalACKTimeout<<3
}
