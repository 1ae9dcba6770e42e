package cmd

import (
	"os"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// routeFake is ibsim's two-switch example on the in-memory fabric with
// its forwarding tables filled: every LID routed by a shortest path, and
// MLID 0xc000 joined by the four HCAs. The LIDs are Switch1 1, Switch2 2,
// Hca1 3-4, Hca2 5-6, Hca3 7-8, Hca4 9-10.
func routeFake(t *testing.T) *subnettest.Fabric {
	t.Helper()
	data, err := os.ReadFile("../internal/simfabric/testdata/net.2sw2path4hca")
	if err != nil {
		t.Fatal(err)
	}
	ff, err := subnettest.FromNet(string(data), "Hca1")
	if err != nil {
		t.Fatal(err)
	}
	ff.Route()
	ff.Node("Switch1").Join(0xc000, 1, 2, 3)
	ff.Node("Switch2").Join(0xc000, 1, 2, 3)
	return ff
}

// fakeTransactor returns a transactor on the fake fabric.
func fakeTransactor(ff *subnettest.Fabric) func() (*mad.Transactor, error) {
	return func() (*mad.Transactor, error) {
		return mad.NewTransactor(ff.Transport(), mad.TransactorOptions{Timeout: 50 * time.Millisecond, Retries: 1}), nil
	}
}

// runWith runs a tool's command on args with runF replacing its run
// function (which sets the fakes and runs the tool); it returns stdout,
// stderr and the error.
func runWith[O any](t *testing.T, newCmd func(*Factory, func(*O) error) *cobra.Command, runF func(*O) error, args ...string) (string, string, error) {
	t.Helper()
	f, out, errOut := testFactory(nil)
	c := newCmd(f, runF)
	if args == nil {
		args = []string{}
	}
	c.SetArgs(args)
	c.SetOut(out)
	c.SetErr(errOut)
	c.SilenceErrors, c.SilenceUsage = true, true
	err := c.Execute()
	return out.String(), errOut.String(), err
}
