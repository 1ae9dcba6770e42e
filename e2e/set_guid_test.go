package e2e

import (
	"bytes"
	"context"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// TestSetGUID checks python-rdma's set_guid against opensm and
// infiniband-diags: the alias GUID set in entry 1 of Hca2's (LID 4) GUID
// table shows in infiniband-diags' saquery GUIDInfoRecord, and set_guid
// prints the record as that saquery prints its block. The fabric is this
// test's own: the alias stays.
func TestSetGUID(t *testing.T) {
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	set := run(t, "ibtool set_guid", func(ctx context.Context) ([]byte, []byte, int, error) {
		return f.RunIbtool(ctx, ibtoolBin, "Hca1", "set_guid", "4", "1", "0x0002c90300001234")
	})
	ref := run(t, "saquery GIR", func(ctx context.Context) ([]byte, []byte, int, error) {
		return f.RunReference(ctx, "Hca1", "saquery", "GIR", "4")
	})
	if set.exit != 0 || ref.exit != 0 {
		t.Fatalf("set_guid exit %d (%s), saquery exit %d", set.exit, set.stderr, ref.exit)
	}
	if !bytes.Contains(ref.stdout, []byte("GUID 1.....................0x0002c90300001234\n")) {
		t.Errorf("saquery GIR 4 does not show the alias GUID:\n%s", ref.stdout)
	}
	if !bytes.HasPrefix(ref.stdout, set.stdout) {
		t.Errorf("set_guid's record is not saquery's block 0 (-want +got):\n%s", simfabric.Diff(ref.stdout[:min(len(ref.stdout), len(set.stdout))], set.stdout))
	}
	t.Run("errors", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 2, `invalid slot "256": want 0 to 255`, "set_guid", "4", "256", "0x1234")
		ibtoolFails(t, f, "Hca1", 2, `invalid GUID "xyz"`, "set_guid", "4", "1", "xyz")
		ibtoolFails(t, f, "Hca1", 3, "SubnAdmSet(GUIDInfoRecord)", "set_guid", "99", "2", "0x0002c90300005678") // no port at LID 99
	})
}
