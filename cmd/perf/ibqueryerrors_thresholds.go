package perf

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

// ibqueryerrors' inputs and number formats: the counters -s may name, the
// thresholds file, and the human-readable counter values.

// defaultThresholdFile is infiniband-diags' error thresholds file.
const defaultThresholdFile = "/etc/infiniband-diags/error_thresholds"

// pcFieldNames are libibmad's PortCounters field names, IB_PC_FIRST_F to
// IB_PC_LAST_F: what -s may name.
var pcFieldNames = []string{
	"PortSelect", "CounterSelect", "SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter",
	"PortRcvErrors", "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
	"PortXmitConstraintErrors", "PortRcvConstraintErrors", "CounterSelect2", "LocalLinkIntegrityErrors",
	"ExcessiveBufferOverrunErrors", "VL15Dropped", "PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts",
	"PortXmitWait",
}

// thresholdNames are the fields a thresholds file may set
// (IB_PC_EXT_ERR_SYM_F to IB_PC_EXT_XMT_WAIT_F): mad.PortErrorCounters,
// then PortXmitWait (TestCounterLists). A literal the compiler lays out
// as data, where appending to a clone allocated at every start.
var thresholdNames = []string{
	"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
	"PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards", "PortXmitConstraintErrors",
	"PortRcvConstraintErrors", "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped",
	"PortXmitWait",
}

// suppressedFields returns the PortCounters fields a -s list names; names
// that are not fields are ignored, as infiniband-diags does.
func suppressedFields(list string) []string {
	var out []string
	for _, v := range strings.Split(list, ",") {
		for _, f := range pcFieldNames {
			if v == f {
				out = append(out, f)
			}
		}
	}
	return out
}

// thresholds are the values an error counter must exceed to count.
type thresholds struct {
	values map[string]uint64
	// text is the summary's "Thresholds: [name = v]..." line; "(null)"
	// when there is no file, as infiniband-diags prints it.
	text string
}

// readThresholds reads a thresholds file (set_thresholds): NAME=VALUE
// lines, '#' comments; unknown names are ignored. A missing file means
// thresholds of 0.
func readThresholds(path string) (*thresholds, error) {
	t := &thresholds{values: map[string]uint64{}, text: "(null)"}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return t, nil
	}
	if err != nil {
		return nil, &cmdutil.UsageError{Err: err}
	}
	text := "Thresholds: "
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name, val, _ := strings.Cut(line, "=")
		v, err := parseCULong(val)
		if err != nil {
			return nil, cmdutil.UsageErrorf("%s: bad threshold line %q: %v", path, line, err)
		}
		for _, f := range thresholdNames {
			if name == f {
				t.values[f] = v
				text += fmt.Sprintf("[%s = %d]", name, v)
			}
		}
	}
	t.text = text
	return t, nil
}

// parseCULong parses a number as strtoul(s, NULL, 0) takes it, leading
// blanks allowed: decimal, 0x hex or 0 octal (the file format is
// infiniband-diags'), trailing text ignored, nothing read being 0.
func parseCULong(s string) (uint64, error) {
	s = strings.TrimLeft(s, " \t")
	base := 10
	switch {
	case len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X"):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base = 8
	}
	end := 0
	for end < len(s) {
		d, err := strconv.ParseUint(s[end:end+1], base, 8)
		if err != nil || d >= uint64(base) {
			break
		}
		end++
	}
	if end == 0 {
		return 0, nil
	}
	return strconv.ParseUint(s[:end], base, 64)
}

// humanReadable is conv_cnt_human_readable: the value scaled by 1024s and
// its unit; data counters count 4-byte words.
func humanReadable(v uint64, data bool) (float32, string) {
	ui := 0
	div := uint64(1)
	for tmp := v / 1024; tmp != 0; tmp /= 1024 {
		ui++
		div *= 1024
	}
	val := float32(v)
	if data {
		val *= 4
		if val/float32(div) > 1024 {
			ui++
			div *= 1024
		}
	}
	val /= float32(div)
	units := []string{"", "K", "M", "G", "T", "P", "E"}
	if data {
		units = []string{"B", "KB", "MB", "GB", "TB", "PB", "EB"}
	}
	if ui < len(units) {
		return val, units[ui]
	}
	return val, ""
}

// counterText is " [name == v (x.xxxU)]".
func counterText(name string, v uint64, data bool) string {
	f, unit := humanReadable(v, data)
	return fmt.Sprintf(" [%s == %d (%5.3f%s)]", name, v, f, unit)
}
