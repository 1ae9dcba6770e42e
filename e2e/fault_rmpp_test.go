package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// rmppLossRate is the percentage of MADs the fault tests drop: enough
// that a table of hundreds of RMPP segments loses ACKs in every transfer.
const rmppLossRate = 30

// rmppFaultCheck is one tool run over and over under the drops.
type rmppFaultCheck struct {
	args []string
	// runs, and how many of them must give the fault-free output.
	runs, need int
	mask       func([]byte) []byte
}

// TestRMPPUnderLoss: with 30% of the MADs dropped on the way to the SA,
// either at the SM's switch or at every spine's port toward the querying
// hosts' leaf (ibsim returns each MAD it drops to its sender, ACKs of RMPP
// transfers included), saquery and the --discovery sa tools give the
// fault-free output in at least 9 runs of 10 on a 200-host fat tree.
// ibqueryerrors suppresses PortRcvErrors, which the drops count on the
// lossy ports. Runs go four at a time, from four hosts of the leaf: most
// of a run under the drops is waiting (a lost request goes again after a
// quarter of the timeout).
func TestRMPPUnderLoss(t *testing.T) {
	net, err := simfabric.FatTree(simfabric.FatTreeSpec{Levels: 2, Hosts: 200, Radix: 24})
	if err != nil {
		t.Fatal(err)
	}
	f := simfabric.StartForTest(t, simfabric.Options{Net: net})
	const leaf = "S-leaf-01"
	hosts := []string{"H-0001", "H-0004", "H-0007", "H-0010"} // on S-leaf-01
	var smPorts, spinePorts []simfabric.PortRef
	for _, n := range f.Net().Nodes {
		for _, l := range n.Links {
			if n.ID == f.SMNode() {
				smPorts = append(smPorts, simfabric.Port(n.ID, l.Port))
			}
			if strings.HasPrefix(n.ID, "S-spine-") && l.RemoteID == leaf {
				spinePorts = append(spinePorts, simfabric.Port(n.ID, l.Port))
			}
		}
	}
	if len(smPorts) == 0 || len(spinePorts) != 12 {
		t.Fatalf("SM %q with ports %v, spine ports toward %s %v", f.SMNode(), smPorts, leaf, spinePorts)
	}
	var checks []rmppFaultCheck
	for _, rec := range []string{"NR", "PIR", "LR", "SWIR"} {
		checks = append(checks, rmppFaultCheck{args: []string{"saquery", rec}, runs: 10, need: 9})
	}
	for _, tool := range []string{"ibnetdiscover", "iblinkinfo", "dump_lfts"} {
		checks = append(checks, rmppFaultCheck{args: []string{tool, "--discovery", "sa"}, runs: 10, need: 9, mask: maskTopology})
	}
	checks = append(checks, rmppFaultCheck{args: []string{"ibqueryerrors", "--discovery", "sa", "-s", "PortRcvErrors"}, runs: 10, need: 9})

	// What each check prints from each host without drops (ibnetdiscover
	// and iblinkinfo start from the local port).
	ctx := context.Background()
	want := make([]map[string][]byte, len(checks))
	for i, c := range checks {
		want[i] = make(map[string][]byte)
		for _, host := range hosts {
			out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, host, c.args[0], c.args[1:]...)
			if err != nil || exit != 0 || len(out) == 0 {
				t.Fatalf("%s on %s without drops: exit %d, %v, %s", strings.Join(c.args, " "), host, exit, err, errOut)
			}
			want[i][host] = maskOr(c.mask, out)
		}
		if c.args[0] == "saquery" {
			ref, errOut, exit, err := f.RunReference(ctx, hosts[0], c.args[0], c.args[1:]...)
			if err != nil || exit != 0 || !bytes.Equal(ref, want[i][hosts[0]]) {
				t.Fatalf("%s without drops: infiniband-diags' (exit %d, %v, %s) differs:\n%s", strings.Join(c.args, " "), exit, err, errOut, simfabric.Diff(ref, want[i][hosts[0]]))
			}
		}
	}
	for _, pl := range []struct {
		name  string
		ports []simfabric.PortRef
	}{{"the SM's switch ports", smPorts}, {"the spines' ports toward the leaf", spinePorts}} {
		t.Run(pl.name, func(t *testing.T) {
			setErrorRates(t, f, pl.ports, rmppLossRate)
			defer setErrorRates(t, f, pl.ports, 0)
			for i, c := range checks {
				t.Run(strings.Join(c.args, " "), func(t *testing.T) {
					runUnderLoss(t, f, hosts, c, want[i])
				})
			}
		})
	}
}

// maskOr returns mask(b), or b when mask is nil.
func maskOr(mask func([]byte) []byte, b []byte) []byte {
	if mask == nil {
		return b
	}
	return mask(b)
}

// setErrorRates sets the error rate of every port in ports.
func setErrorRates(t *testing.T, f *simfabric.Fabric, ports []simfabric.PortRef, rate int) {
	t.Helper()
	for _, p := range ports {
		if err := f.SetErrorRate(context.Background(), p, rate, 0); err != nil {
			t.Fatal(err)
		}
	}
}

// runUnderLoss runs c.runs times, one at a time from each of hosts, and
// fails t unless c.need of them exit 0 with the host's output in want and
// nothing on stderr.
func runUnderLoss(t *testing.T, f *simfabric.Fabric, hosts []string, c rmppFaultCheck, want map[string][]byte) {
	var mu sync.Mutex
	ok := 0
	var fails []string
	var took []time.Duration
	next := make(chan int)
	var wg sync.WaitGroup
	for _, host := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				start := time.Now()
				out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, host, c.args[0], c.args[1:]...)
				d := time.Since(start)
				cancel()
				mu.Lock()
				took = append(took, d.Round(time.Millisecond))
				switch {
				case err != nil:
					fails = append(fails, fmt.Sprintf("%s: %v", host, err))
				case exit == 0 && len(errOut) == 0 && bytes.Equal(maskOr(c.mask, out), want[host]):
					ok++
				default:
					same := "the same"
					if !bytes.Equal(maskOr(c.mask, out), want[host]) {
						same = "different"
					}
					fails = append(fails, fmt.Sprintf("%s: exit %d after %v, stderr %q, %s output", host, exit, d.Round(time.Millisecond), errOut, same))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range c.runs {
		next <- i
	}
	close(next)
	wg.Wait()
	t.Logf("%d of %d runs whole; times %v", ok, c.runs, took)
	if ok < c.need {
		t.Errorf("%d of %d runs gave the fault-free output, want at least %d:\n%s", ok, c.runs, c.need, strings.Join(fails, "\n"))
	}
}
