package vs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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

func TestCPUInfo(t *testing.T) {
	many := func(n int) (in, want string) {
		var i, w strings.Builder
		for k := range n {
			fmt.Fprintf(&i, "processor\t: %d\nmodel name\t: M%d\ncpu MHz\t\t: %d\n\n", k, k, k)
			if k < maxCPUs {
				fmt.Fprintf(&w, "cpu %d: model  M%d MHZ  %d\n", k, k, k)
			}
		}
		return i.String(), w.String()
	}
	in300, want300 := many(300)
	tests := []struct {
		name, in, want string
	}{
		{"two", "processor\t: 0\nvendor_id\t: X\nmodel name\t: Intel Xeon\ncpu MHz\t\t: 2000.000\n\nprocessor\t: 1\nmodel name\t: Intel Xeon\ncpu MHz\t\t: 2100.5\n",
			"cpu 0: model  Intel Xeon MHZ  2000.000\ncpu 1: model  Intel Xeon MHZ  2100.5\n"},
		{"no model or speed (an ARM board)", "processor\t: 0\nBogoMIPS\t: 48.00\n", "cpu 0: model (null) MHZ (null)\n"},
		{"fields before any processor", "model name\t: stray\n", ""},
		{"more than 256", in300, want300},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "cpuinfo")
			if err := os.WriteFile(p, []byte(tt.in), 0o644); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(cpuInfo(p))); diff != "" {
				t.Errorf("cpuInfo (-want +got):\n%s", diff)
			}
		})
	}
	if got := string(cpuInfo(filepath.Join(t.TempDir(), "none"))); got != "couldn't open /proc/cpuinfo\n" {
		t.Errorf("a missing file: %q", got)
	}
}

// runIbsysstat runs ibsysstat with args against h; it returns the output.
func runIbsysstat(t *testing.T, h madtest.Handler, args ...string) (string, error) {
	t.Helper()
	o := cmdtest.ParsedOptions(t, "ibsysstat", newIbsysstatCmd, args)
	var out strings.Builder
	o.IO.Out = &out
	o.Common.Open = cmdtest.FakeOpen(&o.Common, h, 10*time.Millisecond, nil)
	o.Common.Ctx = context.Background()
	err := ibsysstatRun(o)
	return out.String(), err
}

func TestIbsysstat(t *testing.T) {
	srv := openIBServer(mad.ClassOpenIBSysstat, "node1.example")
	tests := []struct {
		args    []string
		want    string
		wantErr string
	}{
		{[]string{"3"}, "sysstat ping succeeded\n", ""},
		{[]string{"3", "host"}, "node1.example\n", ""},
		{[]string{"3", "cpu"}, "cpu 0: model M MHZ 1\n\n", ""},
		{[]string{"--json", "3", "host"}, "{\n  \"op\": \"host\",\n  \"reply\": \"node1.example\",\n  \"target\": \"Lid 3\"\n}\n", ""},
		{[]string{"3", "disk"}, "", `invalid op "disk"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			if tt.wantErr != "" {
				err := cmdtest.ParseToolArgs(t, "ibsysstat", func(f *cmdutil.Factory) *cobra.Command { return newIbsysstatCmd(f, nil) }, tt.args)
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			got, err := runIbsysstat(t, srv, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIbsysstatJSONKeys(t *testing.T) {
	out, err := runIbsysstat(t, openIBServer(mad.ClassOpenIBSysstat, "h"), "--json", "3", "cpu")
	if err != nil {
		t.Fatal(err)
	}
	got, err := jsonkeys.Paths([]byte(out))
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if diff := cmp.Diff([]string{"op", "reply", "target"}, got); diff != "" {
		t.Errorf("unexpected JSON keys (-want +got):\n%s", diff)
	}
}

func TestSysstatReply(t *testing.T) {
	tests := []struct {
		attr mad.AttrID
		want mad.OpenIBText
	}{
		{mad.AttrSysstatPing, ""},
		{mad.AttrSysstatHost, hostAndDomain()},
		{mad.AttrSysstatCPU, mad.OpenIBText(cpuInfo("/proc/cpuinfo"))}, // whole, however long
		{0x99, ""},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, sysstatReply(tt.attr)); diff != "" {
			t.Errorf("attribute %#x (-want +got):\n%s", tt.attr, diff)
		}
	}
}
