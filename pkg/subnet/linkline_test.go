package subnet

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
)

// linkLineFabric is a 4-port switch of LID 1 ("Switch1", extended speeds)
// whose port 1 runs 4X EDR to Hca1's port 1 (LID 2, 4X or 12X and EDR or
// HDR supported), port 2 is down with nothing there, port 3 is up with
// its far end unknown, and port 4 is front-panel port 7, disabled.
func linkLineFabric() *Node {
	sw := &Node{GUID: 0x200000, Type: mad.NodeTypeSwitch, NumPorts: 4, Ports: make([]*Port, 5), SMALID: 1, Desc: "Switch1"}
	up := mad.PortInfo{LinkState: 4, PhysLinkState: 5, LinkWidthActive: 2, LinkWidthSupported: 3, LinkSpeedActive: 1,
		LinkSpeedSupported: 1, LinkSpeedExtActive: 2, LinkSpeedExtSupported: 3, HOQLife: 16, VLStallCount: 7}
	down := mad.PortInfo{LinkState: 1, PhysLinkState: 3}
	sw.Ports[0] = &Port{Node: sw, Num: 0, GUID: 0x200000, BaseLID: 1, Info: &mad.PortInfo{CapabilityMask: mad.PortCapIsExtendedSpeedsSupported}}
	for num, pi := range map[int]mad.PortInfo{1: up, 2: down, 3: up, 4: down} {
		sw.Ports[num] = &Port{Node: sw, Num: num, GUID: 0x200000, BaseLID: 1, Info: &pi}
	}
	sw.Ports[4].ExtNum = 7
	ca := &Node{GUID: 0x100000, Type: mad.NodeTypeCA, NumPorts: 1, Ports: make([]*Port, 2), Desc: "Hca1"}
	caInfo := up
	caInfo.CapabilityMask = mad.PortCapIsExtendedSpeedsSupported
	caInfo.LinkWidthSupported, caInfo.LinkSpeedExtSupported = 7, 7
	ca.Ports[1] = &Port{Node: ca, Num: 1, GUID: 0x100001, BaseLID: 2, Info: &caInfo, Remote: sw.Ports[1]}
	sw.Ports[1].Remote = ca.Ports[1]
	return sw
}

func TestLinkLineAppendPort(t *testing.T) {
	sw := linkLineFabric()
	ca := sw.Ports[1].Remote.Node
	tests := []struct {
		name string
		l    LinkLine
		p    *Port
		want string
	}{
		{"switch port", LinkLine{}, sw.Ports[1],
			"                1    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       2    1[  ] \"Hca1\" ( )\n"},
		{"CA port, one line, additional", LinkLine{OneLine: true, Additional: true}, ca.Ports[1],
			"     0x0000000000100001 \"                          Hca1\"      2    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp) (HOQ:16 VL_Stall:7)==>  0x0000000000200000      1    1[  ] \"Switch1\" ( )\n"},
		{"down", LinkLine{}, sw.Ports[2],
			"                1    2[  ] ==(                Down/Disabled)==>             [  ] \"\" ( )\n"},
		{"far end unknown", LinkLine{}, sw.Ports[3],
			"                1    3[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>      \"Port not available\"\n"},
		{"front panel port", LinkLine{}, sw.Ports[4],
			"                1    4[ 7] ==(                Down/Disabled)==>             [  ] \"\" ( )\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, string(tt.l.AppendPort(nil, tt.p, "     "))); diff != "" {
				t.Errorf("unexpected line (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPortCouldBe(t *testing.T) {
	sw := linkLineFabric()
	ca := sw.Ports[1].Remote
	ca.Info.LinkWidthSupported, ca.Info.LinkSpeedExtSupported = 7, 3
	tests := []struct {
		name              string
		widths            mad.LinkWidthSupported
		extSpeeds         mad.LinkSpeedExtSupported
		wantWidth, wantSp string
	}{
		{"at its best", 3, 3, "", ""},
		{"could be wider", 7, 3, "Could be 8X", ""},
		{"could be faster", 3, 7, "", "Could be 53.125 Gbps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sw.Ports[1].Info.LinkWidthSupported, sw.Ports[1].Info.LinkSpeedExtSupported = tt.widths, tt.extSpeeds
			ca.Info.LinkWidthSupported, ca.Info.LinkSpeedExtSupported = 7, 7
			w, s := sw.Ports[1].CouldBe()
			if diff := cmp.Diff([2]string{tt.wantWidth, tt.wantSp}, [2]string{w, s}); diff != "" {
				t.Errorf("unexpected width and speed messages (-want +got):\n%s", diff)
			}
		})
	}
	if got := sw.Ports[1].SpeedText(); got != "25.78125 Gbps" {
		t.Errorf("SpeedText %q", got)
	}
	if got := sw.Ports[1].PeerLID(); got != 1 {
		t.Errorf("PeerLID %d, want 1", got)
	}
}
