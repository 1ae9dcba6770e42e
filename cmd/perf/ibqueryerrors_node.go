package perf

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// ibqueryerrors' check of one node: its PMA's counters against the
// thresholds, the report lines, and the resets -k and -K ask for.

// pmaQuerier sends PerfMgt Gets and Sets by LID.
type pmaQuerier struct {
	ctx context.Context
	x   *madrpc.Transactor
	// sl is the SL to each LID; nil or a missing LID: SL 0.
	sl map[rdma.LID]uint8
}

// path is the route to lid, on its SL.
func (q *pmaQuerier) path(lid rdma.LID) mad.Path {
	p := mad.LIDPath(lid)
	p.SL = q.sl[lid]
	return p
}

// at is the PMA of the port at lid.
func (q *pmaQuerier) at(lid rdma.LID) *madrpc.PMA { return madrpc.NewPMA(q.x, q.path(lid)) }

// nodeErrors checks one node (print_node) and keeps what it prints.
type nodeErrors struct {
	o      *ibqueryerrorsOptions
	th     *thresholds
	n      *subnet.Node
	q      *pmaQuerier
	out    bytes.Buffer
	warn   bytes.Buffer
	sum    queryErrorsSummary
	header bool
	name   string
	// caps are the PMA's ClassPortInfo capabilities.
	caps mad.PMACapabilities
	// found are the ports reported, for --json.
	found []portErrorsJSON
	// plans are the resets a --dry-run check did not send.
	plans *cmdutil.PlanScope
}

// portErrorsJSON is one reported port in --json: its counters beyond
// threshold (or, with --counters, its data counters).
type portErrorsJSON struct {
	NodeGUID    string            `json:"nodeGUID"`
	PortGUID    string            `json:"portGUID"`
	Description string            `json:"description"`
	Port        string            `json:"port"` // a number, or "ALL"
	Counters    map[string]uint64 `json:"counters"`
}

// record keeps a reported port for --json.
func (r *nodeErrors) record(num int, counters map[string]uint64) {
	port := "ALL"
	guid := r.n.Info.PortGUID
	if num != mad.AllPortSelect {
		port = strconv.Itoa(num)
		if p := r.n.Port(num); p != nil {
			guid = p.GUID
		}
	}
	r.found = append(r.found, portErrorsJSON{NodeGUID: r.n.GUID.String(), PortGUID: guid.String(), Description: r.name, Port: port, Counters: counters})
}

func (r *nodeErrors) warnf(format string, a ...any) {
	fmt.Fprintf(&r.warn, "ibqueryerrors: warning: "+format+"\n", a...)
}

// lidOf is the LID the node's port num is asked at: the switch's, or the
// CA port's own.
func (r *nodeErrors) lidOf(num int) rdma.LID {
	if r.n.Type == mad.NodeTypeSwitch {
		return r.n.SMALID
	}
	return r.n.Ports[num].BaseLID
}

func (r *nodeErrors) check() {
	n := r.n
	r.name = r.o.names.Name(uint64(n.GUID), n.Desc)
	start := 1
	if n.Type == mad.NodeTypeSwitch && n.EnhancedPort0 {
		start = 0
	}
	// The PMA's capabilities, asked at the switch or the first port.
	capPort := r.firstPort()
	allPorts := false
	lid := r.lidOf(capPort)
	if caps, err := r.q.at(lid).Capabilities(r.q.ctx, capPort); err != nil {
		r.warnf("ClassPortInfo query failed on %s, Lid %d port %d: %v", r.name, lid, capPort, err)
		r.sum.pmaFailures++
	} else {
		r.caps = caps
		allPorts = caps.Has(mad.PMAAllPortSelect)
	}
	if r.o.CountersOnly {
		for num := start; num <= n.NumPorts; num++ {
			if n.Ports[num] == nil {
				continue
			}
			r.dataCounters(num)
			r.sum.ports++
			if !allPorts {
				r.clear(num)
			}
		}
	} else {
		skip := allPorts && !r.errors(mad.AllPortSelect)
		if skip {
			r.sum.ports += n.NumPorts
		} else {
			for num := start; num <= n.NumPorts; num++ {
				if n.Ports[num] == nil {
					continue
				}
				r.errors(num)
				r.sum.ports++
				if !allPorts {
					r.clear(num)
				}
			}
		}
	}
	r.sum.nodes++
	if allPorts {
		r.clear(mad.AllPortSelect)
	}
}

