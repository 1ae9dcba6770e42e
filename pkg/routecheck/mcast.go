package routecheck

import "fmt"

// MulticastIssue is a finding about one multicast group's tree.
type MulticastIssue struct {
	// Kind is "loop", "disconnected-switch", "extra-switch",
	// "non-symmetric" or "disconnected-from-group" (the last two are
	// warnings), or for the Up/Down check "non-updown".
	Kind string `json:"kind"`
	// Error is false for a warning.
	Error bool `json:"error"`
	// Node is the switch concerned.
	Node string `json:"node"`
	// Port is the port it was reached through (loop, non-symmetric).
	Port int `json:"port,omitempty"`
	// PrevPort is the port it had been reached through before (loop).
	PrevPort int `json:"prevPort,omitempty"`
	// From and FromPort are the switch and port that lead to Node.
	From     string `json:"from,omitempty"`
	FromPort int    `json:"fromPort,omitempty"`
	// HCAs are the CAs cut off with a disconnected switch.
	HCAs []string `json:"hcas,omitempty"`
	// Ranks and Turn describe an Up/Down violation.
	FromRank int    `json:"fromRank,omitempty"`
	ToRank   int    `json:"toRank,omitempty"`
	Turn     string `json:"turn,omitempty"`
}

// MulticastGroup is the check of one MLID's tree.
type MulticastGroup struct {
	// MLID is the multicast LID.
	MLID uint16 `json:"mlid"`
	// Switches is the number of switches with an MFT entry for it.
	Switches int `json:"switches"`
	// HCAs is the number of CA links its MFT entries include.
	HCAs int `json:"hcas"`
	// Issues are the group's findings in the order found.
	Issues []MulticastIssue `json:"issues,omitempty"`
	// Errors counts the issues that are errors.
	Errors int `json:"errors"`
}

// MulticastResult is the multicast trees' check.
type MulticastResult struct {
	// Groups are the groups, by MLID.
	Groups []MulticastGroup `json:"groups"`
	// Errors counts the errors over all groups.
	Errors int `json:"errors"`
}

func (f *Fabric) switchesByName() []*Node {
	var out []*Node
	for _, n := range f.nodesByName() {
		if n.Type == Switch {
			out = append(out, n)
		}
	}
	return out
}

// caLinks returns the ports of a switch's entry for mlid that lead to a
// CA, in port order.
func (n *Node) caLinks(mlid uint16) []*Port {
	var out []*Port
	for _, pn := range n.MFT(mlid) {
		if p := n.Port(pn); p != nil && p.Remote != nil && p.Remote.Node.Type != Switch {
			out = append(out, p)
		}
	}
	return out
}

// treeLinks calls fn for every port of a switch's entry for mlid, but the
// one the tree entered by, that leads to another switch.
func (n *Node) treeLinks(mlid uint16, inPort int, fn func(p *Port)) {
	for _, pn := range n.MFT(mlid) {
		if pn == inPort {
			continue
		}
		if p := n.Port(pn); p != nil && p.Remote != nil && p.Remote.Node.Type == Switch {
			fn(p)
		}
	}
}

// loopIssue is the finding of a tree that reaches rem a second time.
func loopIssue(rem *Port, prev int) MulticastIssue {
	return MulticastIssue{Kind: "loop", Error: true, Node: rem.Node.Name, Port: rem.Num, PrevPort: prev}
}

type mcStep struct {
	node   *Node
	inPort int
	turn   *Node
	down   bool
}

