package fabric

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// portSet is one SubnSet(PortInfo) a fake received: the directed route,
// the port and the states set.
type portSet struct {
	Path            string
	Port            uint32
	LinkState       mad.PortState
	PhysLinkState   mad.PhysPortState
	SpeedWidthUnset bool // LinkSpeedEnabled and LinkWidthEnabled 0
}

// portStateFake answers PortInfo Gets with dryRunPortInfo and records
// the Sets; nothing answers at the directed route dead.
type portStateFake struct {
	dead string
	mu   sync.Mutex
	sets []portSet
}

func (ff *portStateFake) handle(req *mad.Packet) []mad.Packet {
	var h mad.Header
	var dr mad.DRSMPHeader
	if h.UnmarshalBinary(req.MAD) != nil || dr.UnmarshalBinary(req.MAD) != nil || h.AttrID != mad.AttrPortInfo {
		return nil
	}
	path := subnet.FormatPath(dr.InitialPath[:dr.HopCount+1])
	if path == ff.dead {
		return nil
	}
	pi := cmdtest.DryRunPortInfo
	if h.Method == mad.MethodSet {
		if err := pi.UnmarshalBinary(req.MAD[mad.SMPDataOffset:]); err != nil {
			return nil
		}
		ff.mu.Lock()
		ff.sets = append(ff.sets, portSet{Path: path, Port: h.AttrMod,
			LinkState: pi.LinkState, PhysLinkState: pi.PhysLinkState,
			SpeedWidthUnset: pi.LinkSpeedEnabled == 0 && pi.LinkWidthEnabled == 0})
		ff.mu.Unlock()
	}
	data, _ := pi.MarshalBinary()
	return []mad.Packet{madtest.Reply(req, 0, mad.SMPDataOffset, data)}
}

func (ff *portStateFake) transactor() (*madrpc.Transactor, error) {
	return madrpc.NewTransactor(madtest.New(ff.handle), madrpc.TransactorOptions{Timeout: 50 * time.Millisecond, Retries: 1}), nil
}

// TestParsePortTarget parses TARGET@PORT arguments; -L, -G and -D
// (python-rdma's) assert each TARGET's kind.
func TestParsePortTarget(t *testing.T) {
	tests := []struct {
		args     []string
		wantKind endport.Kind
		wantPort int
		wantErr  string
	}{
		{args: []string{"0,1,3@5"}, wantKind: endport.DirectRoute, wantPort: 5},
		{args: []string{"12"}, wantKind: endport.LID, wantPort: -1},
		{args: []string{"0x0002c90200401234@12"}, wantKind: endport.GUID, wantPort: 12},
		{args: []string{"12@x"}, wantErr: "x"},
		{args: []string{"zz@1"}, wantErr: "zz"},
		{args: []string{"-D", "0,1,3@5"}, wantKind: endport.DirectRoute, wantPort: 5},
		{args: []string{"--Lid", "12@1"}, wantKind: endport.LID, wantPort: 1},
		{args: []string{"-G", "0x0002c90200401234@12"}, wantKind: endport.GUID, wantPort: 12},
		{args: []string{"-L", "0,1@2"}, wantErr: `"0,1"`},
		{args: []string{"--Direct", "12@1"}, wantErr: `"12"`},
		{args: []string{"--Guid", "12@1"}, wantErr: `"12"`},
	}
	for _, tt := range tests {
		var got *setPortStateOptions
		err := cmdtest.ParseToolArgs(t, "set_port_state", func(f *cmdutil.Factory) *cobra.Command {
			return newSetPortStateCmd(f, func(o *setPortStateOptions) error { got = o; return nil })
		}, append([]string{"--init"}, tt.args...))
		if !cmdtest.CheckParseErr(t, err, tt.wantErr) {
			continue
		}
		if diff := cmp.Diff([2]any{tt.wantKind, tt.wantPort}, [2]any{got.Targets[0].Target.Kind, got.Targets[0].Port}); diff != "" {
			t.Errorf("%q: unexpected kind and port (-want +got):\n%s", tt.args, diff)
		}
	}
}

// TestSetPortStateRun sets ports of dryRunFakeFabric: each Set goes by a
// route that avoids the links changed, with the states asked and the
// enabled speeds and widths left alone.
func TestSetPortStateRun(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantSets []portSet
		wantErr  string
	}{
		{name: "disable switch port", args: []string{"--disable", "0,1@2"},
			wantSets: []portSet{{Path: "0,1", Port: 2, PhysLinkState: mad.PhysPortStateDisabled, SpeedWidthUnset: true}}},
		{name: "enable", args: []string{"--enable", "0,1@2"},
			wantSets: []portSet{{Path: "0,1", Port: 2, PhysLinkState: mad.PhysPortStatePolling, SpeedWidthUnset: true}}},
		{name: "init", args: []string{"--init", "0,1@2"},
			wantSets: []portSet{{Path: "0,1", Port: 2, LinkState: mad.PortStateDown, SpeedWidthUnset: true}}},
		{name: "disable and init", args: []string{"--disable", "--init", "0,1@2"},
			wantSets: []portSet{{Path: "0,1", Port: 2, LinkState: mad.PortStateDown, PhysLinkState: mad.PhysPortStateDisabled, SpeedWidthUnset: true}}},
		{name: "CA behind the link", args: []string{"--init", "0,1,2"}, wantErr: "try its peer 0x0000000000200000 port 2"},
		{name: "switch port needed", args: []string{"--init", "0,1"}, wantErr: "need a port number"},
		{name: "no such port", args: []string{"--init", "0,1@9"}, wantErr: "has no port 9"},
		{name: "not in the subnet", args: []string{"--init", "0,4"}, wantErr: "could not find"},
		{name: "no route around", args: []string{"--disable", "0,1@1"}, wantErr: "no directed route"},
		{name: "nothing to do", args: []string{"0,1@1"}, wantErr: "nothing to do"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ff := &portStateFake{}
			_, errOut, err := runWith(t, newSetPortStateCmd, func(o *setPortStateOptions) error {
				o.Discover = func() (*subnet.Fabric, error) { return cmdtest.DryRunFakeFabric(), nil }
				o.Common.Open = cmdtest.NoPort(ff.transactor)
				return setPortStateRun(o)
			}, tt.args...)
			if !wantRunErr(t, err, errOut, tt.wantErr) {
				return
			}
			if diff := cmp.Diff(tt.wantSets, ff.sets); diff != "" {
				t.Errorf("unexpected Sets (-want +got):\n%s", diff)
			}
		})
	}
}
