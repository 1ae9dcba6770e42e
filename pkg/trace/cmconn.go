package trace

import "net"

// ConnState is how far a connection's setup and teardown got in the
// capture.
type ConnState string

// The connection states.
const (
	ConnRequested     ConnState = "requested"     // a REQ (MPA Request), no answer
	ConnReplied       ConnState = "replied"       // a REP, no RTU yet
	ConnEstablished   ConnState = "established"   // an RTU (an MPA Reply)
	ConnRejected      ConnState = "rejected"      // a REJ (an MPA Reply with R)
	ConnDisconnecting ConnState = "disconnecting" // a DREQ, no DREP
	ConnDisconnected  ConnState = "disconnected"  // a DREP (a TCP FIN or RST)
)

// Connection is one connection whose setup the capture shows: the CM's
// REQ and what followed it (InfiniBand, RoCE), the MPA Request and
// Reply (iWARP), or a SIDR_REQ and its SIDR_REP, which name the UD QP
// serving a service ID (PassiveQP; ActiveCommID is the Request ID). Active is the side that asked, Passive the side that
// answered; each side's QP and the PSN it sends first are what the REQ
// and REP say, so the data messages and queue pairs of the connection
// name it (Message.Connection, QPStats.Connection).
type Connection struct {
	Index     int       `json:"index"`
	Transport Transport `json:"transport"`
	// Service describes what was connected to: "rdma_cm TCP port 20049",
	// "service 0x...", or for iWARP "TCP port 20049".
	Service   string  `json:"service"`
	ServiceID *uint64 `json:"serviceID,omitempty"`
	Active    string  `json:"active"`
	Passive   string  `json:"passive"`
	// ActiveQP and PassiveQP are the QPs the REQ and REP name;
	// ActivePSN and PassivePSN the PSNs they start sending with (the REP's
	// and the REQ's Starting PSN).
	ActiveQP      *uint32   `json:"activeQP,omitempty"`
	PassiveQP     *uint32   `json:"passiveQP,omitempty"`
	ActivePSN     *uint32   `json:"activePSN,omitempty"`
	PassivePSN    *uint32   `json:"passivePSN,omitempty"`
	ActiveCommID  *uint32   `json:"activeCommID,omitempty"`
	PassiveCommID *uint32   `json:"passiveCommID,omitempty"`
	State         ConnState `json:"state"`
	// Reject is the REJ's reason, or for iWARP the MPA Reply's R flag.
	Reject string `json:"reject,omitempty"`
	// Frames are the frames of its CM messages or MPA start frames.
	Frames []int `json:"frames"`
}

func u32p(v uint32) *uint32 { return &v }

// cmConnKey names a connection by its requesting side, answering side and
// the requesting side's communication ID, or for a SIDR exchange (sidr)
// its request ID: the CM's agents draw both from one pool, but an ID
// used again later may start either, and the messages of a connection
// never belong to a SIDR exchange.
type cmConnKey struct {
	active, passive string
	comm            uint32
	sidr            bool
}

// connIndex finds connections by communication ID (the CM messages) and
// by QP (the data messages and queue pairs), each list oldest first.
type connIndex struct {
	res    *Result
	byComm map[cmConnKey][]*Connection
	byQP   map[flowKey][]*Connection
}