// checkMulticast walks every group's tree from its first switch with a CA
// breadth first: every switch of the group with CAs is reached, no switch
// twice, and none outside the group.
func (f *Fabric) checkMulticast() *MulticastResult {
	res := &MulticastResult{}
	sws := f.switchesByName()
	for _, mlid := range f.MulticastGroups() {
		g := MulticastGroup{MLID: mlid}
		var group []*Node
		var first *Node
		inGroup := map[*Node]bool{}
		for _, n := range sws {
			ports := n.MFT(mlid)
			if len(ports) == 0 {
				continue
			}
			group = append(group, n)
			inGroup[n] = true
			if cas := n.caLinks(mlid); len(cas) > 0 {
				g.HCAs += len(cas)
				if first == nil {
					first = n
				}
			}
		}
		g.Switches = len(group)
		if len(group) == 0 || g.HCAs == 0 {
			res.Groups = append(res.Groups, g)
			continue
		}
		visited := map[*Node]int{}
		queue := []mcStep{{node: first}}
		for len(queue) > 0 {
			st := queue[0]
			queue = queue[1:]
			visited[st.node] = st.inPort
			st.node.treeLinks(mlid, st.inPort, func(p *Port) {
				rem := p.Remote.Node
				if prev, ok := visited[rem]; ok {
					g.Issues = append(g.Issues, loopIssue(p.Remote, prev))
					g.Errors++
					return
				}
				if m := rem.mft[mlid]; m == nil || !m.has(p.Remote.Num) {
					g.Issues = append(g.Issues, MulticastIssue{Kind: "non-symmetric", Node: rem.Name, Port: p.Remote.Num, From: st.node.Name, FromPort: p.Num})
					return
				}
				queue = append(queue, mcStep{node: rem, inPort: p.Remote.Num})
			})
		}
		for _, n := range group {
			if _, ok := visited[n]; ok {
				continue
			}
			var hcas []string
			for _, p := range n.caLinks(mlid) {
				hcas = append(hcas, p.Remote.Node.Name)
			}
			if len(hcas) > 0 {
				g.Issues = append(g.Issues, MulticastIssue{Kind: "disconnected-switch", Error: true, Node: n.Name, HCAs: hcas})
				g.Errors++
			} else {
				g.Issues = append(g.Issues, MulticastIssue{Kind: "disconnected-from-group", Node: n.Name})
			}
		}
		// ibdm lists the visited switches of its map, ordered by address;
		// by name here
		for _, n := range f.switchesByName() {
			if _, ok := visited[n]; ok && !inGroup[n] {
				g.Issues = append(g.Issues, MulticastIssue{Kind: "extra-switch", Error: true, Node: n.Name})
				g.Errors++
			}
		}
		res.Errors += g.Errors
		res.Groups = append(res.Groups, g)
	}
	return res
}

// MulticastUpDown is the Up/Down check of one group's tree from each of
// its switches with CAs.
type MulticastUpDown struct {
	// MLID is the group.
	MLID uint16 `json:"mlid"`
	// LeafSwitches is the number of switches with CAs the tree is walked from.
	LeafSwitches int `json:"leafSwitches"`
	// Traversed is the number of walks done.
	Traversed int `json:"traversed"`
	// Issues are the loops and turns up after a turn down found.
	Issues []MulticastIssue `json:"issues,omitempty"`
	// BadPaths counts them.
	BadPaths int `json:"badPaths"`
}

func (f *Fabric) multicastUpDown(rank map[*Node]int) ([]MulticastUpDown, error) {
	var out []MulticastUpDown
	sws := f.switchesByName()
	for _, mlid := range f.MulticastGroups() {
		g := MulticastUpDown{MLID: mlid}
		var leaves []*Node
		for _, n := range sws {
			if len(n.caLinks(mlid)) > 0 {
				leaves = append(leaves, n)
			}
		}
		g.LeafSwitches = len(leaves)
		for _, leaf := range leaves {
			if g.BadPaths > 100 {
				break
			}
			bad, err := f.mcUpDownFrom(leaf, mlid, rank, &g)
			if err != nil {
				return nil, err
			}
			g.BadPaths += bad
			g.Traversed++
		}
		out = append(out, g)
	}
	return out, nil
}

func (f *Fabric) mcUpDownFrom(start *Node, mlid uint16, rank map[*Node]int, g *MulticastUpDown) (int, error) {
	visited := map[*Node]int{}
	queue := []mcStep{{node: start}}
	bad := 0
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		visited[st.node] = st.inPort
		r, ok := rank[st.node]
		if !ok {
			return 0, fmt.Errorf("%w: no rank for %s", ErrModel, st.node.Name)
		}
		var err error
		st.node.treeLinks(mlid, st.inPort, func(p *Port) {
			rem := p.Remote.Node
			if err != nil {
				return
			}
			if prev, ok := visited[rem]; ok {
				g.Issues = append(g.Issues, loopIssue(p.Remote, prev))
				bad++
				return
			}
			rr, ok := rank[rem]
			if !ok {
				err = fmt.Errorf("%w: no rank for %s", ErrModel, rem.Name)
				return
			}
			next := mcStep{node: rem, inPort: p.Remote.Num}
			if rr < r {
				if st.down {
					g.Issues = append(g.Issues, MulticastIssue{Kind: "non-updown", Error: true, From: st.node.Name, FromPort: p.Num, FromRank: r,
						Node: rem.Name, Port: p.Remote.Num, ToRank: rr, Turn: st.turn.Name})
					bad++
					return
				}
			} else {
				next.turn, next.down = st.node, true
			}
			queue = append(queue, next)
		})
		if err != nil {
			return 0, err
		}
	}
	return bad, nil
}
