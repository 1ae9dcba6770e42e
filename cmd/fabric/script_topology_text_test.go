package fabric

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/subnet"
)

// verifyIDs checks a topology's text as ibidsverify.pl does and returns
// what it prints and whether something was wrong.
func verifyIDs(text []byte) ([]byte, bool) { return verifyTopologyIDs(parseScriptTopology(text)) }

// printNode is the scripts' main loop on a topology's text: the lines
// printed and how many nodes matched.
func printNode(text []byte, k nodePrintKind, target string, desc *regexp.Regexp) ([]string, int) {
	return printTopologyNode(parseScriptTopology(text), k, target, desc)
}

// The scripts' loops as ibtool ran them on a topology's text, line by
// line, before the tools read it into a scriptTopology: the reference
// FuzzScriptTopologyText holds the readings' walks to.

// lineVerifyIDs is ibidsverify's check, line by line.
func lineVerifyIDs(text []byte) ([]byte, bool) {
	var out bytes.Buffer
	bad := false
	lids := map[string]string{}      // LID -> node GUID
	nodeGUIDs := map[string]string{} // node GUID -> LID
	portGUIDs := map[string]string{} // port GUID -> LID
	// The script compares GUIDs to 0 as strings: a GUID read as "0x0"
	// never matches, so only a bare "0" counts as zero.
	insertLID := func(lid, nodeGUID, nodeType string) {
		if lid == "0" {
			fmt.Fprintf(&out, "LID 0 found for %s NodeGUID %s\n", nodeType, nodeGUID)
			bad = true
			return
		}
		if g, ok := lids[lid]; ok {
			fmt.Fprintf(&out, "LID %s already defined for NodeGUID %s\n", lid, g)
			bad = true
			return
		}
		lids[lid] = nodeGUID
	}
	insertNodeGUID := func(lid, nodeGUID, nodeType string) {
		if nodeGUID == "0" {
			fmt.Fprintf(&out, "%s GUID 0x0 found with LID %s\n", nodeType, lid)
			bad = true
			return
		}
		if l, ok := nodeGUIDs[nodeGUID]; ok {
			fmt.Fprintf(&out, "NodeGUID %s already defined for LID %s\n", nodeGUID, l)
			bad = true
			return
		}
		nodeGUIDs[nodeGUID] = lid
	}
	insertPortGUID := func(lid, portGUID, nodeType, nodeGUID string) {
		if portGUID == "0" {
			fmt.Fprintf(&out, "%s GUID 0x0 found with LID %s\n", nodeType, lid)
			bad = true
			return
		}
		if l, ok := portGUIDs[portGUID]; ok {
			fmt.Fprintf(&out, "PortGUID %s already defined for LID %s\n", portGUID, l)
			bad = true
			return
		}
		portGUIDs[portGUID] = lid
		if _, ok := nodeGUIDs[portGUID]; ok && nodeGUID != portGUID {
			fmt.Fprintf(&out, "PortGUID %s is an invalid duplicate of a NodeGUID\n", portGUID)
			bad = true
		}
	}
	var nodeType, nodeGUID, portGUID, lid string
	firstPort := false
	for _, line := range strings.SplitAfter(string(text), "\n") {
		line = strings.TrimSuffix(line, "\n")
		if m := idsCAGUID.Get().FindStringSubmatch(line); m != nil {
			nodeGUID, nodeType = m[1], ""
		}
		if m := idsSwitchGUID.Get().FindStringSubmatch(line); m != nil {
			nodeGUID, portGUID, nodeType = m[1], "", ""
		}
		if m := idsSwitchBoth.Get().FindStringSubmatch(line); m != nil {
			nodeGUID, portGUID = m[1], "0x"+m[2]
		}
		if m := idsSwitchLine.Get().FindStringSubmatch(line); m != nil {
			nodeType, firstPort, lid = "switch", true, m[3]
			insertLID(lid, nodeGUID, nodeType)
			insertNodeGUID(lid, nodeGUID, nodeType)
			if portGUID != "" {
				insertPortGUID(lid, portGUID, nodeType, nodeGUID)
			}
		}
		if strings.HasPrefix(line, "Ca") {
			nodeType, firstPort = "ca", true
		}
		if strings.HasPrefix(line, "Rt") {
			nodeType, firstPort = "router", true
		}
		if nodeType != "ca" && nodeType != "router" {
			continue
		}
		for _, re := range idsPortPeers {
			if m := re.Get().FindStringSubmatch(line); m != nil {
				lid = m[2]
				insertLID(lid, nodeGUID, nodeType)
				if firstPort {
					insertNodeGUID(lid, nodeGUID, nodeType)
					firstPort = false
				}
			}
		}
		if m := idsPortGUID.Get().FindStringSubmatch(line); m != nil {
			portGUID = "0x" + m[2]
			insertPortGUID(lid, portGUID, nodeType, nodeGUID)
		}
	}
	return out.Bytes(), bad
}

