package mad

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// Path is where a MAD goes: a LID-routed destination, or a directed route
// (DR) for SMPs, the counterpart of libibmad's ib_portid_t.
type Path struct {
	// LID is the destination of a LID-routed MAD. In a directed route it
	// is the LID-routed part before the DR part (libibmad's "combined"
	// route): 0 for a route that starts at this port.
	LID rdma.LID
	// DR is the directed-route initial path: DR[0] is 0, the local port,
	// then the exit port at each hop. Nil for a LID-routed MAD.
	DR []uint8
	// DrSLID is, in a combined route, the LID the DR part's responses
	// return to: this port's LID. Zero otherwise.
	DrSLID rdma.LID
	// DGID, when set, routes the MAD by global route (a GRH): to a port
	// on another subnet, or on RoCE, which has no LIDs. LID may then be 0.
	DGID *rdma.GID
	// SGIDIndex is the local GID table entry the GRH is sent from.
	SGIDIndex uint8
	// SL is the service level of a LID-routed MAD.
	SL uint8
	// PKeyIndex is the local P_Key table entry a GMP is sent with: that
	// of the path's P_Key when the SA gave the path (Resolve), else 0,
	// the default partition's. SMPs take none.
	PKeyIndex uint16
	// QPN and QKey address a GMP's queue pair; zero means the class's
	// well-known QP and QP1QKey.
	QPN, QKey uint32
	// GUID is a port GUID still to be resolved to a LID through the SA
	// (Transactor.Resolve); a path with only a GUID cannot be sent.
	GUID rdma.GUID
}

// LIDPath returns the LID-routed path to lid.
func LIDPath(lid rdma.LID) Path { return Path{LID: lid} }

// DRPath returns the directed route through ports, which starts with 0,
// the local port: DRPath(0) is the local port itself, DRPath(0, 1, 3)
// leaves by port 1 and then by port 3.
func DRPath(ports ...uint8) Path {
	return Path{DR: append([]uint8(nil), ports...)}
}

// IsDR reports whether the path is a directed route.
func (p Path) IsDR() bool { return p.DR != nil }

// Hops is the number of links a directed route crosses.
func (p Path) Hops() int {
	if len(p.DR) == 0 {
		return 0
	}
	return len(p.DR) - 1
}

// Validate checks that the path can be sent: a unicast LID for a
// LID-routed path, and for a directed route a first entry of 0 and at most
// MaxHops-1 hops.
func (p Path) Validate() error {
	if !p.IsDR() {
		if p.DGID != nil && p.LID == 0 {
			return nil // global route only (RoCE)
		}
		if p.GUID != 0 && p.LID == 0 {
			return fmt.Errorf("port GUID %s is not resolved to a LID", p.GUID)
		}
		if p.LID == 0 || p.LID > MaxUnicastLID {
			return fmt.Errorf("LID %d is not a unicast LID", p.LID)
		}
		return nil
	}
	if p.DGID != nil {
		return fmt.Errorf("%v: a directed route has no global route", p)
	}
	switch {
	case len(p.DR) == 0:
		return fmt.Errorf("empty directed route")
	case p.LID != 0 && (p.LID > MaxUnicastLID || p.DrSLID == 0 || p.DrSLID > MaxUnicastLID):
		return fmt.Errorf("%v: a combined route needs unicast LIDs for its LID-routed part and for DrSLID", p)
	case p.DR[0] != 0:
		return fmt.Errorf("directed route %s does not start at 0, the local port", p.drString())
	case len(p.DR) > MaxHops:
		return fmt.Errorf("directed route of %d hops: at most %d", p.Hops(), MaxHops-1)
	}
	return nil
}

// String formats the path as libibmad's portid2str does, so messages read
// like infiniband-diags': "Lid 12", "DR path slid 65535; dlid 65535; 0,1,3".
func (p Path) String() string {
	if p.GUID != 0 && p.LID == 0 && !p.IsDR() && p.DGID == nil {
		return "GUID " + p.GUID.String()
	}
	if !p.IsDR() {
		if p.DGID != nil {
			if p.LID == 0 {
				return "GID " + p.DGID.String()
			}
			return "Lid " + strconv.Itoa(int(p.LID)) + " GID " + p.DGID.String()
		}
		return "Lid " + strconv.Itoa(int(p.LID))
	}
	var b strings.Builder
	if p.LID > 0 {
		fmt.Fprintf(&b, "Lid %d ", p.LID)
	}
	// A route that starts and ends by DR has permissive DrSLID and
	// DrDLID, which libibmad prints as 65535.
	fmt.Fprintf(&b, "DR path slid %d; dlid 65535; ", p.DRSLID())
	b.WriteString(p.drString())
	return b.String()
}

// DRSLID is the DR header's DrSLID: the permissive LID unless the route
// has a LID-routed part.
func (p Path) DRSLID() rdma.LID {
	if p.LID > 0 {
		return p.DrSLID
	}
	return rdma.PermissiveLID
}

func (p Path) drString() string {
	var b strings.Builder
	for i, port := range p.DR {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(port)))
	}
	return b.String()
}

// Address returns the transport address a MAD of class c takes on p:
// the permissive LID for a directed route from the local port, the GRH
// for a global route, the P_Key index and QKey of a GMP.
func (p Path) Address(c Class) Address {
	a := Address{LID: p.LID, SL: p.SL, QPN: c.QP()}
	if p.IsDR() && p.LID == 0 {
		a.LID = rdma.PermissiveLID
	}
	if p.DGID != nil {
		a.HasGRH = true
		a.GRH = GRH{GID: *p.DGID, GIDIndex: p.SGIDIndex, HopLimit: 64}
	}
	if !c.IsSMP() {
		a.PKeyIndex = p.PKeyIndex
		a.QKey = QP1QKey
		if p.QPN != 0 {
			a.QPN = p.QPN
		}
		if p.QKey != 0 {
			a.QKey = p.QKey
		}
	}
	return a
}
