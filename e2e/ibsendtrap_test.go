package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// TestIbsendtrapReachesSM sends traps to opensm and checks it decoded
// them as infiniband-diags' test data says (Debian's infiniband-diags does
// not ship ibsendtrap, so opensm is the reference).
func TestIbsendtrapReachesSM(t *testing.T) {
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	for _, trap := range []string{"local_link_integrity", "sys_image_guid_change", "qkey"} {
		out, errOut, exit, err := f.RunIbtool(context.Background(), ibtoolBin, "Hca1", "ibsendtrap", trap)
		if err != nil || exit != 0 || len(out) != 0 || len(errOut) != 0 {
			t.Fatalf("ibsendtrap %s: exit %d, %v, %q, %q", trap, exit, err, out, errOut)
		}
	}
	want := []string{
		"Received Generic Notice type:1 num:129 (Local Link integrity threshold reached) Producer:1 (Channel Adapter) from LID:2 Port 1",
		"new SysImageGUID 0x1234567812345678",
		"Bad Q_Key:0x12345678 on SL:0 from LID1:1 QP1:0x101 to LID2:2 QP2:0x20202",
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		log, err := os.ReadFile(filepath.Join(f.Dir(), "opensm.log"))
		if err != nil {
			t.Fatal(err)
		}
		missing := ""
		for _, w := range want {
			if !strings.Contains(string(log), w) {
				missing = w
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("opensm.log lacks %q", missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
