package fabric

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
)

func TestActivePorts(t *testing.T) {
	fab := cmdtest.DryRunFakeFabric()
	// Hca2's port 2 has no link: leave it out, and make the switch's
	// port 1 Armed, which is reset too.
	fab.Nodes[2].Ports[2] = nil
	armed := cmdtest.DryRunPortInfo
	armed.LinkState = mad.PortStateArmed
	fab.Nodes[1].Ports[1].Info = &armed
	var got [][]string
	for _, wave := range activePorts(fab) {
		var w []string
		for _, p := range wave {
			w = append(w, p.Node.GUID.String()+"/"+string(rune('0'+p.Num)))
		}
		got = append(got, w)
	}
	want := [][]string{
		{"0x0000000000300000/1"},
		{"0x0000000000200000/1", "0x0000000000200000/2"},
		{"0x0000000000100000/1"},
	}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("unexpected waves (-want +got):\n%s", diff)
	}
}

// TestInitAllPortsRun resets every active port of dryRunFakeFabric, the
// farthest first, each by its node's directed route.
func TestInitAllPortsRun(t *testing.T) {
	ff := &portStateFake{}
	_, errOut, err := runWith(t, newInitAllPortsCmd, func(o *initAllPortsOptions) error {
		o.Discover = func() (*subnet.Fabric, error) { return cmdtest.DryRunFakeFabric(), nil }
		o.Common.Open = cmdtest.NoPort(ff.transactor)
		return initAllPortsRun(o)
	}, "-v")
	if err != nil {
		t.Fatalf("%v\nstderr: %s", err, errOut)
	}
	set := func(path string, port uint32) portSet {
		return portSet{Path: path, Port: port, LinkState: mad.PortStateDown, SpeedWidthUnset: true}
	}
	want := []portSet{set("0,1,2", 1), set("0,1", 1), set("0,1", 2), set("0", 1)}
	// Within a wave the Sets go out together.
	sortWave := cmpopts.SortSlices(func(a, b portSet) bool { return a.Path+string(rune(a.Port)) < b.Path+string(rune(b.Port)) })
	if diff := cmp.Diff(want[1:3], ff.sets[1:3], sortWave); diff != "" {
		t.Errorf("unexpected second wave (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]portSet{want[0], want[3]}, []portSet{ff.sets[0], ff.sets[3]}); diff != "" {
		t.Errorf("unexpected first and last Sets (-want +got):\n%s", diff)
	}
	if n := strings.Count(errOut, "set to Down via DR path"); n != 4 {
		t.Errorf("-v said %d ports reset, want 4:\n%s", n, errOut)
	}
}

// TestInitAllPortsFailures: a port whose Set gets no answer is reported,
// the others are still reset, and the exit status is a failure.
func TestInitAllPortsFailures(t *testing.T) {
	ff := &portStateFake{dead: "0,1,2"}
	_, errOut, err := runWith(t, newInitAllPortsCmd, func(o *initAllPortsOptions) error {
		fab := cmdtest.DryRunFakeFabric()
		o.Discover = func() (*subnet.Fabric, error) { return fab, nil }
		o.Common.Open = cmdtest.NoPort(ff.transactor)
		return initAllPortsRun(o)
	})
	if err == nil || !strings.Contains(err.Error(), "1 ports could not be set") || cmdutil.ExitCode(err) != cmdutil.ExitFailure {
		t.Errorf("error %v (exit %d), want 1 port failed", err, cmdutil.ExitCode(err))
	}
	if !strings.Contains(errOut, "failed to set port state on 0x0000000000300000 port 1 via DR path 0,1,2") {
		t.Errorf("stderr does not name the port: %s", errOut)
	}
	if len(ff.sets) != 3 {
		t.Errorf("%d Sets answered, want 3", len(ff.sets))
	}
}