// linkCM finds the connections the CM messages set up and names them on
// the messages and queue pairs they concern.
func (res *Result) linkCM() {
	x := &connIndex{res: res, byComm: map[cmConnKey][]*Connection{}}
	for _, m := range res.Messages {
		if m.CM == nil {
			continue
		}
		if c := x.cmConnection(m); c != nil {
			m.Connection = c.Index
			if n := len(c.Frames); n == 0 || c.Frames[n-1] != m.Frame {
				c.Frames = append(c.Frames, m.Frame)
			}
		}
	}
	if len(res.Connections) == 0 {
		return
	}
	x.byQP = map[flowKey][]*Connection{}
	for _, c := range res.Connections {
		if c.PassiveQP != nil {
			k := flowKey{c.Active, c.Passive, *c.PassiveQP}
			x.byQP[k] = append(x.byQP[k], c)
		}
		if c.ActiveQP != nil {
			k := flowKey{c.Passive, c.Active, *c.ActiveQP}
			x.byQP[k] = append(x.byQP[k], c)
		}
	}
	for _, m := range res.Messages {
		if m.Connection == 0 && m.CM == nil && m.MAD == nil {
			if c := x.connectionOf(m.Src, m.Dst, m.QP, m.Frame); c != nil {
				m.Connection = c.Index
				if m.SrcQP == nil {
					m.SrcQP = c.peerQP(m.Src)
				}
			}
		}
	}
	for _, s := range res.QPs {
		if s.QP > 1 {
			if c := x.connectionOf(s.Src, s.Dst, s.QP, int(^uint(0)>>1)); c != nil {
				s.Connection = c.Index
				if s.PeerQP == nil {
					s.PeerQP = c.peerQP(s.Src)
				}
			}
		}
	}
}

// cmConnection returns the connection a CM message belongs to, starting
// one for a REQ.
func (x *connIndex) cmConnection(m *Message) *Connection {
	cm := m.CM
	switch cm.Type {
	case CMREQ:
		r := cm.REQ
		k := cmConnKey{m.Src, m.Dst, r.LocalCommID, false}
		if cs := x.byComm[k]; len(cs) > 0 {
			// The REQ again, unless the ID's last connection is over.
			if c := cs[len(cs)-1]; c.State != ConnRejected && c.State != ConnDisconnected && *c.ActiveQP == r.LocalQPN {
				return c
			}
		}
		sid := r.ServiceID
		t := Transport(r.TransportType)
		if r.TransportType > 2 {
			t = TransportRC
		}
		c := &Connection{Index: len(x.res.Connections) + 1, Transport: t, Service: ServiceName(sid), ServiceID: &sid,
			Active: m.Src, Passive: m.Dst, ActiveQP: u32p(r.LocalQPN), PassivePSN: u32p(r.StartingPSN),
			ActiveCommID: u32p(r.LocalCommID), State: ConnRequested}
		x.res.Connections = append(x.res.Connections, c)
		x.byComm[k] = append(x.byComm[k], c)
		return c
	case CMSIDRREQ:
		r := cm.SIDRREQ
		k := cmConnKey{m.Src, m.Dst, r.RequestID, true}
		if cs := x.byComm[k]; len(cs) > 0 && cs[len(cs)-1].State == ConnRequested {
			return cs[len(cs)-1] // the SIDR_REQ again
		}
		sid := r.ServiceID
		c := &Connection{Index: len(x.res.Connections) + 1, Transport: TransportUD, Service: ServiceName(sid),
			ServiceID: &sid, Active: m.Src, Passive: m.Dst, ActiveCommID: u32p(r.RequestID), State: ConnRequested}
		x.res.Connections = append(x.res.Connections, c)
		x.byComm[k] = append(x.byComm[k], c)
		return c
	case CMSIDRREP:
		r := cm.SIDRREP
		cs := x.byComm[cmConnKey{m.Dst, m.Src, r.RequestID, true}]
		if len(cs) == 0 {
			return nil
		}
		c := cs[len(cs)-1]
		if r.Status == 0 {
			c.PassiveQP, c.State = u32p(r.QPN), ConnEstablished
		} else {
			c.State, c.Reject = ConnRejected, SIDRStatusName(r.Status)
		}
		return c
	case CMREP:
		r := cm.REP
		c := x.findConn(m.Src, m.Dst, r.LocalCommID, r.RemoteCommID)
		if c != nil {
			c.PassiveCommID, c.PassiveQP, c.ActivePSN = u32p(r.LocalCommID), u32p(r.LocalQPN), u32p(r.StartingPSN)
			if c.State == ConnRequested {
				c.State = ConnReplied
			}
		}
		return c
	}
	var ids CMCommIDs
	switch {
	case cm.RTU != nil:
		ids = *cm.RTU
	case cm.REJ != nil:
		ids = cm.REJ.CMCommIDs
	case cm.MRA != nil:
		ids = cm.MRA.CMCommIDs
	case cm.DREQ != nil:
		ids = cm.DREQ.CMCommIDs
	case cm.DREP != nil:
		ids = *cm.DREP
	case cm.LAP != nil:
		ids = cm.LAP.CMCommIDs
	case cm.APR != nil:
		ids = cm.APR.CMCommIDs
	default:
		return nil // ClassPortInfo belongs to no connection
	}
	c := x.findConn(m.Src, m.Dst, ids.LocalCommID, ids.RemoteCommID)
	if c == nil {
		return nil
	}
	switch cm.Type {
	case CMRTU:
		if c.State == ConnReplied || c.State == ConnRequested {
			c.State = ConnEstablished
		}
	case CMREJ:
		c.State, c.Reject = ConnRejected, cm.REJ.Reason.String()
	case CMDREQ:
		if c.State != ConnDisconnected {
			c.State = ConnDisconnecting
		}
	case CMDREP:
		c.State = ConnDisconnected
	}
	return c
}

