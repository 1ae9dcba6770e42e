package routecheck

import (
	"bufio"
	"fmt"
	"io"
)

// WriteSubnet writes the links as opensm writes opensm-subnet.lst.
func (s *Snapshot) WriteSubnet(w io.Writer) error {
	b := bufio.NewWriter(w)
	for _, l := range s.Links {
		writeLinkEnd(b, l.A, "%06X")
		writeLinkEnd(b, l.B, "%08X") // opensm pads the far end's vendor ID wider
		fmt.Fprintf(b, "PHY=%s LOG=%s SPD=%s\n", l.Width, l.State, l.Speed)
	}
	return b.Flush()
}

func writeLinkEnd(b *bufio.Writer, e LinkEnd, venFmt string) {
	typ := e.Type.String()
	if e.Router {
		typ = "Rt"
	}
	sm := ""
	if e.SM {
		sm = "-SM"
	}
	fmt.Fprintf(b, "{ %s%s Ports:%02X SystemGUID:%016x NodeGUID:%016x PortGUID:%016x VenID:"+venFmt+" DevID:%04X Rev:%08X {%s} LID:%04X PN:%02X } ",
		typ, sm, e.NumPorts, e.SystemGUID, e.NodeGUID, e.PortGUID, e.VendorID, e.DeviceID, e.Revision, e.Desc, e.LID, e.Port)
}

// WriteFDBs writes the switches' linear forwarding tables as opensm
// writes opensm.fdbs: each LID's output port, the hops to the LID through
// it and whether that is the fewest the switch has.
func (s *Snapshot) WriteFDBs(w io.Writer) error {
	b := bufio.NewWriter(w)
	g := newSnapGraph(s)
	for _, sw := range s.Switches {
		fmt.Fprintf(b, "dump_ucast_routes: Switch 0x%016x\nLID    : Port : Hops : Optimal\n", sw.GUID)
		for lid := 1; lid < len(sw.LFT); lid++ {
			fmt.Fprintf(b, "0x%04X : ", lid)
			port := sw.LFT[lid]
			dst := g.lidOwner(lid)
			if dst < 0 || port == Unassigned {
				b.WriteString("UNREACHABLE\n")
				continue
			}
			hops, best, bestPort := g.hops(sw.GUID, dst, int(port))
			switch {
			case hops < 0:
				fmt.Fprintf(b, "%03d  : HOPS UNKNOWN\n", port)
			case hops == best:
				fmt.Fprintf(b, "%03d  : %02d   : yes\n", port, hops)
			default:
				fmt.Fprintf(b, "%03d  : %02d   : No %d hop path possible via port %d!\n", port, hops, best, bestPort)
			}
		}
	}
	return b.Flush()
}

// WriteMCFDBs writes the switches' multicast forwarding tables as opensm
// writes opensm.mcfdbs: the switches with an entry, each MLID's ports.
func (s *Snapshot) WriteMCFDBs(w io.Writer) error {
	b := bufio.NewWriter(w)
	for _, sw := range s.Switches {
		if len(sw.MFT) == 0 {
			continue
		}
		fmt.Fprintf(b, "\nSwitch 0x%016x\nLID    : Out Port(s)\n", sw.GUID)
		for _, mlid := range sortedMLIDs(sw.MFT) {
			fmt.Fprintf(b, "0x%04X :", mlid)
			for _, p := range sw.MFT[mlid] {
				fmt.Fprintf(b, " 0x%03X ", p)
			}
			b.WriteByte('\n')
		}
	}
	return b.Flush()
}

// WritePathSLs writes the path SLs in ibdmchk's -c format.
func (s *Snapshot) WritePathSLs(w io.Writer) error {
	b := bufio.NewWriter(w)
	for _, p := range s.PathSLs {
		fmt.Fprintf(b, "0x%016x %d %d\n", p.Source, p.DLID, p.SL)
	}
	return b.Flush()
}

