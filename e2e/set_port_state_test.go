package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// TestSetPortState refuses a change no route reaches, then disables a
// link between the switches by a route that does not cross it and enables
// it again.
func TestSetPortState(t *testing.T) {
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	ctx := context.Background()
	// The refusals first, while every link is up.
	t.Run("no route", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 3, "no directed route to 0x0000000000200001 port 1 that avoids the links changed",
			"set_port_state", "--disable", "0,1@3", "0,1@5", "0,1,3@1")
	})
	t.Run("switch without port", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 2, "need a port number for switch 0x0000000000200001", "set_port_state", "--disable", "0,1,3")
	})
	t.Run("nothing to do", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 2, "nothing to do", "set_port_state", "0,1,3@5")
	})
	linkLine := func(port string) string {
		t.Helper()
		out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "iblinkinfo", "-D", "0,1,3")
		if err != nil || exit != 0 {
			t.Fatalf("iblinkinfo: exit %d, %v, %s", exit, err, errOut)
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, port+"[  ] ==") {
				return l
			}
		}
		t.Fatalf("no line for port %s in:\n%s", port, out)
		return ""
	}
	if l := linkLine("   5"); !strings.Contains(l, "Active/  LinkUp") {
		t.Fatalf("Switch2 port 5 before: %q", l)
	}
	if out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "set_port_state", "--disable", "0,1,3@5"); err != nil || exit != 0 {
		t.Fatalf("--disable: exit %d, %v, %s%s", exit, err, out, errOut)
	}
	// ibsim keeps the PortState and shows the physical state Disabled.
	if l := linkLine("   5"); !strings.Contains(l, "/Disabled)") {
		t.Errorf("Switch2 port 5 after --disable: %q", l)
	}
	// The walk cannot cross the disabled link: a warning, not a failure.
	if out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "set_port_state", "--enable", "0,1,3@5"); err != nil || exit != 0 {
		t.Fatalf("--enable: exit %d, %v, %s%s", exit, err, out, errOut)
	}
	// ibsim leaves an enabled port Polling (infiniband-diags'
	// ibportstate enable does the same there); hardware would train.
	if l := linkLine("   5"); !strings.Contains(l, "/ Polling)") {
		t.Errorf("Switch2 port 5 after --enable: %q", l)
	}
}
