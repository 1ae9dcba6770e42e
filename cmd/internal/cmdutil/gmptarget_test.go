package cmdutil

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// TestGMPTarget: a DR target of a GMP tool is a usage error, except with
// --sa or -D, which find its LID through the SA's LinkRecords (python-rdma).
func TestGMPTarget(t *testing.T) {
	// The SA knows one link: LID 2 port 1 to LID 7.
	sa := &madtest.RMPPResponder{HdrLen: 56, Respond: func(req *mad.Packet) []byte {
		if binary.BigEndian.Uint16(req.MAD[16:]) == uint16(mad.AttrLinkRecord) &&
			binary.BigEndian.Uint16(req.MAD[56:]) == 2 && req.MAD[58] == 1 {
			return madtest.SAResponse(req, 0, 8, []byte{0, 2, 1, 1, 0, 7})
		}
		return madtest.SAResponse(req, 0, 8)
	}}
	x := madrpc.NewTransactor(madtest.New(sa.Handle), madrpc.TransactorOptions{SA: &madrpc.SAAddress{SMLID: 1, LID: 2}})
	defer x.Close()
	tests := []struct {
		target string
		viaSA  bool
		asDR   bool // -D/--Direct
		want   mad.Path
		usage  bool // a usage error
		err    bool // another error
	}{
		{target: "5", want: mad.LIDPath(5)},
		{target: "5", viaSA: true, want: mad.LIDPath(5)},
		{target: "0,1", usage: true},
		{target: "0,1", viaSA: true, want: mad.LIDPath(7)},
		{target: "0", viaSA: true, want: mad.LIDPath(2)},
		{target: "0,2", viaSA: true, err: true},
		{target: "0,1", asDR: true, want: mad.LIDPath(7)},
	}
	for _, tt := range tests {
		tgt, err := endport.ParseTarget(tt.target, endport.Any)
		if err != nil {
			t.Fatal(err)
		}
		o := &CommonOptions{ViaSA: tt.viaSA, asDR: tt.asDR, Ctx: context.Background()}
		var u *UsageError
		if err := o.CheckGMPTarget(tgt, "test MADs"); errors.As(err, &u) != tt.usage {
			t.Errorf("CheckGMPTarget(%s), --sa %v: %v, want a usage error %v", tt.target, tt.viaSA, err, tt.usage)
		}
		got, err := o.GMPTarget(x, tgt, "test MADs")
		switch {
		case tt.usage || tt.err:
			if err == nil {
				t.Errorf("GMPTarget(%s), --sa %v: %v, want an error", tt.target, tt.viaSA, got)
			}
		case err != nil:
			t.Errorf("GMPTarget(%s), --sa %v: %v", tt.target, tt.viaSA, err)
		case got.String() != tt.want.String():
			t.Errorf("GMPTarget(%s), --sa %v = %v, want %v", tt.target, tt.viaSA, got, tt.want)
		}
	}
}
