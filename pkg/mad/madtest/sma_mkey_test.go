package madtest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

const portKey = 0x1234

// protectedSMA returns an SMA whose port has M_Key portKey at protection
// level bits, and a transactor to it that sends key in every SMP.
func protectedSMA(t *testing.T, bits uint8, lease uint16, key uint64) (*madtest.SMA, *madrpc.Transactor) {
	t.Helper()
	sma := madtest.NewSMA().
		Put(&mad.NodeInfo{NodeType: 1, NumPorts: 2}, 0).
		Put(&mad.PortInfo{MKey: portKey, ProtectBits: bits, MKeyLeasePeriod: lease, LID: 7}, madtest.AnyMod).
		CheckMKeys()
	x := madrpc.NewTransactor(madtest.New(sma.Handle), madrpc.TransactorOptions{Timeout: 20 * time.Millisecond, Retries: -1, MKey: key})
	t.Cleanup(func() { x.Close() })
	return sma, x
}

// TestSMAMKeyLevels checks the M_Key check of IBA 14.2.4 at each protection
// level: Gets pass without the key below level 2 (level 1 hiding the key),
// Sets never do, and what fails gets no answer.
func TestSMAMKeyLevels(t *testing.T) {
	type outcome struct {
		Answered   bool
		SeenKey    uint64 // PortInfo's M_Key as a Get returned it
		Violations uint16
	}
	tests := []struct {
		bits   uint8
		method mad.Method
		key    uint64
		want   outcome
	}{
		{0, mad.MethodGet, 0, outcome{true, portKey, 0}},
		{0, mad.MethodGet, 0x99, outcome{true, portKey, 0}},
		{0, mad.MethodSet, 0, outcome{false, 0, 1}},
		{0, mad.MethodSet, portKey, outcome{true, 0, 0}},
		{1, mad.MethodGet, 0, outcome{true, 0, 0}},
		{1, mad.MethodGet, portKey, outcome{true, portKey, 0}},
		{1, mad.MethodSet, 0x99, outcome{false, 0, 1}},
		{1, mad.MethodSet, portKey, outcome{true, 0, 0}},
		{2, mad.MethodGet, 0, outcome{false, 0, 1}},
		{2, mad.MethodGet, portKey, outcome{true, portKey, 0}},
		{2, mad.MethodSet, 0, outcome{false, 0, 1}},
		{3, mad.MethodGet, 0x99, outcome{false, 0, 1}},
		{3, mad.MethodGet, portKey, outcome{true, portKey, 0}},
		{3, mad.MethodSet, portKey, outcome{true, 0, 0}},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(fmt.Sprintf("level %d %v key %#x", tt.bits, tt.method, tt.key), func(t *testing.T) {
			sma, x := protectedSMA(t, tt.bits, 0, tt.key)
			q := madrpc.NewQuerier(x, mad.LIDPath(7))
			var got outcome
			var err error
			if tt.method == mad.MethodGet {
				var pi mad.PortInfo
				_, err = q.Get(ctx, &pi, 1)
				got.SeenKey = pi.MKey
			} else {
				// The Set keeps the port's key and protection, as an
				// SM's Sets do.
				_, err = q.Set(ctx, &mad.PortInfo{MKey: portKey, ProtectBits: tt.bits, LID: 8}, 1, nil)
			}
			var te *madrpc.TimeoutError
			switch {
			case err == nil:
				got.Answered = true
			case !errors.As(err, &te):
				t.Fatalf("error %v, want none or a timeout", err)
			}
			// Read the counter with the key, which always passes.
			keyed := madrpc.NewQuerier(x, mad.LIDPath(7))
			keyed.Key = portKey
			var pi mad.PortInfo
			if _, err := keyed.Get(ctx, &pi, 0); err != nil {
				t.Fatal(err)
			}
			got.Violations = pi.MKeyViolations
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected outcome (-want +got):\n%s", diff)
			}
			if reqs := sma.Requests(); reqs[0].MKey != tt.key || reqs[0].Dropped == got.Answered {
				t.Errorf("request logged as %+v", reqs[0])
			}
		})
	}
}

