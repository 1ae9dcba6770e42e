package endport

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTargetJSON(t *testing.T) {
	type doc struct {
		Kind   Kind   `json:"kind"`
		Target Target `json:"target"`
	}
	for _, in := range []string{"0x1a", "0002:c903:00a1:b2c4", "fe80::1", "fe80::1%mlx5_0/1", "0,1,3", "IBDRPath(DLID=6, drPath=0:1:)"} {
		tg, err := ParseTarget(in, Any)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(doc{tg.Kind, tg})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(map[string]string{"kind": tg.Kind.String(), "target": tg.String()})
		if diff := cmp.Diff(string(want), string(b)); diff != "" {
			t.Errorf("%s: unexpected JSON (-want +got):\n%s", in, diff)
		}
		var back struct {
			Target Target `json:"target"`
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("unmarshaling %s: %v", b, err)
		}
		if diff := cmp.Diff(tg, back.Target); diff != "" {
			t.Errorf("%s: unexpected target from JSON (-want +got):\n%s", in, diff)
		}
	}
	if b, _ := json.Marshal(Target{Kind: LID, LID: 26}); string(b) != `"26"` {
		t.Errorf("LID target JSON = %s, want \"26\"", b)
	}
}
