package perf

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

// python-rdma's -T of its perf checks (libibtool/errors.py's
// load_thresholds), which ibtool's ibchecknet, ibcheckerrors,
// ibdatacounters and ibdatacounts take: a file that replaces the
// thresholds, in python-rdma's format and with its names. ibcheckerrs keeps
// infiniband-diags' -T (ibcheck_node.go's errThresholds).

// pyCounterMembers are python-rdma's PMPortCounters members
// (IBA.PMPortCounters.MEMBERS), the names a threshold file may use, in
// the attribute's order.
var pyCounterMembers = []string{
	"reserved_0", "portSelect", "counterSelect", "symbolErrorCounter", "linkErrorRecoveryCounter",
	"linkDownedCounter", "portRcvErrors", "portRcvRemotePhysicalErrors", "portRcvSwitchRelayErrors",
	"portXmitDiscards", "portXmitConstraintErrors", "portRcvConstraintErrors", "counterSelect2",
	"localLinkIntegrityErrors", "excessiveBufferOverrunErrors", "reserved_160", "VL15Dropped",
	"portXmitData", "portRcvData", "portXmitPkts", "portRcvPkts", "portXmitWait",
}

// pyPerfqueryNames are python-rdma's libib_name_map_perfquery turned
// round: infiniband-diags' perfquery names and the IBA names they stand
// for, which a threshold file may use too (case matters here).
var pyPerfqueryNames = map[string]string{
	"RcvErrors": "PortRcvErrors", "XmtConstraintErrors": "PortXmitConstraintErrors",
	"SymbolErrors": "SymbolErrorCounter", "XmtDiscards": "PortXmitDiscards",
	"RcvRemotePhysErrors": "PortRcvRemotePhysicalErrors", "ExcBufOverrunErrors": "ExcessiveBufferOverrunErrors",
	"XmtData": "PortXmitData", "LinkRecovers": "LinkErrorRecoveryCounter",
	"RcvSwRelayErrors": "PortRcvSwitchRelayErrors", "XmtWait": "PortXmitWait",
	"LinkIntegrityErrors": "LocalLinkIntegrityErrors", "RcvData": "PortRcvData",
	"RcvConstraintErrors": "PortRcvConstraintErrors", "LinkDowned": "LinkDownedCounter",
	"XmtPkts": "PortXmitPkts", "PortSwHOQLifetimeLimitDiscards": "PortSwHOQLimitDiscards",
	"RcvPkts": "PortRcvPkts",
}

// pyDefaultThresholds are python-rdma's thresholds without -T, by member
// name: ibcheckerrs' defaults.
var pyDefaultThresholds = map[string]int64{
	"portRcvErrors": 10, "portXmitConstraintErrors": 100, "symbolErrorCounter": 10, "VL15Dropped": 100,
	"portXmitDiscards": 100, "excessiveBufferOverrunErrors": 10, "linkErrorRecoveryCounter": 10,
	"portRcvSwitchRelayErrors": 100, "portRcvRemotePhysicalErrors": 100, "localLinkIntegrityErrors": 10,
	"portRcvConstraintErrors": 100, "linkDownedCounter": 10,
}

// loadPyThresholds reads python-rdma's threshold file: "name = value"
// lines, blank lines and '#' comments skipped, the value a Python integer
// literal (decimal, 0x, 0o, 0b, or 0 octal). A file's thresholds replace
// the defaults: a counter it does not name is not checked. "" is no file.
func loadPyThresholds(path string) (map[string]int64, error) {
	if path == "" {
		return maps.Clone(pyDefaultThresholds), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &cmdutil.UsageError{Err: err}
	}
	raw := map[string]int64{}
	var order []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		name, val, _ := strings.Cut(line, "=")
		v, err := parsePyInt(strings.TrimSpace(val))
		if err != nil {
			return nil, cmdutil.UsageErrorf("%s: invalid threshold line %q", path, line)
		}
		name = strings.TrimSpace(name)
		if _, seen := raw[name]; !seen {
			order = append(order, name)
		}
		raw[name] = v
	}
	th := map[string]int64{}
	for _, name := range order {
		m, ok := pyCounterMember(name)
		if !ok {
			return nil, cmdutil.UsageErrorf("%s: threshold key %q is not known", path, name)
		}
		th[m] = raw[name]
	}
	return th, nil
}

// pyCounterMember canonizes a threshold file's name as python-rdma does:
// a member name, else a perfquery name's IBA name, else a member name in
// any case.
func pyCounterMember(name string) (string, bool) {
	if slices.Contains(pyCounterMembers, name) {
		return name, true
	}
	if n, ok := pyPerfqueryNames[name]; ok {
		name = n
	}
	for _, m := range pyCounterMembers {
		if strings.EqualFold(m, name) {
			return m, true
		}
	}
	return "", false
}

// parsePyInt parses a Python 2 int(s, 0) literal: an optional sign, then
// decimal, 0x hex, 0o or 0 octal, or 0b binary; Go's extras (underscores)
// are refused.
func parsePyInt(s string) (int64, error) {
	if strings.Contains(s, "_") {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseInt(s, 0, 64)
}

// pyFieldName is the PortCounters field (ibtool's and infiniband-diags'
// name) of a python-rdma member name.
func pyFieldName(member string) string {
	if member == "" || strings.HasPrefix(member, "reserved") {
		return ""
	}
	return strings.ToUpper(member[:1]) + member[1:]
}

// pyCheckThresholds are a python-rdma threshold set as the error checks
// take it: the fields with a threshold above 0 (python-rdma checks no
// other), in the attribute's order.
func pyCheckThresholds(th map[string]int64) (map[string]uint64, []string) {
	values := map[string]uint64{}
	var order []string
	for _, m := range pyCounterMembers {
		if v, ok := th[m]; ok && v > 0 && pyFieldName(m) != "" {
			values[pyFieldName(m)] = uint64(v)
			order = append(order, pyFieldName(m))
		}
	}
	return values, order
}

// writePyThresholds is python-rdma's -s: NAME=VALUE lines sorted by
// member name.
func writePyThresholds(w io.Writer, th map[string]int64) error {
	names := make([]string, 0, len(th))
	for k := range th {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, k := range names {
		fmt.Fprintf(&b, "%s=%d\n", k, th[k])
	}
	_, err := io.WriteString(w, b.String())
	return err
}
