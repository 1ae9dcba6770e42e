package endport_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func TestTargetPath(t *testing.T) {
	sl := uint8(2)
	lid := rdma.LID(12)
	gid := rdma.NewGID(0xfe80<<48, 0x0002c90300a1b2c4)
	tests := []struct {
		in      string
		want    mad.Path
		wantErr string
		lidOnly bool // LIDRoutedPath fails with ErrNotLIDRouted
	}{
		{in: "12", want: mad.LIDPath(12)},
		{in: "0,1,3", want: mad.DRPath(0, 1, 3), lidOnly: true},
		{in: "0x0002c90300a1b2c4", want: mad.Path{GUID: 0x0002c90300a1b2c4}},
		{in: "fe80::2:c903:a1:b2c4", want: mad.Path{DGID: &gid}},
		{in: "fe80::2:c903:a1:b2c4%mlx5_0/1", want: mad.Path{DGID: &gid}},
		{in: "IBPath(DLID=12, SL=2)", want: mad.Path{LID: lid, SL: sl}},
		{in: "IBPath(DGID=fe80::2:c903:a1:b2c4, end_port='mlx5_0/1')", want: mad.Path{DGID: &gid}},
		{in: "IBDRPath(drPath=0:1:)", want: mad.DRPath(0, 1), lidOnly: true},
		{in: "IBDRPath(DLID=6, drPath=0:1:)", wantErr: "directed routes with a LID-routed part are not supported yet"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			target, err := endport.ParseTarget(tt.in, endport.Any)
			if err != nil {
				t.Fatal(err)
			}
			got, err := target.Path()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Path() error = %v, want one that says %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected path (-want +got):\n%s", diff)
			}
			_, err = target.LIDRoutedPath("PMA queries")
			if gotLIDOnly := errors.Is(err, endport.ErrNotLIDRouted); gotLIDOnly != tt.lidOnly {
				t.Errorf("LIDRoutedPath() error = %v, want ErrNotLIDRouted %v", err, tt.lidOnly)
			}
		})
	}
}
