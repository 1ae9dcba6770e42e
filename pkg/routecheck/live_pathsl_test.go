package routecheck

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// TestPathSLsOf turns a CA port's PathRecords into path SLs, one for each
// LID of a destination with LMC 1.
func TestPathSLsOf(t *testing.T) {
	ff, err := subnettest.FromNet("Switch 8 \"S\"\n[1] \"H1\"[1]\n[2] \"H2\"[1]\n\nHca 1 \"H1\"\n[1] \"S\"[1]\n\nHca 1 \"H2\"\n[1] \"S\"[2]\n", "H1")
	if err != nil {
		t.Fatal(err)
	}
	x := madrpc.NewTransactor(ff.Transport(), madrpc.TransactorOptions{Timeout: 20 * time.Millisecond})
	defer x.Close()
	sub, err := subnet.Discover(context.Background(), x, subnet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var h1, h2 *subnet.Port
	for _, n := range sub.Nodes {
		switch n.Desc {
		case "H1":
			h1 = n.Ports[1]
		case "H2":
			h2 = n.Ports[1]
		}
	}
	h2.LMC = 1 // H2's LIDs: its base and the one above
	rec := func(dlid uint16, sl uint8) []byte {
		b, err := (&mad.PathRecord{DLID: dlid, SL: sl}).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	got, err := pathSLsOf(h1, [][]byte{rec(uint16(h1.BaseLID), 0), rec(uint16(h2.BaseLID), 3)}, sub)
	if err != nil {
		t.Fatal(err)
	}
	src := uint64(h1.Node.GUID)
	want := []PathSL{{src, int(h1.BaseLID), 0}, {src, int(h2.BaseLID), 3}, {src, int(h2.BaseLID) + 1, 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected path SLs (-want +got):\n%s", diff)
	}
	if _, err := pathSLsOf(h1, [][]byte{{1, 2}}, sub); err == nil {
		t.Error("a short record: no error")
	}
	// the fake has no SA: every CA port's query fails, and says which
	sls, errs := readPathSLs(context.Background(), x, []*subnet.Node{h1.Node, h2.Node}, sub, 0)
	var pe *PathSLReadError
	if len(sls) != 0 || len(errs) != 2 || !errors.As(errs[0], &pe) || pe.Port != h1 {
		t.Errorf("without an SA: %v, %v", sls, errs)
	}
}