// WriteSL2VL writes the SL to VL tables in ibdmchk's -d format.
func (s *Snapshot) WriteSL2VL(w io.Writer) error {
	b := bufio.NewWriter(w)
	for _, e := range s.SL2VL {
		fmt.Fprintf(b, "0x%016x %d %d", e.Switch, e.In, e.Out)
		for i := 0; i < 16; i += 2 {
			fmt.Fprintf(b, " 0x%x%x", e.VLs[i], e.VLs[i+1])
		}
		b.WriteByte('\n')
	}
	return b.Flush()
}

// snapGraph is the snapshot's links by node, for the hop counts of
// opensm.fdbs.
type snapGraph struct {
	idx    map[uint64]int
	isSW   []bool
	remote [][]int // by node, by port: the remote node's index, -1 when none
	byLID  map[int]int
	// the distances of the last destination asked, cached: opensm.fdbs
	// asks for every switch in turn for each LID, the same LIDs each time
	dist map[int][]int
}

func newSnapGraph(s *Snapshot) *snapGraph {
	g := &snapGraph{idx: map[uint64]int{}, byLID: map[int]int{}, dist: map[int][]int{}}
	node := func(e LinkEnd) int {
		i, ok := g.idx[e.NodeGUID]
		if !ok {
			i = len(g.isSW)
			g.idx[e.NodeGUID] = i
			g.isSW = append(g.isSW, e.Type == Switch)
			g.remote = append(g.remote, make([]int, e.NumPorts+1))
			for p := range g.remote[i] {
				g.remote[i][p] = -1
			}
		}
		return i
	}
	for _, l := range s.Links {
		if !activeState(l.State) {
			continue
		}
		a, b := node(l.A), node(l.B)
		if l.A.Port < len(g.remote[a]) {
			g.remote[a][l.A.Port] = b
		}
		for _, e := range []LinkEnd{l.A, l.B} {
			for l := e.LID; e.LID != 0 && l < e.LID+1<<e.LMC; l++ {
				g.byLID[l] = g.idx[e.NodeGUID]
			}
		}
	}
	return g
}

// lidOwner returns the node that owns a LID, -1 when none does.
func (g *snapGraph) lidOwner(lid int) int {
	if n, ok := g.byLID[lid]; ok {
		return n
	}
	return -1
}

// distances returns every node's hops to the destination node dst
// through switches (-1 where there is no path); switches forward, CAs do
// not.
func (g *snapGraph) distances(dst int) []int {
	if d, ok := g.dist[dst]; ok {
		return d
	}
	d := make([]int, len(g.isSW))
	for i := range d {
		d[i] = -1
	}
	d[dst] = 0
	queue := []int{dst}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur != dst && !g.isSW[cur] {
			continue
		}
		for _, r := range g.remote[cur] {
			if r >= 0 && d[r] < 0 && g.isSW[r] {
				d[r] = d[cur] + 1
				queue = append(queue, r)
			}
		}
	}
	g.dist[dst] = d
	return d
}

// hops returns the hops from switch sw to node dst leaving by port, the
// fewest hops the switch has to it and the first port that has them; -1
// hops when the port leads nowhere towards dst.
func (g *snapGraph) hops(sw uint64, dst, port int) (hops, best, bestPort int) {
	s, ok := g.idx[sw]
	if !ok {
		return -1, -1, 0
	}
	d := g.distances(dst)
	via := func(p int) int {
		if p == 0 {
			if s == dst {
				return 0
			}
			return -1
		}
		if p >= len(g.remote[s]) || g.remote[s][p] < 0 || d[g.remote[s][p]] < 0 {
			return -1
		}
		return d[g.remote[s][p]] + 1
	}
	best = -1
	for p := range g.remote[s] {
		if h := via(p); h >= 0 && (best < 0 || h < best) {
			best, bestPort = h, p
		}
	}
	return via(port), best, bestPort
}
