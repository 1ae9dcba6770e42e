package fabric

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

func TestSubnetDiff(t *testing.T) {
	ref := fakeTwoSwitches(t, nil)
	var same bytes.Buffer
	writeSubnetDiff(&same, ref, ref)
	want := `Current subnet has 6 end ports, reference subnet has 6 end ports
 All end ports in the current subnet are in the reference subnet.
 All end ports in the reference subnet are in the current subnet.
Current subnet has 6 nodes, reference subnet has 6 nodes
 All nodes in the current subnet are in the reference subnet.
 All nodes in the reference subnet are in the current subnet.
Current subnet has 6 links, reference subnet has 6 links
 All links in the current subnet are in the reference subnet.
 All links in the reference subnet are in the current subnet.
 All links in the current subnet have the same rate in the reference subnet.
Current subnet has 6 LIDs, reference subnet has 6 LIDs
 All LIDs in the current subnet are the same as the reference subnet.
`
	if diff := cmp.Diff(want, same.String()); diff != "" {
		t.Errorf("same fabric (-want +got):\n%s", diff)
	}

	// Hca4 gone, Switch1's port 5 link down, Switch2's port 3 at DDR
	// (python-rdma reads a link's rate at its larger end).
	cur := fakeTwoSwitches(t, func(ff *subnettest.Fabric) {
		ff.Node("Hca4").Dead = true
		ff.Node("Switch1").Ports[5].Down = true
		ff.Node("Switch2").Ports[3].Speed = 2
	})
	var got bytes.Buffer
	writeSubnetDiff(&got, cur, ref)
	want = `Current subnet has 5 end ports, reference subnet has 6 end ports
 All end ports in the current subnet are in the reference subnet.
Reference subnet has 1 more end ports than the current subnet:
   0000:0000:0010:000a
Current subnet has 5 nodes, reference subnet has 6 nodes
 All nodes in the current subnet are in the reference subnet.
Reference subnet has 1 more nodes than the current subnet:
   0000:0000:0010:0009
Current subnet has 4 links, reference subnet has 6 links
 All links in the current subnet are in the reference subnet.
Reference subnet has 2 more links than the current subnet:
   0000:0000:0020:0001[2] <=> 0000:0000:0010:000a[1]
   0000:0000:0020:0001[5] <=> 0000:0000:0020:0000[5]
 The subnets have 1 different link rates
   0000:0000:0020:0001[3] <=> 0000:0000:0020:0000[3]: DDR 4x  SDR 4x
Current subnet has 5 LIDs, reference subnet has 6 LIDs
 The subnets have 1 different LID assignments (LID: Current portGUID, Reference portGUID):
       9:       !Cur          0000:0000:0010:000a
`
	if diff := cmp.Diff(want, got.String()); diff != "" {
		t.Errorf("changed fabric (-want +got):\n%s", diff)
	}
}
