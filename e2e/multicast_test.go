package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// multicastFabric starts a two-switch fabric of its own (the joins change
// its state) with Hca1, Hca2 and Hca4 full members of one multicast group,
// routed by opensm, and returns the group's MLID.
func multicastFabric(t *testing.T) (*simfabric.Fabric, uint16) {
	t.Helper()
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mgid, err := rdma.ParseGID("ff12:601b:ffff::1:5")
	if err != nil {
		t.Fatal(err)
	}
	var mlid uint16
	for _, h := range []string{"Hca1", "Hca2", "Hca4"} {
		if mlid, err = f.JoinMulticast(ctx, h, mgid); err != nil {
			t.Fatal(err)
		}
	}
	// LIDs: Switch1 1, Hca1 2, Switch2 3, Hca2 4, Hca3 5, Hca4 6.
	for _, sw := range []int{1, 3} {
		if err := f.WaitMulticast(ctx, "Hca1", sw, mlid); err != nil {
			t.Fatal(err)
		}
	}
	return f, mlid
}

// TestMulticastMatchesReference compares ibtracert -m, ibroute -M and
// dump_mfts with infiniband-diags on a fabric whose switches carry the
// multicast entries opensm programmed for a joined group.
func TestMulticastMatchesReference(t *testing.T) {
	f, mlid := multicastFabric(t)
	m := fmt.Sprintf("%#x", mlid)
	for _, h := range []string{"Hca1", "Switch2"} {
		for _, a := range [][]string{
			{"-m", m, "2", "4"}, {"-m", m, "2", "6"}, {"-m", m, "4", "2"}, {"-m", m, "6", "4"},
			{"-n", "-m", m, "2", "4"}, {"-m", m, "2", "3"}, {"-m", m, "1", "6"}, {"-m", m, "3", "2"},
			{"-G", "-m", m, "0x100001", "0x10000a"},
		} {
			t.Run(h+" ibtracert "+strings.Join(a, " "), func(t *testing.T) {
				sameAsReference(t, f, h, "ibtracert", a...)
			})
		}
	}
	for _, a := range [][]string{{"-M", "1"}, {"-M", "3"}, {"-M", "-n", "3"}, {"-a", "-M", "1", m, m}} {
		t.Run("ibroute "+strings.Join(a, " "), func(t *testing.T) {
			sameAsReference(t, f, "Hca1", "ibroute", a...)
		})
	}
	for _, a := range [][]string{{}, {"-a"}, {"-n"}} {
		t.Run("dump_mfts "+strings.Join(a, " "), func(t *testing.T) {
			sameAsReference(t, f, "Hca1", "dump_mfts", a...)
		})
	}
	t.Run("dump_mfts --discovery sa", func(t *testing.T) {
		// The MFT blocks from the SA's MFTRecords, the rest by SMP.
		sameOutput(t, f, "Hca1", func(b []byte) []byte { return b }, []string{"dump_mfts"}, []string{"dump_mfts", "--discovery", "sa"})
	})
	t.Run("saquery MCMR", func(t *testing.T) {
		sameAsReference(t, f, "Hca1", "saquery", "--smkey", "1", "MCMR")
	})
}

// TestMulticastTraceErrors checks ibtracert -m where the group does not
// reach the destination, and bad MLIDs.
func TestMulticastTraceErrors(t *testing.T) {
	f, mlid := multicastFabric(t)
	m := fmt.Sprintf("%#x", mlid)
	tests := []struct {
		exit int
		msg  string
		args []string
	}{
		// Hca3 is no member: no MFT entry leads to it.
		{3, fmt.Sprintf("no multicast route of MLID %s reaches the destination port 0x0000000000100007", m), []string{"-m", m, "2", "5"}},
		{3, "no multicast route of MLID 0xc0ff", []string{"-m", "0xc0ff", "2", "4"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			failsCleanly(t, f, "Hca1", tt.exit, tt.msg, "ibtracert", tt.args...)
		})
	}
	for _, bad := range []string{"0x10", "49152x", "0x10000"} {
		t.Run("-m "+bad, func(t *testing.T) {
			ibtoolFails(t, f, "Hca1", 2, "ibtracert: -m "+bad, "ibtracert", "-m", bad, "2", "4")
		})
	}
}

// TestFatTreeMulticastTrace traces a group joined by hosts on three
// leaves of a fat tree with LMC 1, up to a spine and down again.
func TestFatTreeMulticastTrace(t *testing.T) {
	net, err := simfabric.FatTree(simfabric.FatTreeSpec{Levels: 2, Hosts: 48, Radix: 36})
	if err != nil {
		t.Fatal(err)
	}
	f := simfabric.StartForTest(t, simfabric.Options{Net: net, OpenSMArgs: []string{"--lmc", "1"}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mgid, err := rdma.ParseGID("ff12:401b:ffff::42")
	if err != nil {
		t.Fatal(err)
	}
	hosts := []string{"H-0001", "H-0005", "H-0020", "H-0040"}
	lids := map[string]string{}
	var mlid uint16
	for _, h := range hosts {
		if mlid, err = f.JoinMulticast(ctx, h, mgid); err != nil {
			t.Fatal(err)
		}
		out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, h, "ibaddr", "-L")
		if err != nil || exit != 0 {
			t.Fatalf("ibaddr -L at %s: exit %d, %v: %s", h, exit, err, errOut)
		}
		lids[h] = strings.Fields(string(out))[2] // "LID start N end M"
	}
	// Wait until the last member's leaf switch carries the group.
	out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "H-0040", "ibaddr", "-L", "0,1")
	if err != nil || exit != 0 {
		t.Fatalf("ibaddr of H-0040's leaf: exit %d, %v: %s", exit, err, errOut)
	}
	leaf, _ := strconv.Atoi(strings.Fields(string(out))[2])
	if err := f.WaitMulticast(ctx, "H-0040", leaf, mlid); err != nil {
		t.Fatal(err)
	}
	m := fmt.Sprintf("%#x", mlid)
	for _, a := range [][]string{
		{"-m", m, lids["H-0001"], lids["H-0040"]}, {"-m", m, lids["H-0040"], lids["H-0020"]},
		{"-m", m, lids["H-0001"], lids["H-0005"]}, {"-n", "-m", m, lids["H-0020"], lids["H-0001"]},
	} {
		t.Run("ibtracert "+strings.Join(a, " "), func(t *testing.T) {
			sameAsReference(t, f, "H-0001", "ibtracert", a...)
		})
	}
	t.Run("dump_mfts", func(t *testing.T) { sameAsReference(t, f, "H-0001", "dump_mfts") })
}