// portLID is the LID port num (or every port) is asked at.
func (r *nodeErrors) portLID(num int) rdma.LID {
	if num == mad.AllPortSelect {
		return r.lidOf(r.firstPort())
	}
	return r.lidOf(num)
}

// firstPort is the port the node's LID comes from: 0 for a switch, the
// lowest known port of a CA.
func (r *nodeErrors) firstPort() int {
	if r.n.Type == mad.NodeTypeSwitch {
		return 0
	}
	for num := 1; num <= r.n.NumPorts; num++ {
		if r.n.Ports[num] != nil {
			return num
		}
	}
	return 0
}

func (r *nodeErrors) suppressed(name string) bool {
	for _, s := range r.o.Suppressed {
		if s == name {
			return true
		}
	}
	return false
}

// portCounters reads one port's (or every port's) PortCounters, and
// PortCountersExtended where the PMA has it (nil where not); a failure is
// warned of and counted.
func (r *nodeErrors) portCounters(pma *madrpc.PMA, lid rdma.LID, num int) (*mad.PortCounters, *mad.PortCountersExtended, bool) {
	var pc mad.PortCounters
	if _, err := pma.Get(r.q.ctx, &pc, num); err != nil {
		r.warnf("PortCounters query failed on %s, Lid %d port %d: %v", r.name, lid, num, err)
		r.sum.pmaFailures++
		return nil, nil, false
	}
	r.caps.Hide(&pc)
	if _, wide := r.caps.CounterAttributes(); !wide {
		return &pc, nil, true
	}
	var pce mad.PortCountersExtended
	if _, err := pma.Get(r.q.ctx, &pce, num); err != nil {
		r.warnf("PortCountersExtended query failed on %s, Lid %d port %d: %v", r.name, lid, num, err)
		r.sum.pmaFailures++
		return nil, nil, false
	}
	return &pc, &pce, true
}

// errors reads and reports one port's (or every port's) error counters
// (print_errors and print_results); it reports whether it found any.
func (r *nodeErrors) errors(num int) bool {
	lid := r.portLID(num)
	pma := r.q.at(lid)
	pc, pce, ok := r.portCounters(pma, lid, num)
	if !ok {
		return false
	}
	// The error counters come from PortCountersExtended where it has
	// them, 64 bits wide and printed with their scaled value.
	wide := r.caps.CounterSource(thresholdNames[0]) == mad.FromPortCountersExtended && pce != nil
	var values []uint64
	if wide {
		values = mad.CounterValues(pce, thresholdNames...)
	} else {
		values = mad.CounterValues(pc, thresholdNames...)
	}
	var text strings.Builder
	counters := map[string]uint64{}
	check := func(i int) bool {
		name, v := thresholdNames[i], values[i]
		if v <= r.th.values[name] {
			return false
		}
		if wide {
			text.WriteString(counterText(name, v, false))
		} else {
			v = uint64(uint32(v))
			fmt.Fprintf(&text, " [%s == %d]", name, v)
		}
		counters[name] = v
		return true
	}
	for i, name := range thresholdNames {
		if r.suppressed(name) || !check(i) || !r.o.Details {
			continue
		}
		// infiniband-diags reads the details attribute and decodes it
		// with the other attribute's fields (its field ranges are
		// swapped); ibtool does the same so the output matches.
		switch name {
		case "PortXmitDiscards":
			text.WriteString(r.details(pma, lid, num, &mad.PortXmitDiscardDetails{}, (&mad.PortRcvErrorDetails{}).Layout(), counters))
		case "PortRcvErrors":
			text.WriteString(r.details(pma, lid, num, &mad.PortRcvErrorDetails{}, (&mad.PortXmitDiscardDetails{}).Layout(), counters))
		}
	}
	if text.Len() == 0 {
		return false
	}
	if r.o.Data {
		r.appendData(&text, pc, pce, counters)
	}
	r.nodeHeader("Errors for")
	if num != mad.AllPortSelect || r.n.Type == mad.NodeTypeSwitch {
		r.record(num, counters)
	}
	if num == mad.AllPortSelect {
		if r.n.Type == mad.NodeTypeSwitch {
			fmt.Fprintf(&r.out, "   GUID 0x%x port ALL:%s\n", uint64(r.n.Ports[0].GUID), text.String())
		}
		return true
	}
	fmt.Fprintf(&r.out, "   GUID 0x%x port %d:%s\n", uint64(r.n.Ports[num].GUID), num, text.String())
	if r.o.PortConfig {
		r.portConfig(num)
	}
	r.sum.badPorts++
	return true
}

