package smp

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// TestSMPToolsMKey runs the SMP tools against smpFabric with both nodes
// M_Key protected (key 0x55): without -y, or with a wrong key, the SMA
// drops what the protection level guards and the tool fails with exit 3
// and a line that names the M_Key it sent; with -y it works, and every
// SMP it sent carried the key.
func TestSMPToolsMKey(t *testing.T) {
	const noKey = "none was sent (-y gives one)"
	tests := []struct {
		level uint8
		tool  string
		args  []string
		want  string // in the error line; "" for success
	}{
		{2, "smpquery", []string{"nodeinfo", "2"}, noKey},
		{2, "smpquery", []string{"-y", "0x55", "nodeinfo", "2"}, ""},
		{2, "smpquery", []string{"-y", "0x54", "-D", "nodeinfo", "0,1"}, "0x0000000000000054 was sent (-y)"},
		{2, "smpquery", []string{"--m_key", "85", "-D", "portinfo", "0,1", "1"}, ""},
		{1, "smpquery", []string{"portinfo", "2", "1"}, ""}, // level 1 guards only Sets
		{2, "smpdump", []string{"2", "0x11"}, noKey},
		{2, "smpdump", []string{"-y", "0x55", "2", "0x11"}, ""},
		{2, "sminfo", nil, noKey},
		{2, "sminfo", []string{"-y", "0x55"}, ""},
		{2, "ibaddr", []string{"2"}, noKey},
		{2, "ibaddr", []string{"-y", "0x55", "2"}, ""},
		{1, "ibportstate", []string{"2", "1", "disable"}, noKey},
		{1, "ibportstate", []string{"-y", "0x55", "2", "1", "disable"}, ""},
		{0, "ibportstate", []string{"-y", "1", "2", "1", "enable"}, "0x0000000000000001 was sent (-y)"},
		{2, "query", []string{"-y", "0x55", "SubnGet", "NodeInfo", "2"}, ""},
		{2, "query", []string{"SubnGet", "PortInfo", "2"}, noKey},
	}
	for _, tt := range tests {
		t.Run(tt.tool+fmt.Sprintf(" level %d ", tt.level)+strings.Join(tt.args, " "), func(t *testing.T) {
			f := newSMPFabric()
			swPI, caPI := smpSwitchPortInfo, smpCAPortInfo
			swPI.ProtectBits = tt.level
			caPI.MKey, caPI.ProtectBits = 0x55, tt.level
			f.sw.Put(&swPI, madtest.AnyMod).CheckMKeys()
			f.ca.Put(&caPI, madtest.AnyMod).CheckMKeys()
			_, _, err := smpToolRunners[tt.tool](t, f.handle, tt.args)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				want := uint64(0x55)
				if !strings.Contains(strings.Join(tt.args, " "), "-y") && !strings.Contains(strings.Join(tt.args, " "), "--m_key") {
					want = 0
				}
				for _, sma := range []*madtest.SMA{f.sw, f.ca} {
					for _, r := range sma.Requests() {
						if r.MKey != want {
							t.Errorf("%v(%#04x) sent with M_Key %#x, want %#x", r.Method, uint16(r.AttrID), r.MKey, want)
						}
					}
				}
				return
			}
			var te *madrpc.TimeoutError
			if !errors.As(err, &te) || cmdutil.ExitCode(err) != cmdutil.ExitFailure {
				t.Fatalf("error %v (exit %d), want a timeout (exit 3)", err, cmdutil.ExitCode(err))
			}
			var line bytes.Buffer
			cmdutil.RenderError(&line, tt.tool, err, 0)
			if !strings.Contains(line.String(), "M_Key protected port") || !strings.Contains(line.String(), tt.want) {
				t.Errorf("error line %q, want one naming the M_Key and %q", line.String(), tt.want)
			}
		})
	}
}