// linePrintNode is the ibprint scripts' main loop, line by line.
func linePrintNode(text []byte, k nodePrintKind, target string, desc *regexp.Regexp) ([]string, int) {
	var out []string
	ports := map[int]string{} // never emptied, as in the scripts
	flush := func() {
		nums := make([]int, 0, len(ports))
		for n := range ports {
			nums = append(nums, n)
		}
		sort.Ints(nums)
		for _, n := range nums {
			out = append(out, ports[n])
		}
	}
	in, found := false, 0
	for _, line := range strings.SplitAfter(string(text), "\n") {
		if line == "" {
			continue
		}
		if m := topoNamed[k.keyword].Get().FindStringSubmatch(strings.TrimSuffix(line, "\n")); m != nil {
			if in {
				in = false
				flush()
			}
			if "0x"+m[1] == target || desc.MatchString(m[2]) {
				out = append(out, line)
				in = true
				found++
			}
		}
		for _, e := range k.ends {
			if strings.HasPrefix(line, e) {
				in = false
			}
		}
		if m := printPortLine.Get().FindStringSubmatch(line); m != nil && in {
			n, _ := strconv.Atoi(m[1])
			ports[n] = line
		}
	}
	if in && k.flushAtEnd {
		flush()
	}
	return out, found
}

// lineLinkEnds is get_link_ends, line by line.
func lineLinkEnds(text []byte) map[string]map[string]linkEnd {
	ends := map[string]map[string]linkEnd{}
	inSwitch := false
	guid := ""
	for _, line := range strings.Split(string(text), "\n") {
		if m := fnuLinkSw.Get().FindStringSubmatch(line); m != nil {
			guid, inSwitch = m[1], true
		}
		if inSwitch {
			if m := fnuLinkEnds.Get().FindStringSubmatch(line); m != nil {
				if ends["0x"+guid] == nil {
					ends["0x"+guid] = map[string]linkEnd{}
				}
				ends["0x"+guid][m[1]] = linkEnd{port: m[1], remGUID: "0x" + m[2], remPort: m[3], remDesc: m[5]}
			}
		}
		if strings.HasPrefix(line, "Ca") || strings.HasPrefix(line, "Rt") {
			inSwitch = false
		}
	}
	return ends
}

// lineFindSwitch is ibfindnodesusing's search for the switch, line by
// line.
func lineFindSwitch(text []byte, sw string) (guid, desc string, found bool) {
	for _, line := range strings.Split(string(text), "\n") {
		if m := topoNamed["Switch"].Get().FindStringSubmatch(line); m != nil {
			guid, desc = m[1], m[2]
			if "0x"+guid == sw || strings.Contains(desc, sw+" ") || strings.Contains(desc, sw+"\t") {
				return guid, desc, true
			}
		}
	}
	return guid, desc, false
}

// scriptToolsReport is what the scripts' walks give on a topology, for
// a target and a switch.
type scriptToolsReport struct {
	IDs     string
	IDsBad  bool
	Printed map[string][]string
	Found   map[string]int
	Ends    map[string]map[string]linkEnd
	Switch  []string
}

// FuzzScriptTopologyText: on any text, the tools' walks over its
// scriptTopology give what the scripts' loops gave on its lines. The
// seeds are the small fixtures' kept topologies and hand edits of them.
func FuzzScriptTopologyText(f *testing.F) {
	for name, fab := range scriptTopologyFabrics(f) {
		if len(fab.Nodes) > 10 {
			continue // the fuzzer's mutations of a big fabric's text run slowly
		}
		text := subnet.TopologyText(fab, true, time.Time{})
		f.Add(string(text), "Hca1", "0x0000000000200000")
		f.Add(string(text), name, "Switch1")
		f.Add(strings.ReplaceAll(string(text), "\n\n", "\nCa\t1 \"H-1\"\t\t# \"x\" lid 7 \n[1]\n"), "Switch1", "Switch2")
	}
	f.Add("[1](1) \"S-2# lid 3 x\nCa x\nfoo \"H-9# lid 4 y\n[2](5)\nrtguid=0x7\n[3](8)\n", "x", "0x1")
	f.Add("Switch\t8 \"S-0000000000200000\"\t\t# \"s\" base port 0 lid 1 lmc 0\n[03]\t\"H-1\"[1](2) \t\t# \"h\" lid 2 4xSDR\nRt\n[4]\t\"S-3\"[1] # \"q\" lid 1\n", "s", "0x0000000000200000")
	f.Fuzz(func(t *testing.T, text, target, sw string) {
		desc, err := regexp.Compile(`[\s"]` + target + `[\s"]`)
		if err != nil {
			return
		}
		report := func(lines bool) scriptToolsReport {
			r := scriptToolsReport{Printed: map[string][]string{}, Found: map[string]int{}}
			topo := parseScriptTopology([]byte(text))
			var ids []byte
			if lines {
				ids, r.IDsBad = lineVerifyIDs([]byte(text))
				r.Ends = lineLinkEnds([]byte(text))
				guid, d, found := lineFindSwitch([]byte(text), sw)
				r.Switch = []string{guid, d, fmt.Sprint(found)}
			} else {
				ids, r.IDsBad = verifyTopologyIDs(topo)
				r.Ends = linkEnds(topo)
				guid, d, found := findSwitch(topo, sw)
				r.Switch = []string{guid, d, fmt.Sprint(found)}
			}
			r.IDs = string(ids)
			for _, k := range nodePrintKinds {
				if lines {
					r.Printed[k.name], r.Found[k.name] = linePrintNode([]byte(text), k, target, desc)
				} else {
					r.Printed[k.name], r.Found[k.name] = printTopologyNode(topo, k, target, desc)
				}
			}
			return r
		}
		if diff := cmp.Diff(report(true), report(false), cmp.AllowUnexported(linkEnd{})); diff != "" {
			t.Errorf("the walks differ from the line loops (-lines +walks):\n%s", diff)
		}
	})
}
