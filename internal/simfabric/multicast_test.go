package simfabric

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// TestIntegrationMulticastJoin joins two hosts to a group and checks that
// opensm routed it (the switches' MFTs carry the MLID, the SA lists the
// members), then leaves it again.
func TestIntegrationMulticastJoin(t *testing.T) {
	f := StartForTest(t, Options{NetFile: smallNet})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mgid, err := rdma.ParseGID("ff12:601b:ffff::1:2")
	if err != nil {
		t.Fatal(err)
	}
	mlid, err := f.JoinMulticast(ctx, "Hca1", mgid)
	if err != nil {
		t.Fatal(err)
	}
	if mlid < 0xc000 {
		t.Fatalf("MLID %#x, want a multicast LID", mlid)
	}
	again, err := f.JoinMulticast(ctx, "Hca3", mgid)
	if err != nil || again != mlid {
		t.Fatalf("second join: MLID %#x, %v; want %#x", again, err, mlid)
	}
	if err := f.WaitMulticast(ctx, "Hca1", 1, mlid); err != nil {
		t.Fatal(err)
	}
	out, _, _, err := f.RunReference(ctx, "Hca1", "saquery", "--smkey", "1", "MCMR")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "ff12:601b:ffff::1:2"); n != 2 {
		t.Errorf("saquery MCMR lists the group %d times, want 2 members:\n%s", n, out)
	}
	for _, h := range []string{"Hca1", "Hca3"} {
		if err := f.LeaveMulticast(ctx, h, mgid); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.LeaveMulticast(ctx, "Hca1", mgid); err == nil || !strings.Contains(err.Error(), "ERR_") {
		t.Errorf("leaving a group not joined: %v, want an SA status error", err)
	}
}
