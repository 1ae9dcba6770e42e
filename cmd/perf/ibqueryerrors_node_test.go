package perf

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
)

// TestNodeErrorsReport checks the per-node reports of errorsFakeFabric:
// what --data, --details and --counters add, and -r's link lines.
func TestNodeErrorsReport(t *testing.T) {
	const switchErrors = `Errors for 0x200000 "Switch1"
   GUID 0x200000 port ALL: [PortRcvErrors == 2]
   GUID 0x200000 port 2: [PortRcvErrors == 2]
`
	zeros := " [PortXmitData == 0 (0.000B)] [PortRcvData == 0 (0.000B)] [PortXmitPkts == 0 (0.000)] [PortRcvPkts == 0 (0.000)]\n"
	tests := []struct {
		args     []string
		want     string
		wantCode int
	}{
		{nil, `Errors for 0x200000 "Switch1"
   GUID 0x200000 port ALL: [PortRcvErrors == 2]
   GUID 0x200000 port 2: [PortRcvErrors == 2]
Errors for "Hca1"
   GUID 0x300001 port 1: [SymbolErrorCounter == 5]
`, cmdutil.ExitFindings},
		{[]string{"--ca", "-s", "SymbolErrorCounter"}, "", 0},
		// The fake's ports have no PortInfo: the link reads as zero.
		{[]string{"-r", "--switch"}, switchErrors + "       Link info:      1   2[  ] ==(undefined (0)     Extended speed NoChange/NoChange)==>  " +
			"0x0000000000400001      3    1[  ] \"Hca2\" (Could be 1X Could be 2.5 Gbps)\n", cmdutil.ExitFindings},
		// Hca2's PMA has extended width: its data are 64-bit, unicast and
		// multicast counted.
		{[]string{"--counters"}, "Data Counters for 0x200000 \"Switch1\"\n" +
			"   GUID 0x200000 port 1:" + zeros + "   GUID 0x200000 port 2:" + zeros + "   GUID 0x200000 port 3:" + zeros +
			"Data Counters for 0x300000 \"Hca1\"\n   GUID 0x300000 port 1:" + zeros +
			"Data Counters for 0x400000 \"Hca2\"\n   GUID 0x400000 port 1: [PortXmitData == 100 (400.000B)] [PortRcvData == 0 (0.000B)] " +
			"[PortXmitPkts == 0 (0.000)] [PortRcvPkts == 0 (0.000)] [PortUnicastXmitPkts == 0 (0.000)] [PortUnicastRcvPkts == 0 (0.000)] " +
			"[PortMulticastXmitPkts == 0 (0.000)] [PortMulticastRcvPkts == 0 (0.000)]\n" +
			"Data Counters for 0x500000 \"Hca3\"\n   GUID 0x500000 port 1:" + zeros, 0},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := runQueryErrors(t, &errorsPMA{}, tt.args...)
			if code := cmdutil.ExitCode(err); code != tt.wantCode && !(err == nil && tt.wantCode == 0) {
				t.Fatalf("exit %d (%v), want %d", code, err, tt.wantCode)
			}
			got, _, _ = strings.Cut(got, "\n## Summary")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected report (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExtendedResetCounters: -K and -k reset PortCountersExtended's counters
// where the PMA keeps them there: the data counters with either extended
// width, the unicast and multicast ones with ExtendedWidth, the error
// counters (and PortXmitWait when it has it) with
// AdditionalPortCounters; nothing without extended counters.
func TestExtendedResetCounters(t *testing.T) {
	caps := func(mask mad.PMACapability, mask2 mad.PMACapability2) mad.PMACapabilities {
		return mad.PMACapabilities{Mask: mask, Mask2: mask2}
	}
	wide, noIETF, add := mad.PMAExtendedWidth, mad.PMAExtendedWidthNoIETF, mad.PMAAdditionalPortCounters
	tests := []struct {
		name           string
		caps           mad.PMACapabilities
		counts, errors bool
		want           uint64
	}{
		{"no extended counters", caps(mad.PMAXmitWait, add), true, true, 0},
		{"counts, no IETF", caps(noIETF, 0), true, false, 0x0f},
		{"counts, extended width", caps(wide, 0), true, false, 0xff},
		{"errors without additional counters", caps(wide, 0), false, true, 0},
		{"errors with additional counters", caps(noIETF, add), false, true, 0xfff0000},
		{"errors and XmitWait", caps(wide|mad.PMAXmitWait, add), false, true, 0x1fff0000},
		{"both", caps(wide|mad.PMAXmitWait, add), true, true, 0x1fff00ff},
		{"neither", caps(wide, add), false, false, 0},
	}
	for _, tt := range tests {
		names := extendedResetCounters(tt.caps, tt.counts, tt.errors)
		if got := tt.caps.ResetMask((&mad.PortCountersExtended{}).Layout(), names...); got != tt.want {
			t.Errorf("%s: mask %#x, want %#x", tt.name, got, tt.want)
		}
	}
}
