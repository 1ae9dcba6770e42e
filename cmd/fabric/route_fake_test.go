package fabric

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// routeFake is ibsim's two-switch example on the in-memory fabric with
// its forwarding tables filled: every LID routed by a shortest path, and
// MLID 0xc000 joined by the four HCAs. The LIDs are Switch1 1, Switch2 2,
// Hca1 3-4, Hca2 5-6, Hca3 7-8, Hca4 9-10.
func routeFake(t *testing.T) *subnettest.Fabric {
	t.Helper()
	var ff *subnettest.Fabric
	fakeTwoSwitches(t, func(f *subnettest.Fabric) { ff = f })
	ff.Route()
	ff.Node("Switch1").Join(0xc000, 1, 2, 3)
	ff.Node("Switch2").Join(0xc000, 1, 2, 3)
	return ff
}

// fakeTransactor returns a transactor on the fake fabric.
func fakeTransactor(ff *subnettest.Fabric) func() (*madrpc.Transactor, error) {
	return func() (*madrpc.Transactor, error) {
		return madrpc.NewTransactor(ff.Transport(), madrpc.TransactorOptions{Timeout: 50 * time.Millisecond, Retries: 1}), nil
	}
}

// runWith runs a tool's command as the registry builds it, on args, with
// runF replacing its run function (runF sets the fakes and runs the
// tool); it returns stdout, stderr and the error.
func runWith[O any](t *testing.T, newCmd func(*cmdutil.Factory, func(*O) error) *cobra.Command, runF func(*O) error, args ...string) (string, string, error) {
	t.Helper()
	f, out, errOut := cmdutil.NewTestFactory(nil)
	c := cmdutil.ToolCommand(f, cmdutil.Tool{Name: "test", New: func(f *cmdutil.Factory) *cobra.Command { return newCmd(f, runF) }})
	c.SetArgs(append([]string{}, args...)) // never nil: cobra would read os.Args
	c.SetOut(out)
	c.SetErr(errOut)
	err := c.Execute()
	return out.String(), errOut.String(), err
}

// wantRunErr checks a run's error against wantErr, a part of its text
// ("": no error); it reports whether the case goes on to check the
// output.
func wantRunErr(t *testing.T, err error, errOut, wantErr string) bool {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("error %v, want one containing %q", err, wantErr)
		}
		return false
	}
	if err != nil {
		t.Fatalf("%v\nstderr: %s", err, errOut)
	}
	return true
}