// dataCounterNames are the data counters ibqueryerrors prints from a
// PMA: those it keeps, the unicast and multicast ones too where it has
// them (read from PortCountersExtended when extended).
func (r *nodeErrors) dataCounterNames(extended bool) []string {
	if !extended {
		return mad.PortDataCounters
	}
	names := slices.Clone(mad.PortDataCounters)
	for _, n := range mad.PortExtendedDataCounters {
		if r.caps.CounterSource(n) == mad.FromPortCountersExtended {
			names = append(names, n)
		}
	}
	return names
}

// appendData appends --data's non-zero data counters of a port with
// errors, from PortCountersExtended where the PMA has it.
func (r *nodeErrors) appendData(text *strings.Builder, pc *mad.PortCounters, pce *mad.PortCountersExtended, counters map[string]uint64) {
	var a mad.Attribute = pc
	if pce != nil {
		a = pce
	}
	names := r.dataCounterNames(pce != nil)
	for i, v := range mad.CounterValues(a, names...) {
		if v != 0 {
			text.WriteString(counterText(names[i], v, isDataCounter(names[i])))
			counters[names[i]] = v
		}
	}
}

// isDataCounter reports whether the counter counts data (4-byte words)
// rather than packets.
func isDataCounter(name string) bool { return name == "PortXmitData" || name == "PortRcvData" }

// nodeHeader prints the node's header once and counts it bad.
func (r *nodeErrors) nodeHeader(what string) {
	if r.header {
		return
	}
	r.header = true
	if r.n.Type == mad.NodeTypeSwitch {
		fmt.Fprintf(&r.out, "%s 0x%x \"%s\"\n", what, uint64(r.n.Ports[0].GUID), r.name)
	} else {
		fmt.Fprintf(&r.out, "%s \"%s\"\n", what, r.name)
	}
	r.sum.badNodes++
}

// details reads the details attribute a and lists its non-zero counters
// as decodeAs's fields (query_and_dump).
func (r *nodeErrors) details(pma *madrpc.PMA, lid rdma.LID, num int, a mad.Attribute, decodeAs *mad.Layout, counters map[string]uint64) string {
	data, err := pma.Get(r.q.ctx, a, num)
	if err != nil {
		r.warnf("%s query failed on %s, Lid %d port %d: %v", a.Layout().Name, r.name, lid, num, err)
		r.sum.pmaFailures++
		return ""
	}
	var b strings.Builder
	for _, f := range decodeAs.Fields {
		if f.Name == "PortSelect" || f.Name == "CounterSelect" {
			continue
		}
		if v := f.Value(data); v != 0 {
			fmt.Fprintf(&b, " [%s == %d]", f.Label, uint32(v))
			counters[f.Label] = uint64(uint32(v))
		}
	}
	return b.String()
}

// dataCounters prints one port's data counters (print_data_cnts).
func (r *nodeErrors) dataCounters(num int) {
	lid := r.portLID(num)
	var a mad.Attribute = &mad.PortCounters{}
	extended := r.caps.CounterSource("PortXmitData") == mad.FromPortCountersExtended
	if extended {
		a = &mad.PortCountersExtended{}
	}
	if _, err := r.q.at(lid).Get(r.q.ctx, a, num); err != nil {
		r.warnf("%s query failed on %s, Lid %d port %d: %v", a.Layout().Name, r.name, lid, num, err)
		r.sum.pmaFailures++
		return
	}
	if !r.header {
		fmt.Fprintf(&r.out, "Data Counters for 0x%x \"%s\"\n", uint64(r.n.GUID), r.name)
		r.header = true
	}
	if num == mad.AllPortSelect {
		fmt.Fprintf(&r.out, "   GUID 0x%x port ALL:", uint64(r.n.GUID))
	} else {
		fmt.Fprintf(&r.out, "   GUID 0x%x port %d:", uint64(r.n.GUID), num)
	}
	names := r.dataCounterNames(extended)
	counters := map[string]uint64{}
	for i, v := range mad.CounterValues(a, names...) {
		r.out.WriteString(counterText(names[i], v, isDataCounter(names[i])))
		counters[names[i]] = v
	}
	r.record(num, counters)
	r.out.WriteByte('\n')
	if num != mad.AllPortSelect && r.o.PortConfig {
		r.portConfig(num)
	}
}

