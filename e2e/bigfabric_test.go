package e2e

import (
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// bigFabric is a 3-level fat tree of 36-port switches: 1,000 hosts and
// 1,125 nodes in all.
func bigFabric(t *testing.T) *simfabric.Fabric {
	t.Helper()
	if testing.Short() {
		t.Skip("big fabric: not with -short")
	}
	net, err := simfabric.FatTree(simfabric.FatTreeSpec{Levels: 3, Hosts: 1000, Radix: 36})
	if err != nil {
		t.Fatal(err)
	}
	return simfabric.ForTest(t, simfabric.Options{Net: net})
}

// TestBigFabricMatchesReference runs the fabric-wide tools on a
// 1,000-host fat tree and on a 200-host one.
func TestBigFabricMatchesReference(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(t *testing.T) *simfabric.Fabric
		host string
	}{
		{"1000 hosts", bigFabric, "H-0001"},
		{"200 hosts", func(t *testing.T) *simfabric.Fabric {
			net, err := simfabric.FatTree(simfabric.FatTreeSpec{Levels: 2, Hosts: 200, Radix: 36})
			if err != nil {
				t.Fatal(err)
			}
			return simfabric.ForTest(t, simfabric.Options{Net: net})
		}, "H-0100"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := c.f(t)
			for _, args := range [][]string{
				{"ibnetdiscover"}, {"ibnetdiscover", "-p"}, {"ibnetdiscover", "-s"}, {"ibnetdiscover", "-g"},
				{"ibhosts"}, {"ibswitches"}, {"iblinkinfo"}, {"iblinkinfo", "-l", "--switches-only"},
				{"dump_lfts"}, {"dump_mfts", "-a", "0xc000", "0xc004"},
			} {
				t.Run(strings.Join(args, " "), func(t *testing.T) {
					sameAsReferenceMasked(t, f, maskTopology, c.host, args[0], args[1:]...)
				})
			}
			t.Run("ibqueryerrors", func(t *testing.T) {
				sameFindings(t, f, c.host, func() {}, 0, "-c")
			})
			// The SA's tables span hundreds of RMPP segments here.
			for _, args := range [][]string{{"saquery"}, {"saquery", "-x"}, {"saquery", "-D"}, {"saquery", "SWIR"},
				{"saquery", "LFTR"}, {"saquery", "GIR"}, {"saquery", "SL2VL", "1"}, {"saquery", "VLAR", "1"},
				{"saquery", "MCMR"}, {"saquery", "-g"}, {"saquery", "-m"}, {"saquery", "CPI"}, {"saquery", "-s"},
				{"saquery", "--src-to-dst", "1:2"}} {
				t.Run(strings.Join(args, " "), func(t *testing.T) {
					sameAsReference(t, f, c.host, args[0], args[1:]...)
				})
			}
			t.Run("saquery PIR", func(t *testing.T) { compareExit(t, f, c.host, 0, "saquery", "PIR") })
			t.Run("ibnetdiscover --discovery sa", func(t *testing.T) {
				sameOutput(t, f, c.host, maskTopology, []string{"ibnetdiscover"}, []string{"ibnetdiscover", "--discovery", "sa"})
			})
			t.Run("cache", func(t *testing.T) {
				ref, _ := writeCaches(t, f, c.host)
				sameAsReferenceMasked(t, f, maskTopology, c.host, "ibnetdiscover", "--load-cache", ref, "-p")
			})
		})
	}
}
