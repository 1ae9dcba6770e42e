package routecheck

import (
	"bufio"
	"fmt"
	"io"
)

const rule = "---------------------------------------------------------------------------"

// WriteText writes the report as ibdmchk prints it, from its min-hop
// tables to its verdict (the lines about the files read are the caller's).
func (r *Report) WriteText(w io.Writer) error {
	b := bufio.NewWriter(w)
	r.writeMinHop(b)
	if r.StoppedAt == StageMinHop {
		fmt.Fprintln(b, "-E- Fail to update Min Hops Tables.")
		return b.Flush()
	}
	writeRoutes(b, r.Routes, true)
	if r.StoppedAt == StageRoutes {
		fmt.Fprintln(b, "-E- Some Point to Point Traversals Failed.")
		return b.Flush()
	}
	if r.AllRoutes != nil {
		writeRoutes(b, r.AllRoutes, false)
		if r.StoppedAt == StageAllRoutes {
			fmt.Fprintln(b, "-E- Some Point to Point Traversals Failed.")
			return b.Flush()
		}
	}
	r.writeMulticast(b)
	if r.StoppedAt == StageMulticast {
		fmt.Fprintln(b, "-E- Some Multicast Groups Routing Check Failed.")
		return b.Flush()
	}
	if r.RootsSearched {
		fmt.Fprintln(b, "-I- Automatically recognizing the tree root nodes ...")
	}
	for _, g := range r.MissingRoots {
		fmt.Fprintf(b, "-E- Fail to find node guid:0x%016x\n", g)
	}
	if r.UpDown != nil {
		writeUpDown(b, r.UpDown)
	}
	if r.CreditLoops != nil {
		writeCreditLoops(b, r.CreditLoops)
	}
	return b.Flush()
}

func writeBins(b *bufio.Writer, bins []Bin, width int, add int) {
	for _, x := range bins {
		fmt.Fprintf(b, "%*d   %d\n", width, x.Value+add, x.Count)
	}
}

func (r *Report) writeMinHop(b *bufio.Writer) {
	m := &r.MinHop
	for _, n := range m.CAWithoutLinks {
		fmt.Fprintf(b, "-W- CA with no connected ports:%s\n", n)
	}
	fmt.Fprintf(b, "-I- Init Min Hops Tables in:%d steps\n", m.Steps)
	for _, u := range m.Unassigned {
		fmt.Fprintf(b, "-W- Found - un-assigned hops for node:%s to lid:%d)\n", u.Node, u.LID)
	}
	fmt.Fprintln(b, "------------------ NUM ALTERNATE PORTS TO CA HISTOGRAM --------------------")
	fmt.Fprintln(b, "Describes how many out ports on every switch have the same Min Hop to each ")
	fmt.Fprintln(b, "target CA. Or in other words how many alternate routes are possible at the ")
	fmt.Fprintln(b, "switch level. This is useful to show the symmetry of the cluster.")
	fmt.Fprintln(b)
	fmt.Fprintln(b, "OUT-PORTS NUM-SW-LID-PAIRS")
	for _, x := range m.AlternatePorts {
		if x.Value < 50 {
			fmt.Fprintf(b, "%4d   %d\n", x.Value, x.Count)
		}
	}
	endSection(b)
	if len(m.Unassigned) > 0 {
		fmt.Fprintln(b, "-W- Found - un-reachable lids.")
		return
	}
	for _, u := range m.CAUnassigned {
		fmt.Fprintf(b, "-W- Found - un-assigned hop for node:%s to port:%s (lid:%d)\n", u.Node, u.Port, u.LID)
	}
	fmt.Fprintln(b, "---------------------- CA to CA : MIN HOP HISTOGRAM -----------------------")
	fmt.Fprintln(b, "The number of CA pairs that are in each number of hops distance.")
	fmt.Fprintln(b, "The data is based on topology only - even before any routing is run.")
	fmt.Fprintln(b)
	fmt.Fprintln(b, "HOPS NUM-CA-CA-PAIRS")
	writeBins(b, m.CAPairs, 3, 0)
	endSection(b)
	if w := m.Worst; w != nil {
		fmt.Fprintf(b, "-I- Found worst min hops:%d at node:%s to node:%s\n", w.Hops, w.From, w.To)
		fmt.Fprintln(b, "--------------------------- TRACE PATH BY MIN HOPS -------------------------")
		fmt.Fprintf(b, "-I- Tracing by Min Hops from lid:%d to lid:%d\n", w.SLID, w.DLID)
		for i, h := range w.Trace {
			writeEnd(b, fmt.Sprintf("[%3d] FROM ", i), h.From)
			if h.To.Node != "" {
				writeEnd(b, "      TO   ", h.To)
			}
		}
		if w.LoopAt != "" {
			fmt.Fprintf(b, "-E- Run into loop in min hop path at node:%s\n", w.LoopAt)
		} else {
			fmt.Fprintln(b, rule)
			fmt.Fprintln(b)
		}
	}
}

