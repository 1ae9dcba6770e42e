package cmdutil

import (
	"context"
	"errors"
	"testing"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// TestSAPathFlag: --sa-path takes python-rdma's path forms, implies --sa,
// and refuses a directed route.
func TestSAPathFlag(t *testing.T) {
	tests := []struct {
		arg   string
		want  string // the path, "" for a usage error
		wantS uint8  // its SL
	}{
		{"", "", 0},
		{"1", "Lid 1", 0},
		{"0x1a", "Lid 26", 0},
		{"0x0002c90300a1b2c4", "GUID 0x0002c90300a1b2c4", 0},
		{"IBPath(DLID=5, SL=3)", "Lid 5", 3},
		{"0,1", "", 0},
		{"0", "", 0},
		{"nonsense", "", 0},
	}
	for _, tt := range tests {
		o := &CommonOptions{SAPathArg: tt.arg}
		err := o.finishSAPath()
		var u *UsageError
		switch {
		case tt.arg == "":
			if err != nil || o.ViaSA || o.saPath != nil {
				t.Errorf("no --sa-path: %v, --sa %v, path %v", err, o.ViaSA, o.saPath)
			}
		case tt.want == "":
			if !errors.As(err, &u) {
				t.Errorf("--sa-path %q: %v, want a usage error", tt.arg, err)
			}
		case err != nil:
			t.Errorf("--sa-path %q: %v", tt.arg, err)
		case !o.ViaSA || o.saPath == nil || o.saPath.String() != tt.want || o.saPath.SL != tt.wantS:
			t.Errorf("--sa-path %q: --sa %v, path %v; want --sa and %s SL %d", tt.arg, o.ViaSA, o.saPath, tt.want, tt.wantS)
		}
	}
	var o CommonOptions
	if err := o.useSAPath(nil, &madrpc.SAAddress{SMLID: 1}); err != nil {
		t.Errorf("useSAPath without --sa-path: %v", err)
	}
	// A LID path needs no SA to resolve: the SA address takes it.
	o = CommonOptions{SAPathArg: "IBPath(DLID=5, SL=3)", Ctx: context.Background()}
	if err := o.finishSAPath(); err != nil {
		t.Fatal(err)
	}
	x := madrpc.NewTransactor(madtest.New(func(*mad.Packet) []mad.Packet { return nil }), madrpc.TransactorOptions{})
	defer x.Close()
	sa := &madrpc.SAAddress{SMLID: 1}
	if err := o.useSAPath(x, sa); err != nil || sa.SMLID != 5 || sa.SL != 3 {
		t.Errorf("useSAPath: %v, SA at Lid %d SL %d; want Lid 5 SL 3", err, sa.SMLID, sa.SL)
	}
}
