package cc

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/internal/jsonkeys"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
)

// ccFake answers as a switch of nports ports whose congestion control
// attributes hold a byte pattern: NodeInfo SMPs, CC Gets (every attribute
// the pattern of its ID, the control table's limit 100, the congestion log
// of logType with every event filled) and CC Sets (echoed).
func ccFake(nports uint8, logType uint8) madtest.Handler {
	return func(req *mad.Packet) []mad.Packet {
		var h mad.Header
		if err := h.UnmarshalBinary(req.MAD); err != nil {
			return nil
		}
		switch {
		case h.MgmtClass == mad.ClassSMI && h.AttrID == mad.AttrNodeInfo:
			ni, _ := (&mad.NodeInfo{NodeType: 2, NumPorts: nports}).MarshalBinary()
			return []mad.Packet{madtest.Reply(req, mad.StatusOK, mad.SMPDataOffset, ni)}
		case h.MgmtClass != mad.ClassCC:
			return nil
		case h.Method == mad.MethodSet:
			return []mad.Packet{madtest.Reply(req, mad.StatusOK, mad.SMPDataOffset, nil)}
		}
		off := mad.SMPDataOffset
		if h.AttrID == mad.AttrCongestionLogSwitch {
			off = 32
		}
		data := ccPattern(uint16(h.AttrID)+uint16(h.AttrMod), mad.Size-off)
		switch h.AttrID {
		case mad.AttrCongestionLogSwitch:
			data[0] = logType
		case mad.AttrCongestionControlTable:
			data[0], data[1] = 0, 100
		}
		return []mad.Packet{madtest.Reply(req, mad.StatusOK, off, data)}
	}
}

// ccPattern returns n bytes of a pattern seeded by seed, none of them 0.
func ccPattern(seed uint16, n int) []byte {
	var b []byte
	for i := range n {
		b = append(b, byte(int(seed)*31+i*7)|1)
	}
	return b
}

// runIbccquery runs ibccquery with args against h and returns its output.
func runIbccquery(t *testing.T, h madtest.Handler, args ...string) (string, error) {
	t.Helper()
	o := cmdtest.ParsedOptions(t, "ibccquery", newIbccqueryCmd, args)
	var out strings.Builder
	o.IO.Out = &out
	o.Common.Open = cmdtest.FakeOpen(&o.Common, h, 10*time.Millisecond, nil)
	o.Common.Ctx = context.Background()
	err := ibccqueryRun(o)
	return out.String(), err
}

// checkCCGolden compares got with testdata/<tool>/<name>.golden; with
// -update it rewrites the file instead.
func checkCCGolden(t *testing.T, tool, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", tool, name+".golden")
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("output differs from %s (-want +got):\n%s", path, diff)
	}
}

// ccAttrKeys are the JSON keys of the generated CC attributes.
var ccAttrKeys = map[string][]string{
	"ClassPortInfo": {"baseVersion", "capabilityMask", "capabilityMask2", "classVersion", "redirectFL", "redirectGID",
		"redirectLID", "redirectPKey", "redirectQKey", "redirectQP", "redirectSL", "redirectTC",
		"respTimeValue", "trapFL", "trapGID", "trapHL", "trapLID", "trapPKey", "trapQKey", "trapQP", "trapSL", "trapTC"},
	"CongestionInfo":              {"congestionInfo", "controlTableCap"},
	"CongestionKeyInfo":           {"ccKey", "ccKeyLeasePeriod", "ccKeyProtectBit", "ccKeyViolations"},
	"CongestionLogSwitch":         {"congestionFlags", "currentTimeStamp", "logEventsCounter", "logType", "portMap[]"},
	"CongestionLogEventSwitch":    {"dlid", "sl", "slid", "timestamp"},
	"CongestionLogCA":             {"congestionFlags", "currentTimeStamp", "logType", "thresholdCongestionEventMap", "thresholdEventCounter"},
	"CongestionLogEventCA":        {"localLIDCN", "localQPCNEntry", "remoteLIDCNEntry", "remoteQPNumberCNEntry", "serviceTypeCNEntry", "slcnEntry", "timestampCNEntry"},
	"SwitchCongestionSetting":     {"controlMap", "creditMask[]", "csReturnDelay", "csThreshold", "markingRate", "packetSize", "threshold", "victimMask[]"},
	"SwitchPortCongestionSetting": {"congParmMarkingRate", "controlType", "packetSize", "threshold", "valid"},
	"CACongestionSetting":         {"controlMap", "portControl"},
	"CACongestionEntry":           {"cctiIncrease", "cctiMin", "cctiTimer", "triggerThreshold"},
	"CongestionControlTableEntry": {"cctMultiplier", "cctShift"},
	"Timestamp":                   {"timestamp"},
}

// under returns ccAttrKeys[attr], each after prefix.
func under(prefix, attr string) []string {
	var out []string
	for _, k := range ccAttrKeys[attr] {
		out = append(out, prefix+k)
	}
	return out
}