func writeEnd(b *bufio.Writer, lead string, p PortRef) {
	if p.SysPort != "" {
		fmt.Fprintf(b, "%sHost:%s Plug:%s\n", lead, p.System, p.SysPort)
		fmt.Fprintf(b, "           Node:%s Port:%d\n", p.Node, p.Port)
		return
	}
	fmt.Fprintf(b, "%sNode:%s Port:%d\n", lead, p.Node, p.Port)
}

// Message returns ibdmchk's error line for a route failure.
func (rf RouteFailure) Message() string {
	switch rf.Kind {
	case NotConnected:
		return fmt.Sprintf("-E- Provided starting point is not connected !lid:%d", rf.SLID)
	case NotOnSwitch:
		return fmt.Sprintf("-E- Provided starting point is not connected to a switch !lid:%d", rf.SLID)
	case UnassignedLFT:
		return fmt.Sprintf("-E- Unassigned LFT for lid:%d Dead end at:%s", rf.DLID, rf.At)
	case DeadEndPort0:
		return fmt.Sprintf("-E- Dead end at port 0 of node:%s", rf.At)
	case DeadEnd:
		return fmt.Sprintf("-E- Dead end at:%s", rf.At)
	case Loop:
		return "-E- Aborting after 256 hops - loop in LFT?"
	}
	return "-E- " + rf.Kind.String()
}

// endSection closes a section of the report: the rule and an empty line.
func endSection(b *bufio.Writer) {
	fmt.Fprintln(b, rule)
	fmt.Fprintln(b)
}

// writeMulticastLoop prints a tree's loop, found by the multicast check or
// by its Up/Down walk.
func writeMulticastLoop(b *bufio.Writer, mlid string, i MulticastIssue) {
	fmt.Fprintf(b, "-E- Found a loop on MLID:%s got to node:%s through port:%d previoulsy visited through port:%d\n", mlid, i.Node, i.Port, i.PrevPort)
}

// writeMissing sums up the routes that do not arrive, or the routes
// scanned ("CA to CA paths" or "paths").
func writeMissing(b *bufio.Writer, res *RouteResult, what string) {
	if len(res.Failures) > 0 {
		fmt.Fprintf(b, "-E- Found %d missing paths out of:%d paths\n", len(res.Failures), res.Paths)
	} else {
		fmt.Fprintf(b, "-I- Scanned:%d %s \n", res.Paths, what)
	}
}

func writeFailures(b *bufio.Writer, fs []RouteFailure) {
	for _, f := range fs {
		fmt.Fprintln(b, f.Message())
		fmt.Fprintf(b, "-E- Fail to find a path from:%s to:%s\n", f.From, f.To)
	}
}

func writeRoutes(b *bufio.Writer, res *RouteResult, caToCA bool) {
	if !caToCA {
		fmt.Fprintln(b, "-I- Verifying all paths ... ")
		writeFailures(b, res.Failures)
		writeMissing(b, res, "paths")
		endSection(b)
		return
	}
	fmt.Fprintln(b, "-I- Verifying all CA to CA paths ... ")
	writeFailures(b, res.Failures)
	fmt.Fprintln(b, "---------------------- CA to CA : LFT ROUTE HOP HISTOGRAM -----------------")
	fmt.Fprintln(b, "The number of CA pairs that are in each number of hops distance.")
	fmt.Fprintln(b, "This data is based on the result of the routing algorithm.")
	fmt.Fprintln(b)
	fmt.Fprintln(b, "HOPS NUM-CA-CA-PAIRS")
	writeBins(b, res.Hops, 3, 0)
	endSection(b)
	if res.CommonNodes != nil {
		writeCommon(b, "------------------ LMC BASED ROTING :COMMON NODES HISTOGRAM -----------------",
			[]string{"Describes the distribution of the number of common nodes between the ",
				"different LMC paths of all the CA to CA paths."}, "COMMON-NODES NUM-CA-CA-PAIRS", res.CommonNodes, res)
		writeCommon(b, "---------------- LMC BASED ROTING :COMMON SYSTEMS HISTOGRAM ---------------",
			[]string{"The distribution of the number of common systems between the ",
				"different LMC paths of all the CA to CA paths."}, "COMMON-SYSTEM NUM-CA-CA-PAIRS", res.CommonSystems, res)
	}
	fmt.Fprintln(b, "---------- LFT CA to CA : SWITCH OUT PORT - NUM DLIDS HISTOGRAM -----------")
	fmt.Fprintln(b, "Number of actual Destination LIDs going through each switch out port considering")
	fmt.Fprintln(b, "all the CA to CA paths. Ports driving CAs are ignored (as they must")
	fmt.Fprintln(b, "have = Nca - 1). If the fabric is routed correctly the histogram")
	fmt.Fprintln(b, "should be narrow for all ports on same level of the tree.")
	fmt.Fprintf(b, "A detailed report is provided in %s.\n", PortDLIDsFile)
	fmt.Fprintln(b)
	fmt.Fprintln(b, "NUM-DLIDS NUM-SWITCH-PORTS")
	writeBins(b, res.DLIDsPerPort, 8, 0)
	endSection(b)
	writeMissing(b, res, "CA to CA paths")
	endSection(b)
}

