package cmd

import (
	"bufio"
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// fakeTopologyText renders a fabric as ibnetdiscover (-g with group)
// prints it, with a fixed clock.
func fakeTopologyText(t *testing.T, fab *subnet.Fabric, group bool) []byte {
	t.Helper()
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	tp := &topology{w: w, f: fab, group: group}
	if group {
		tp.chassis = fab.GroupChassis()
	}
	tp.header(time.Date(2026, 11, 3, 8, 4, 5, 0, time.Local), false)
	tp.dump()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestLinkCompatNames(t *testing.T) {
	tests := []struct {
		l    portLink
		want string
	}{
		{portLink{width: mad.LinkWidth4X, speed: mad.LinkSpeedSDR}, "4xSDR"},
		{portLink{width: mad.LinkWidth12X, speed: mad.LinkSpeedQDR}, "12xQDR"},
		{portLink{width: mad.LinkWidth1X, speed: mad.LinkSpeedQDR, fdr10: 1}, "1xFDR10"},
		{portLink{width: mad.LinkWidth2X, speed: mad.LinkSpeedQDR, ext: mad.LinkSpeedExtEDR}, "2xEDR"},
		{portLink{width: mad.LinkWidth8X, speed: mad.LinkSpeedDDR, ext: mad.LinkSpeedExtNDR}, "8xNDR"},
		{portLink{width: 3, speed: 3}, "?????"},
		{portLink{width: mad.LinkWidth4X, speed: mad.LinkSpeedQDR, ext: 3}, "4x???"},
	}
	var got, want []string
	for _, tt := range tests {
		got = append(got, linkWidthCompat(tt.l.width)+tt.l.speedString())
		want = append(want, tt.want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected link names (-want +got):\n%s", diff)
	}
}

// TestTopologyModes renders the two-switch fabric in ibnetdiscover's
// list, ports and grouped modes; the whole dump is e2e's (Ibnetdiscover).
func TestTopologyModes(t *testing.T) {
	fab := fakeTwoSwitches(t, nil)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-S"}, `Switch	 : 0x0000000000200001 ports 8 devid 0x0 vendid 0x0 "Switch2"
Switch	 : 0x0000000000200000 ports 8 devid 0x0 vendid 0x0 "Switch1"
`},
		{[]string{"-H"}, `Ca	 : 0x0000000000100009 ports 2 devid 0x0 vendid 0x0 "Hca4"
Ca	 : 0x0000000000100003 ports 2 devid 0x0 vendid 0x0 "Hca2"
Ca	 : 0x0000000000100006 ports 2 devid 0x0 vendid 0x0 "Hca3"
Ca	 : 0x0000000000100000 ports 2 devid 0x0 vendid 0x0 "Hca1"
`},
	}
	for _, tt := range tests {
		out, _, err := runIbnetdiscover(t, fab, tt.args...)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, out); diff != "" {
			t.Errorf("ibnetdiscover %v (-want +got):\n%s", tt.args, diff)
		}
	}
	out, _, err := runIbnetdiscover(t, fab, "-p")
	if err != nil {
		t.Fatal(err)
	}
	wantPorts := "SW     2  3 0x0000000000200001 4x SDR - SW     1  3 0x0000000000200000 ( 'Switch2' - 'Switch1' )\n"
	if !bytes.Contains([]byte(out), []byte(wantPorts)) {
		t.Errorf("ibnetdiscover -p lacks %q:\n%s", wantPorts, out)
	}
}
