package route

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// TestMcastPorts reads the ports a switch of the fake forwards MLIDs to:
// port 0 is never one, an MLID past the table is an error.
func TestMcastPorts(t *testing.T) {
	data, err := os.ReadFile("../../internal/simfabric/testdata/net.2sw2path4hca")
	if err != nil {
		t.Fatal(err)
	}
	ff, err := subnettest.FromNet(string(data), "Hca1")
	if err != nil {
		t.Fatal(err)
	}
	ff.Route()
	ff.Node("Switch1").Join(0xc000, 1, 2, 3)
	ff.Node("Switch1").Join(0xc001, 0, 2)
	ff.Node("Switch1").Join(0xc021, 8) // the second block
	x := madrpc.NewTransactor(ff.Transport(), madrpc.TransactorOptions{Timeout: 50 * time.Millisecond, Retries: 1})
	defer x.Close()
	ctx := context.Background()
	tr := &Tracer{X: x}
	sw, err := tr.Node(ctx, mad.DRPath(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	n := &McastHop{Node: *sw, Path: mad.DRPath(0, 1)}
	tests := []struct {
		mlid    int
		want    []int
		wantErr string
	}{
		{mlid: 0xc000, want: []int{1, 2, 3}},
		{mlid: 0xc001, want: []int{2}},
		{mlid: 0xc002},
		{mlid: 0xc021, want: []int{8}},
		{mlid: 0xc000 + 0x200, wantErr: "MLID 0xc200 is beyond its multicast table (capability 512)"},
	}
	for _, tt := range tests {
		got, err := tr.mcastPorts(ctx, n, tt.mlid)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("MLID %#x: error %v, want %q", tt.mlid, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("MLID %#x: %v", tt.mlid, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("MLID %#x: unexpected ports (-want +got):\n%s", tt.mlid, diff)
		}
	}
}