// findConn returns the latest connection a message from src to dst with
// these communication IDs belongs to: sent by either side, naming the
// sender's ID as local and the receiver's as remote (an ID the capture
// has not shown yet matches any).
func (x *connIndex) findConn(src, dst string, local, remote uint32) *Connection {
	var found *Connection
	match := func(cs []*Connection, passiveID uint32) {
		for i := len(cs) - 1; i >= 0; i-- {
			if c := cs[i]; c.PassiveCommID == nil || *c.PassiveCommID == passiveID {
				if found == nil || c.Index > found.Index {
					found = c
				}
				return
			}
		}
	}
	match(x.byComm[cmConnKey{src, dst, local, false}], remote) // from the requesting side
	match(x.byComm[cmConnKey{dst, src, remote, false}], local) // from the answering side
	return found
}

// connectionOf returns the latest connection, set up at or before frame,
// whose QP at dst is qp with src the other end.
func (x *connIndex) connectionOf(src, dst string, qp uint32, frame int) *Connection {
	cs := x.byQP[flowKey{src, dst, qp}]
	for i := len(cs) - 1; i >= 0; i-- {
		if len(cs[i].Frames) > 0 && cs[i].Frames[0] <= frame {
			return cs[i]
		}
	}
	return nil
}

// peerQP returns the QP of the connection's end at addr: the requester's
// QP of the messages it sends.
func (c *Connection) peerQP(addr string) *uint32 {
	if addr == c.Active {
		return c.ActiveQP
	}
	return c.PassiveQP
}

// iwarpConnection records the connection an MPA Request (and its Reply)
// set up.
func iwarpConnection(index int, req, rep *iwDir) *Connection {
	c := &Connection{Index: index, Transport: TransportIWARP, Active: req.s.src, Passive: req.s.dst,
		State: ConnRequested, Frames: []int{req.startFrame}}
	c.Service = "TCP"
	if _, port, err := net.SplitHostPort(req.s.dst); err == nil {
		c.Service = "TCP port " + port
	}
	if rep != nil && rep.start != nil && !rep.start.Request {
		c.Frames = append(c.Frames, rep.startFrame)
		c.State = ConnEstablished
		if rep.start.Reject {
			c.State, c.Reject = ConnRejected, "MPA Reply with R (rejected)"
		}
	}
	if c.State == ConnEstablished && (req.s.closed > 0 || rep != nil && rep.s.closed > 0) {
		c.State = ConnDisconnected // a FIN or RST
	}
	return c
}
