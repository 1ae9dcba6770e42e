package smp

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
)

func TestIbportstateArgs(t *testing.T) {
	tests := []struct {
		args    []string
		wantOp  portOp
		wantSet map[string]uint64
		wantErr string
	}{
		{[]string{"3", "1"}, opQuery, map[string]uint64{}, ""},
		{[]string{"3", "1", "disable"}, opDisable, map[string]uint64{}, ""},
		{[]string{"3", "1", "speed", "1", "width", "255"}, opQuery, map[string]uint64{"speed": 1, "width": 255}, ""},
		{[]string{"-D", "0", "1", "lid", "0x1234", "arm"}, opArm, map[string]uint64{"lid": 0x1234}, ""},
		{[]string{"3", "1", "mkey", "0xffffffffffffffff"}, opQuery, map[string]uint64{"mkey": ^uint64(0)}, ""},
		{[]string{"3", "1", "width", "32"}, "", nil, `invalid width value "32"`},
		{[]string{"3", "1", "vls", "0"}, "", nil, `invalid vls value "0": out of range 1 to 5`},
		{[]string{"3", "1", "mtu", "x"}, "", nil, `invalid mtu value "x"`},
		{[]string{"3", "1", "arm", "active"}, "", nil, "only one of"},
		{[]string{"3", "1", "lmc"}, "", nil, "lmc requires an additional parameter"},
		{[]string{"3", "1", "nosuch"}, "", nil, "invalid operation: nosuch"},
		{[]string{"3", "300"}, "", nil, "out of range 0 to 255"},
		{[]string{"3"}, "", nil, "expected at least 2 argument(s)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var got *ibportstateOptions
			err := cmdtest.ParseToolArgs(t, "ibportstate", func(f *cmdutil.Factory) *cobra.Command {
				return newIbportstateCmd(f, func(o *ibportstateOptions) error { got = o; return nil })
			}, tt.args)
			if !cmdtest.CheckParseErr(t, err, tt.wantErr) {
				return
			}
			if got.Op != tt.wantOp {
				t.Errorf("op %q, want %q", got.Op, tt.wantOp)
			}
			if diff := cmp.Diff(tt.wantSet, got.Set); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPeerWarnings(t *testing.T) {
	port := func(we mad.LinkWidthEnabled, ws mad.LinkWidthSupported, wa mad.LinkWidth, se mad.LinkSpeedEnabled, ss mad.LinkSpeedSupported, sa mad.LinkSpeed) *portState {
		return &portState{pi: mad.PortInfo{LinkWidthEnabled: we, LinkWidthSupported: ws, LinkWidthActive: wa, LinkSpeedEnabled: se, LinkSpeedSupported: ss, LinkSpeedActive: sa}}
	}
	tests := []struct {
		a, b *portState
		want []string
	}{
		{port(2, 3, 2, 1, 7, 1), port(2, 3, 2, 1, 7, 1), nil},
		{port(255, 3, 1, 15, 7, 1), port(3, 3, 1, 7, 7, 1), []string{
			"Peer ports operating at active width 1 rather than 2 (4x)",
			"Peer ports operating at active speed 1 rather than 4 (10.0 Gbps)",
		}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, peerWarnings(tt.a, tt.b)); diff != "" {
			t.Errorf("warnings (-want +got):\n%s", diff)
		}
	}
}

// TestIbportstateNewMKeyPrompt checks that "mkey x" asks for the new M_Key
// at a prompt, as infiniband-diags' getpass("New M_Key: ") does, so the key
// stays out of the shell's history, and that a bad answer is a usage error.
func TestIbportstateNewMKeyPrompt(t *testing.T) {
	tests := []struct {
		name, in string
		want     uint64
		wantErr  string
	}{
		{"typed", "0x1234\n", 0x1234, ""},
		{"decimal, no newline", "4660", 0x1234, ""},
		{"nothing typed", "", 0, "none could be read at the prompt"},
		{"not a number", "0xg\n", 0, "invalid new M_Key typed at the prompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, errOut := cmdutil.NewTestFactory(nil)
			f.IO.In = strings.NewReader(tt.in)
			var got *ibportstateOptions
			c := cmdutil.ToolCommand(f, cmdutil.Tool{Name: "ibportstate", New: func(f *cmdutil.Factory) *cobra.Command {
				return newIbportstateCmd(f, func(o *ibportstateOptions) error { got = o; return nil })
			}})
			c.SetArgs([]string{"3", "1", "mkey", "x"})
			c.SetIn(f.IO.In)
			c.SetErr(f.IO.ErrOut)
			err := c.Execute()
			if !cmdtest.CheckParseErr(t, err, tt.wantErr) {
				return
			}
			if !strings.HasPrefix(errOut.String(), "New M_Key: ") {
				t.Errorf("stderr %q, want the prompt", errOut)
			}
			if diff := cmp.Diff(map[string]uint64{"mkey": tt.want}, got.Set); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
		})
	}
}