// PortDLIDsFile is where ibdmchk writes the destinations per switch port
// (WritePortDLIDs writes the same list).
const PortDLIDsFile = "/var/cache/ibutils/ibdmchk.sw_out_port_num_dlids"

// WritePortDLIDs writes the number of destinations of each switch port as
// ibdmchk's detailed report does.
func (res *RouteResult) WritePortDLIDs(w io.Writer) error {
	b := bufio.NewWriter(w)
	fmt.Fprintln(b, "# NUM-DLIDS PORT-NAME ")
	for _, p := range res.PortDLIDs {
		fmt.Fprintf(b, "%6d %s\n", p.Count, p.Port)
	}
	return b.Flush()
}

func writeCommon(b *bufio.Writer, head string, desc []string, cols string, tab [][]int64, res *RouteResult) {
	fmt.Fprintln(b, head)
	for _, d := range desc {
		fmt.Fprintln(b, d)
	}
	fmt.Fprintln(b)
	fmt.Fprintln(b, cols)
	fmt.Fprint(b, "PATH DPT|")
	for d := 1; d <= res.MaxDepth; d++ {
		fmt.Fprintf(b, "%6d|", d)
	}
	fmt.Fprintln(b)
	for c := 0; c <= res.MaxHops && c < len(tab); c++ {
		if tab[c][0] == 0 {
			continue
		}
		fmt.Fprintf(b, "COMM=%3d|", c)
		for d := 1; d <= res.MaxDepth && d < len(tab[c]); d++ {
			fmt.Fprintf(b, "%6d|", tab[c][d])
		}
		fmt.Fprintln(b)
	}
	endSection(b)
}

func (r *Report) writeMulticast(b *bufio.Writer) {
	fmt.Fprintln(b, "-I- Scanning all multicast groups for loops and connectivity...")
	for _, g := range r.Multicast.Groups {
		mlid := fmt.Sprintf("0x%04X", g.MLID)
		fmt.Fprintf(b, "-I- Multicast Group:%s has:%d switches and:%d HCAs\n", mlid, g.Switches, g.HCAs)
		for _, i := range g.Issues {
			switch i.Kind {
			case "loop":
				writeMulticastLoop(b, mlid, i)
			case "non-symmetric":
				fmt.Fprintf(b, "-W- Found a non symmetric MFT on MLID:%s got to node:%s through port:%d which does not point back to node:%s port:%d\n", mlid, i.Node, i.Port, i.From, i.FromPort)
			case "disconnected-switch":
				fmt.Fprintf(b, "-E- Disconnected switch:%s in group:%s\n", i.Node, mlid)
				for _, h := range i.HCAs {
					fmt.Fprintf(b, "-E- Disconnected HCA:%s\n", h)
				}
			case "disconnected-from-group":
				fmt.Fprintf(b, "-W- Switch:%s has MFT entry of group:%s but is disconnceted from it\n", i.Node, mlid)
			case "extra-switch":
				fmt.Fprintf(b, "-E- Extra switch:%s in group:%s MC packets flow into it but never leave.\n", i.Node, mlid)
			}
		}
	}
	if r.Multicast.Errors > 0 {
		fmt.Fprintf(b, "-E- %d multicast group checks failed\n", r.Multicast.Errors)
	}
	endSection(b)
}

