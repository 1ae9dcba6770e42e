//go:build cgo && !noverbs

package verbs

import (
	"errors"
	"syscall"
	"testing"
)

// TestIntegrationCreateCQ is CQAPITest.test_create_cq: CQs of 1 entry,
// half the device's maximum and its maximum on completion vectors 0 and
// 1 (those the device has), then one as big as the device has vectors
// on its last vector.
func TestIntegrationCreateCQ(t *testing.T) {
	ctx := integrationContext(t)
	attr, err := ctx.QueryDevice()
	ok(t, err)
	if attr.NumCompVectors < 1 {
		t.Fatalf("%s has %d completion vectors", ctx.Name(), attr.NumCompVectors)
	}
	for _, n := range []int{1, attr.MaxCQE / 2, attr.MaxCQE} {
		for v := range min(2, attr.NumCompVectors) {
			cq, err := ctx.CreateCQOnVector(n, nil, v)
			if err != nil {
				t.Fatalf("CQ of %d entries on vector %d: %v", n, v, err)
			}
			ok(t, cq.Close())
		}
	}
	last := attr.NumCompVectors - 1
	cq, err := ctx.CreateCQOnVector(attr.NumCompVectors, nil, last)
	if err != nil {
		t.Fatalf("CQ of %d entries on the last vector, %d: %v", attr.NumCompVectors, last, err)
	}
	ok(t, cq.Close())
	t.Logf("%s: %d completion vectors", ctx.Name(), attr.NumCompVectors)
}

// TestIntegrationCreateCQBadFlow is CQAPITest.test_create_cq_bad_flow: a
// CQ one entry over the device's maximum, and one on a vector past the
// device's last but one, are EINVAL.
func TestIntegrationCreateCQBadFlow(t *testing.T) {
	ctx := integrationContext(t)
	attr, err := ctx.QueryDevice()
	ok(t, err)
	tests := []struct {
		cqe, vector int
	}{
		{attr.MaxCQE + 1, 0},
		{100, attr.NumCompVectors + 1},
	}
	for _, tt := range tests {
		cq, err := ctx.CreateCQOnVector(tt.cqe, nil, tt.vector)
		var ve *VerbError
		if !errors.As(err, &ve) || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("CQ of %d entries on vector %d (device: %d entries, %d vectors): error %v, want a VerbError wrapping EINVAL",
				tt.cqe, tt.vector, attr.MaxCQE, attr.NumCompVectors, err)
		}
		if cq != nil {
			ok(t, cq.Close())
		}
	}
}