// TestSMAMKeyDR checks that directed-route SMPs are checked as LID-routed
// ones are: the M_Key sits at the same place in both.
func TestSMAMKeyDR(t *testing.T) {
	_, x := protectedSMA(t, 2, 0, 0)
	var te *madrpc.TimeoutError
	if _, err := madrpc.NewQuerier(x, mad.DRPath(0, 1)).Get(context.Background(), &mad.NodeInfo{}, 0); !errors.As(err, &te) {
		t.Fatalf("DR Get without the key at level 2: %v, want a timeout", err)
	}
	if !te.MaybeMKeyProtected() || te.MKey != 0 {
		t.Errorf("timeout %+v: want an SMP sent with M_Key 0", te)
	}
	_, x = protectedSMA(t, 2, 0, portKey)
	if _, err := madrpc.NewQuerier(x, mad.DRPath(0, 1)).Get(context.Background(), &mad.NodeInfo{}, 0); err != nil {
		t.Fatalf("DR Get with the key: %v", err)
	}
}

// TestSMAMKeyLease checks that a violation starts the lease, and that the
// protect bits fall to 0 when it runs out.
func TestSMAMKeyLease(t *testing.T) {
	sma, x := protectedSMA(t, 2, 60, 0)
	now := time.Unix(1000, 0)
	sma.Now = func() time.Time { return now }
	ctx := context.Background()
	q := madrpc.NewQuerier(x, mad.LIDPath(7))
	if _, err := q.Get(ctx, &mad.NodeInfo{}, 0); err == nil {
		t.Fatal("Get without the key at level 2 answered")
	}
	now = now.Add(59 * time.Second)
	if _, err := q.Get(ctx, &mad.NodeInfo{}, 0); err == nil {
		t.Fatal("Get answered before the lease ran out")
	}
	now = now.Add(time.Second)
	var pi mad.PortInfo
	if _, err := q.Get(ctx, &pi, 0); err != nil {
		t.Fatalf("Get after the lease ran out: %v", err)
	}
	if pi.ProtectBits != 0 || pi.MKey != portKey || pi.MKeyViolations != 2 {
		t.Errorf("after the lease: protect bits %d, M_Key %#x, %d violations; want 0, %#x, 2", pi.ProtectBits, pi.MKey, pi.MKeyViolations, portKey)
	}
}

// TestSMAMKeySetChangesKey checks that a PortInfo Set with the key sets the
// port's protection: the old key no longer passes.
func TestSMAMKeySetChangesKey(t *testing.T) {
	_, x := protectedSMA(t, 2, 0, portKey)
	ctx := context.Background()
	q := madrpc.NewQuerier(x, mad.LIDPath(7))
	if _, err := q.Set(ctx, &mad.PortInfo{MKey: 0x5678, ProtectBits: 2, LID: 7}, 1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Get(ctx, &mad.NodeInfo{}, 0); err == nil {
		t.Error("Get with the old key answered")
	}
	q.Key = 0x5678
	if _, err := q.Get(ctx, &mad.NodeInfo{}, 0); err != nil {
		t.Errorf("Get with the new key: %v", err)
	}
}

// TestSMAMKeyUnchecked checks that an SMA without CheckMKeys answers
// whatever M_Key its PortInfo holds: the tool tests' fake fabrics show
// keys without guarding with them.
func TestSMAMKeyUnchecked(t *testing.T) {
	sma := madtest.NewSMA().Put(&mad.PortInfo{MKey: portKey, ProtectBits: 3, LID: 7}, madtest.AnyMod)
	x := madrpc.NewTransactor(madtest.New(sma.Handle), madrpc.TransactorOptions{Timeout: 20 * time.Millisecond, Retries: -1})
	defer x.Close()
	q := madrpc.NewQuerier(x, mad.LIDPath(7))
	var pi mad.PortInfo
	if _, err := q.Get(context.Background(), &pi, 1); err != nil || pi.MKey != portKey {
		t.Fatalf("Get without the key: M_Key %#x, %v; want %#x", pi.MKey, err, portKey)
	}
	if _, err := q.Set(context.Background(), &mad.PortInfo{LID: 8}, 1, nil); err != nil {
		t.Fatalf("Set without the key: %v", err)
	}
}
