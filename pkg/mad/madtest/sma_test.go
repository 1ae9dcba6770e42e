package madtest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

func TestSMA(t *testing.T) {
	sma := madtest.NewSMA().
		Put(&mad.NodeInfo{NodeType: 2, NumPorts: 8}, 0).
		Put(&mad.PortInfo{LID: 7}, madtest.AnyMod).
		Put(&mad.PortInfo{LID: 9}, 3)
	x := madrpc.NewTransactor(madtest.New(sma.Handle), madrpc.TransactorOptions{Timeout: 50 * time.Millisecond})
	defer x.Close()
	ctx := context.Background()
	tests := []struct {
		name     string
		path     mad.Path
		mod      uint32
		attr     mad.Attribute
		want     mad.Attribute
		wantStat mad.Status
	}{
		{"NodeInfo by LID", mad.LIDPath(3), 0, &mad.NodeInfo{}, &mad.NodeInfo{NodeType: 2, NumPorts: 8}, 0},
		{"NodeInfo by DR", mad.DRPath(0, 1), 0, &mad.NodeInfo{}, &mad.NodeInfo{NodeType: 2, NumPorts: 8}, 0},
		{"PortInfo any port", mad.LIDPath(3), 1, &mad.PortInfo{}, &mad.PortInfo{LID: 7}, 0},
		{"PortInfo port 3", mad.LIDPath(3), 3, &mad.PortInfo{}, &mad.PortInfo{LID: 9}, 0},
		{"SwitchInfo", mad.LIDPath(3), 0, &mad.SwitchInfo{}, nil, mad.StatusMethodAttrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := madrpc.NewQuerier(x, tt.path).Get(ctx, tt.attr, tt.mod)
			var se *madrpc.StatusError
			if tt.wantStat != 0 {
				if !errors.As(err, &se) || se.Status&mad.StatusCodeMask != tt.wantStat {
					t.Fatalf("error %v, want status %v", err, tt.wantStat)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, tt.attr); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
	// A Set stores what it carries: the next Get returns it.
	q := madrpc.NewQuerier(x, mad.LIDPath(3))
	if _, err := q.Set(ctx, &mad.PortInfo{LID: 11}, 3, nil); err != nil {
		t.Fatal(err)
	}
	var pi mad.PortInfo
	if _, err := q.Get(ctx, &pi, 3); err != nil || pi.LID != 11 {
		t.Errorf("after the Set: LID %d, %v; want 11", pi.LID, err)
	}
	reqs := sma.Requests()
	last := reqs[len(reqs)-2]
	if last.Method != mad.MethodSet || last.AttrID != mad.AttrPortInfo || last.Mod != 3 {
		t.Errorf("Set logged as %+v", last)
	}
}
