package endport

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/rdma"
)

func TestTargetEndPort(t *testing.T) {
	tests := []struct {
		in     string
		want   string
		wantOK bool
	}{
		{"fe80::2:c903:a1:b2c4%mlx5_0/1", "mlx5_0/1", true},
		{"fe80::2:c903:a1:b2c4%mlx5_0", "mlx5_0", true},
		{"fe80::1%0x0002c90300a1b2c4", "0x0002c90300a1b2c4", true},
		{"IBPath(DGID=fe80::1, end_port='mlx5_1/2')", "mlx5_1/2", true},
		{"IBDRPath(end_port=mlx5_0, drPath=0:1:)", "mlx5_0", true},
		{"IBPath(DLID=12)", "", false},
		{"fe80::2:c903:a1:b2c4", "", false},
		{"12", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			target, err := ParseTarget(tt.in, Any)
			if err != nil {
				t.Fatal(err)
			}
			l, ok := target.EndPort()
			if ok != tt.wantOK {
				t.Errorf("EndPort() ok = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, l.String()); diff != "" {
				t.Errorf("unexpected end port (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveScoped(t *testing.T) {
	const (
		active = rdma.PortStateActive
		down   = rdma.PortStateDown
		linkUp = rdma.PhysPortStateLinkUp
		poll   = rdma.PhysPortStatePolling
	)
	mlx50 := device("mlx5_0", rdma.NodeTypeCA,
		port(1, active, linkUp, "InfiniBand", 0x11),
		port(2, down, poll, "InfiniBand", 0x12))
	mlx51 := device("mlx5_1", rdma.NodeTypeCA, port(1, active, linkUp, "InfiniBand", 0x21))
	devs := devices{mlx50, mlx51}
	tests := []struct {
		name   string
		local  string // as --port takes it; "" is the default
		scopes []string
		want   string // device/port, or the error
	}{
		{"no scope: the default", "", nil, "mlx5_0/1"},
		{"scope picks the port", "", []string{"mlx5_1/1"}, "mlx5_1/1"},
		{"scope picks a port that is down", "", []string{"mlx5_0/2"}, "mlx5_0/2"},
		{"scope names a device", "", []string{"mlx5_1"}, "mlx5_1/1"},
		{"scope by GUID", "", []string{"0x12"}, "mlx5_0/2"},
		{"scope on the flags' device", "mlx5_0", []string{"mlx5_0/2"}, "mlx5_0/2"},
		{"scope off the flags' device", "mlx5_0", []string{"mlx5_1/1"},
			`target end port "mlx5_1/1" is mlx5_1 port 1, not on device "mlx5_0" that the local end port names`},
		{"scope is the flags' port", "mlx5_0/2", []string{"mlx5_0/2"}, "mlx5_0/2"},
		{"scope is the flags' port by another name", "0x21", []string{"mlx5_1/1"}, "mlx5_1/1"},
		{"bare port number agrees", "1", []string{"mlx5_0/1"}, "mlx5_0/1"},
		{"scope is not the flags' port", "mlx5_0/1", []string{"mlx5_0/2"},
			`target end port "mlx5_0/2" is mlx5_0 port 2, but the local end port "mlx5_0/1" is mlx5_0 port 1`},
		{"two scopes agree", "", []string{"mlx5_1", "0x21"}, "mlx5_1/1"},
		{"two scopes disagree", "", []string{"mlx5_1/1", "mlx5_0/1"},
			`target end port "mlx5_0/1" is mlx5_0 port 1, but another target's end port "mlx5_1/1" is mlx5_1 port 1`},
		{"scope names no port", "", []string{"mlx5_9/1"}, `local end port "mlx5_9/1": no RDMA device "mlx5_9" (have mlx5_0, mlx5_1)`},
		{"flags name no port", "mlx5_0/3", []string{"mlx5_0/1"}, `local end port "mlx5_0/3": mlx5_0 has no port 3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Local
			if err := l.UnmarshalText([]byte(tt.local)); err != nil {
				t.Fatal(err)
			}
			var scopes []Local
			for _, s := range tt.scopes {
				sl, err := parseLocal(s, false)
				if err != nil {
					t.Fatal(err)
				}
				scopes = append(scopes, sl)
			}
			d, p, err := l.ResolveScoped(devs, scopes...)
			got := errText(err)
			if err == nil {
				got = d.Name + "/" + strconv.Itoa(p.Number)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected resolution (-want +got):\n%s", diff)
			}
			var se *ScopeError
			if wantScopeErr := strings.HasPrefix(tt.want, "target end port"); errors.As(err, &se) != wantScopeErr {
				t.Errorf("error %v: *ScopeError %v, want %v", err, !wantScopeErr, wantScopeErr)
			}
		})
	}
}

func TestResolveScopedSourceError(t *testing.T) {
	_, _, err := Local{}.ResolveScoped(failingSource{fs.ErrPermission}, Local{CA: "mlx5_0"})
	if !errors.Is(err, fs.ErrPermission) {
		t.Errorf("ResolveScoped: %v, want it to wrap %v", err, fs.ErrPermission)
	}
}