// clear resets the counters -k and -K ask for (clear_port): -k the
// error counters and PortXmitWait, -K the data counters, in PortCounters
// and, where the PMA keeps them there, in PortCountersExtended too (the
// unicast and multicast counters with the data ones); -k with the
// details the details attributes' counters.
func (r *nodeErrors) clear(num int) {
	lid := r.portLID(num)
	pma := r.q.at(lid)
	reset := func(l *mad.Layout, names []string) error {
		_, err := pma.Reset(r.q.ctx, l, num, r.caps.ResetMask(l, names...))
		return err
	}
	var names []string
	if r.o.ClearErrors {
		names = append(append(names, mad.PortErrorCounters...), "PortXmitWait")
	}
	if r.o.ClearCounts {
		names = append(names, mad.PortDataCounters...)
	}
	if names != nil {
		if err := reset((&mad.PortCounters{}).Layout(), names); err != nil {
			fmt.Fprintf(&r.warn, "ibqueryerrors: failed to reset errors %s port %d: %v\n", r.name, num, err)
		}
	}
	if r.o.ClearErrors && r.o.Details {
		for _, a := range []mad.Attribute{&mad.PortXmitDiscardDetails{}, &mad.PortRcvErrorDetails{}} {
			_ = reset(a.Layout(), counterFields(a.Layout()))
		}
	}
	if names := extendedResetCounters(r.caps, r.o.ClearCounts, r.o.ClearErrors); names != nil {
		if err := reset((&mad.PortCountersExtended{}).Layout(), names); err != nil {
			fmt.Fprintf(&r.warn, "ibqueryerrors: failed to reset extended data counters %s, Lid %d port %d: %v\n", r.name, lid, num, err)
		}
	}
}

// counterFields returns the names of l's counters: its fields but the
// port and counter selects.
func counterFields(l *mad.Layout) []string {
	var names []string
	for _, f := range l.Fields {
		if f.Name != "PortSelect" && f.Name != "CounterSelect" && f.Name != "CounterSelect2" {
			names = append(names, f.Name)
		}
	}
	return names
}

// extendedResetCounters are the PortCountersExtended counters that
// ibqueryerrors -K (counts) and -k (errors) reset on a PMA with
// capabilities caps: those it keeps there (mad.CounterSource), the data
// counters, the unicast and multicast ones with them, the error counters
// and PortXmitWait; none when it keeps no counter there.
func extendedResetCounters(caps mad.PMACapabilities, counts, errors bool) (names []string) {
	extended := func(name string) bool { return caps.CounterSource(name) == mad.FromPortCountersExtended }
	if !extended("PortXmitData") {
		return nil
	}
	if counts {
		names = append(names, mad.PortDataCounters...)
		if extended("PortUnicastXmitPkts") {
			names = append(names, mad.PortExtendedDataCounters...)
		}
	}
	if errors && extended("SymbolErrorCounter") {
		names = append(append(names, mad.PortErrorCounters...), "PortXmitWait")
	}
	return names
}

// portConfig prints the port's link line (print_port_config): iblinkinfo's
// port line with "Link info:" before it, no space between the LID and the
// port, and the far end's GUID.
func (r *nodeErrors) portConfig(num int) {
	p := r.n.Port(num)
	if p == nil {
		return
	}
	l := subnet.LinkLine{Names: r.o.names}
	b := fmt.Appendf(nil, "       Link info: %6d", p.LID())
	b = append(subnet.AppendPortNum(b, p), " =="...)
	b = append(l.AppendLink(b, p), "==>  "...)
	if p.Remote != nil {
		b = l.AppendPeer(b, p, true)
	} else {
		b = l.AppendNoPeer(b)
	}
	r.out.Write(b)
}
