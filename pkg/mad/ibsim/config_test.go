package ibsim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr bool
	}{
		{
			name: "defaults",
			env:  nil,
			want: Config{SockName: "sim", ServerPort: 7070},
		},
		{
			name: "unix with host",
			env:  map[string]string{"IBSIM_SOCKNAME": "fab1", "SIM_HOST": "Hca2"},
			want: Config{SockName: "fab1", ServerPort: 7070, Host: "Hca2"},
		},
		{
			name: "inet",
			env:  map[string]string{"IBSIM_SERVER_NAME": "10.0.0.5", "IBSIM_SERVER_PORT": "9000", "SIM_SET_ISSM": "1"},
			want: Config{SockName: "sim", ServerName: "10.0.0.5", ServerPort: 9000, IsSM: true},
		},
		{name: "bad port", env: map[string]string{"IBSIM_SERVER_PORT": "70000"}, wantErr: true},
		{name: "port 0", env: map[string]string{"IBSIM_SERVER_PORT": "0"}, wantErr: true},
		{name: "port not a number", env: map[string]string{"IBSIM_SERVER_PORT": "x"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromEnv(func(k string) string { return tt.env[k] })
			if (err != nil) != tt.wantErr {
				t.Fatalf("FromEnv error = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigDefaultsWhenZero(t *testing.T) {
	var c Config
	if c.sockName() != "sim" || c.serverPort() != 7070 || c.timeout() != 5*time.Second || c.inet() {
		t.Errorf("zero Config: sock %q port %d timeout %v inet %v", c.sockName(), c.serverPort(), c.timeout(), c.inet())
	}
}