func writeUpDown(b *bufio.Writer, u *UpDownResult) {
	fmt.Fprintf(b, "-I- Recognized %d root nodes:\n", len(u.Roots))
	for _, n := range u.Roots {
		fmt.Fprintf(b, " %s\n", n)
	}
	endSection(b)
	fmt.Fprintln(b, "-I- Tracing all CA to CA paths for Credit Loops potential ...")
	writeFailures(b, u.Failures)
	for _, p := range u.BadPaths {
		fmt.Fprintf(b, "-E- Potential Credit Loop on Path from:%s to:%s\n", p.From, p.To)
		for _, t := range p.Turns {
			dir := "Down"
			if t.Up {
				dir = "Up"
			}
			fmt.Fprintf(b, "  Going:%s from:%s to:%s\n", dir, t.From, t.To)
		}
	}
	if len(u.BadPaths) > 0 {
		if u.Stopped {
			fmt.Fprintln(b, "-W- Stopped checking for loops after 100 errors")
		}
		fmt.Fprintf(b, "-E- Found:%d CA to CA paths that can cause credit loops.\n", len(u.BadPaths))
	} else {
		fmt.Fprintf(b, "-I- No credit loops found in:%d CA to CA paths\n", u.Paths)
	}
	endSection(b)
	fmt.Fprintln(b, "-I- Scanning all multicast groups for Credit Loops Potential ...")
	for _, g := range u.Multicast {
		mlid := fmt.Sprintf("0x%04X", g.MLID)
		fmt.Fprintf(b, "-I- Tracing Multicast Group:%s CA to CA paths for Credit Loops potential ...\n", mlid)
		fmt.Fprintf(b, "-I- Multicast group:%s has:%d Switches connected to HCAs\n", mlid, g.LeafSwitches)
		for _, i := range g.Issues {
			if i.Kind == "loop" {
				writeMulticastLoop(b, mlid, i)
				continue
			}
			fmt.Fprintf(b, "-E- Non Up/Down on MLID:%s turning UP from:%s/P%d(%d) to node:%s/P%d(%d) previoulsy turned down:%s\n",
				mlid, i.From, i.FromPort, i.FromRank, i.Node, i.Port, i.ToRank, i.Turn)
		}
		if g.BadPaths > 0 {
			if g.BadPaths > 100 {
				fmt.Fprintln(b, "-W- Stopped checking multicast groups after 100 errors")
			}
			fmt.Fprintf(b, "-E- Found:%d Multicast:%s CA to CA paths that can cause credit loops.\n", g.BadPaths, mlid)
		} else {
			fmt.Fprintf(b, "-I- No credit loops found traversing:%d leaf switches for Multicast LID:%s\n", g.Traversed, mlid)
		}
	}
	endSection(b)
}

func writeCreditLoops(b *bufio.Writer, c *CreditLoopResult) {
	fmt.Fprintln(b, "-I- Using full credit loop check.")
	fmt.Fprintf(b, "-I- Analyzing Fabric for Credit Loops %d SLs, %d VLs used.\n", c.SLs, c.VLs)
	if len(c.Failures) > 0 {
		for _, f := range c.Failures {
			fmt.Fprintln(b, f.Msg)
			fmt.Fprintf(b, "-E- Fail to find a path from:%s to:%s\n", f.From, f.To)
		}
		fmt.Fprintf(b, "-E- Fail to traverse:%d CA to CA paths\n", len(c.Failures))
		fmt.Fprintln(b, "-E- Fail to build dependency graphs.")
		return
	}
	if c.MulticastIncluded {
		for _, e := range c.MulticastErrors {
			fmt.Fprintln(b, e)
		}
		fmt.Fprintf(b, "-I- MFT added %d edges to links dependency graph\n", c.MulticastEdges)
		if len(c.MulticastErrors) > 0 {
			fmt.Fprintln(b, "-E- Fail to build multicast dependency graphs.")
			return
		}
	}
	for i, ch := range c.Loop {
		if i == 0 {
			fmt.Fprintf(b, "Found credit loop on: %s VL: %d\n", ch.Port, ch.VL)
		} else {
			fmt.Fprintf(b, "  - BT credit loop through: %s VL: %d\n", ch.Port, ch.VL)
		}
	}
	if len(c.Loop) > 0 {
		fmt.Fprintln(b, "-E- credit loops in routing")
	} else {
		fmt.Fprintln(b, "-I- no credit loops found")
	}
}
