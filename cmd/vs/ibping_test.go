package vs

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/internal/jsonkeys"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
)

// openIBServer answers Gets of an OpenIB vendor class as an ibping or
// ibsysstat server whose host is host: the text its attribute asks for,
// NUL-padded, after the vendor header.
func openIBServer(class mad.Class, host string) madtest.Handler {
	return func(req *mad.Packet) []mad.Packet {
		var h mad.Header
		if h.UnmarshalBinary(req.MAD) != nil || h.MgmtClass != class {
			return nil
		}
		text := host
		if h.AttrID == mad.AttrSysstatCPU {
			text = "cpu 0: model M MHZ 1\n"
		}
		data, _ := mad.OpenIBText(text).MarshalBinary()
		return []mad.Packet{madtest.Reply(req, mad.StatusOK, mad.Vendor2DataOffset, data)}
	}
}

// runIbping runs ibping with args against h; it returns the output.
func runIbping(t *testing.T, h madtest.Handler, args ...string) (string, error) {
	t.Helper()
	o := cmdtest.ParsedOptions(t, "ibping", newIbpingCmd, args)
	var out strings.Builder
	o.IO.Out = &out
	o.Common.Open = cmdtest.FakeOpen(&o.Common, h, 10*time.Millisecond, nil)
	o.Common.Ctx = context.Background()
	err := ibpingRun(o)
	return out.String(), err
}

func TestIbpingJSONKeys(t *testing.T) {
	out, err := runIbping(t, openIBServer(mad.ClassOpenIBPing, "node1.example"), "--json", "-f", "-c", "2", "3")
	if err != nil {
		t.Fatal(err)
	}
	got, err := jsonkeys.Paths([]byte(out))
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	want := []string{"replies[].host", "replies[].rttMicroseconds", "statistics.host", "statistics.received",
		"statistics.transmitted", "target", "timeMilliseconds"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected JSON keys (-want +got):\n%s", diff)
	}
}

func TestIbping(t *testing.T) {
	tests := []struct {
		name     string
		h        madtest.Handler
		args     []string
		wantHead string
		wantCode int
	}{
		{"flood", openIBServer(mad.ClassOpenIBPing, "node1.example"), []string{"-f", "-c", "3", "3"},
			"\n--- node1.example (Lid 3) ibping statistics ---\n3 packets transmitted, 3 received, 0% packet loss, time ", cmdutil.ExitOK},
		{"one", openIBServer(mad.ClassOpenIBPing, "h"), []string{"-c", "1", "3"}, "Pong from h (Lid 3): time ", cmdutil.ExitOK},
		{"no server", func(*mad.Packet) []mad.Packet { return nil }, []string{"-f", "-c", "1", "3"},
			"\n---  (Lid 3) ibping statistics ---\n1 packets transmitted, 0 received, 100% packet loss, time ", cmdutil.ExitFindings},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runIbping(t, tt.h, tt.args...)
			if cmdutil.ExitCode(err) != tt.wantCode {
				t.Errorf("exit code %d (%v), want %d", cmdutil.ExitCode(err), err, tt.wantCode)
			}
			if !strings.HasPrefix(got, tt.wantHead) {
				t.Errorf("output %q, want it to start %q", got, tt.wantHead)
			}
		})
	}
}

func TestHostAndDomain(t *testing.T) {
	b, err := hostAndDomain().MarshalBinary()
	if err != nil || len(b) != mad.Vendor2DataLen || b[len(b)-1] != 0 {
		t.Errorf("%d bytes (%v): want %d, NUL-terminated", len(b), err, mad.Vendor2DataLen)
	}
}