func TestIbccqueryJSONKeys(t *testing.T) {
	top := []string{"operation", "target"}
	tests := []struct {
		args    []string
		logType uint8
		want    [][]string
	}{
		{[]string{"CP", "3"}, 0, [][]string{top, under("result.", "ClassPortInfo")}},
		{[]string{"CI", "3"}, 0, [][]string{top, under("result.", "CongestionInfo")}},
		{[]string{"CK", "3"}, 0, [][]string{top, under("result.", "CongestionKeyInfo")}},
		{[]string{"CL", "3"}, 1, [][]string{top, under("result.log.", "CongestionLogSwitch"), under("result.events[].", "CongestionLogEventSwitch")}},
		{[]string{"CL", "3"}, 2, [][]string{top, under("result.log.", "CongestionLogCA"), under("result.events[].", "CongestionLogEventCA")}},
		{[]string{"SS", "3"}, 0, [][]string{top, under("result.", "SwitchCongestionSetting")}},
		{[]string{"SP", "3"}, 0, [][]string{top, {"result[].port"}, under("result[].setting.", "SwitchPortCongestionSetting")}},
		{[]string{"SP", "3", "2"}, 0, [][]string{top, {"result.port"}, under("result.setting.", "SwitchPortCongestionSetting")}},
		{[]string{"CS", "3"}, 0, [][]string{top, under("result.setting.", "CACongestionSetting"), under("result.entries[].", "CACongestionEntry")}},
		{[]string{"CT", "3"}, 0, [][]string{top, {"result.cctiLimit"}, under("result.entries[].", "CongestionControlTableEntry")}},
		{[]string{"TI", "3"}, 0, [][]string{top, under("result.", "Timestamp")}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, err := runIbccquery(t, ccFake(8, tt.logType), append([]string{"--json"}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := jsonkeys.Paths([]byte(out))
			if err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, w...)
			}
			if diff := cmp.Diff(sortedCopy(want), got); diff != "" {
				t.Errorf("unexpected JSON keys (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIbccqueryOutput pins every operation's text and --json document
// against golden files.
func TestIbccqueryOutput(t *testing.T) {
	tests := []struct {
		name    string
		nports  uint8
		logType uint8
		args    []string
	}{
		{"ClassPortInfo", 8, 0, []string{"CP", "3"}},
		{"CongestionInfo", 8, 0, []string{"congestioninfo", "3"}},
		{"CongestionKeyInfo", 8, 0, []string{"CK", "-c", "0x12", "3"}},
		{"CongestionLogSwitch", 8, 1, []string{"CL", "3"}},
		{"CongestionLogCA", 8, 2, []string{"CL", "3"}},
		{"SwitchCongestionSetting", 8, 0, []string{"SS", "3"}},
		{"SwitchPortCongestionSetting", 8, 0, []string{"SP", "3"}},
		{"SwitchPortCongestionSetting-60", 60, 0, []string{"SP", "3"}},
		{"SwitchPortCongestionSetting-port50", 60, 0, []string{"SP", "3", "50"}},
		{"CACongestionSetting", 8, 0, []string{"CS", "3"}},
		{"CongestionControlTable", 8, 0, []string{"CT", "3"}},
		{"Timestamp", 8, 0, []string{"TI", "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runIbccquery(t, ccFake(tt.nports, tt.logType), tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			checkCCGolden(t, "ibccquery", tt.name, out)
			js, err := runIbccquery(t, ccFake(tt.nports, tt.logType), append([]string{"--json"}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			checkCCGolden(t, "ibccquery", tt.name+".json", js)
		})
	}
}

func TestIbccqueryErrorsUnit(t *testing.T) {
	notSwitch := func(req *mad.Packet) []mad.Packet {
		ni, _ := (&mad.NodeInfo{NodeType: 1, NumPorts: 2}).MarshalBinary()
		return []mad.Packet{madtest.Reply(req, mad.StatusOK, mad.SMPDataOffset, ni)}
	}
	tests := []struct {
		name string
		h    madtest.Handler
		args []string
		want string
	}{
		{"bad log type", ccFake(8, 3), []string{"CL", "3"}, "operation CongestionLog: unrecognized log type 3"},
		{"not a switch", notSwitch, []string{"SP", "3"}, "operation SwitchPortCongestionSetting: destination not a switch"},
		{"port past the last", ccFake(8, 0), []string{"SP", "3", "9"}, "operation SwitchPortCongestionSetting: invalid port number 9: the switch has 8 ports"},
		{"no answer", func(*mad.Packet) []mad.Packet { return nil }, []string{"CI", "3"},
			"operation CongestionInfo: congestion info query failed: CCGet(CongestionInfo) to Lid 3: no response after 3 tries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runIbccquery(t, tt.h, tt.args...)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestIbccqueryArgs(t *testing.T) {
	tests := []struct {
		args    []string
		wantOp  string
		wantKey uint64
		wantErr string
	}{
		{[]string{"ci", "3"}, "CongestionInfo", 0, ""},
		{[]string{"-c", "0x10", "SwitchPortCongestionSetting", "3", "4"}, "SwitchPortCongestionSetting", 0x10, ""},
		{[]string{"nosuch", "3"}, "", 0, "operation 'nosuch' not supported"},
		{[]string{"CI", "3", "1"}, "", 0, "takes no port number"},
		{[]string{"-c", "zz", "CI", "3"}, "", 0, `invalid CC key "zz"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var got *ibccqueryOptions
			err := cmdtest.ParseToolArgs(t, "ibccquery", func(f *cmdutil.Factory) *cobra.Command {
				return newIbccqueryCmd(f, func(o *ibccqueryOptions) error { got = o; return nil })
			}, tt.args)
			if !cmdtest.CheckParseErr(t, err, tt.wantErr) {
				return
			}
			if got.Op.Name != tt.wantOp || got.CCKey != tt.wantKey {
				t.Errorf("op %s key %#x, want %s %#x", got.Op.Name, got.CCKey, tt.wantOp, tt.wantKey)
			}
		})
	}
}

// sortedCopy returns the strings sorted, in a new slice.
func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}
