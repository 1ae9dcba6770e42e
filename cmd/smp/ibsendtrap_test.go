package smp

import (
	"encoding/hex"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTrapNotices checks the Notice bytes of each trap against the
// ib_mad_notice_attr_t layout infiniband-diags fills.
func TestTrapNotices(t *testing.T) {
	src := &trapSource{lid: 0x12, nodeType: 1, capMask: 0x0251084a, errorPort: 3}
	tests := map[string]string{
		// generic|info, producer 1, trap 144, issuer 0x12; lid, local changes, cap mask, flags
		"node_desc_change":          "840000010090001200000000" + "001200010251084a0001",
		"link_speed_enabled_change": "840000010090001200000000" + "001200010251084a0004",
		"local_link_integrity":      "810000010081001200000000" + "001203",
		"sys_image_guid_change":     "840000010091001200000000" + "000000001234567812345678",
		"mkey_dr":                   "820000010100001200000000" + "0012ffff0100001500000012123456781234567800840506070800",
		"qkey":                      "820000010102001200000000" + "00010002123456780001010100020202f8c00000000000011111222233334444f8c000000000000156785678123412340000",
	}
	for _, tr := range traps {
		want, ok := tests[tr.name]
		if !ok {
			continue
		}
		n, err := tr.notice(src)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := n.MarshalBinary()
		got := hex.EncodeToString(data)[:len(want)]
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tr.name, diff)
		}
	}
}
