package endport_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// fixture is the sysfs tree of pkg/rdma's mlx5 fixture: mlx5_0 (IB, port
// 1 active at LID 5, SM LID 1) and mlx5_1 (RoCE).
const fixture = "../rdma/testdata/mlx5"

// silent opens a madtest transport that answers nothing, recording the
// device and port it was opened for.
func silent(got *string) endport.Option {
	return endport.WithTransport(func(_ context.Context, d *rdma.Device, p *rdma.Port) (mad.Transport, error) {
		*got = d.Name + "/" + itoa(p.Number)
		return madtest.New(func(*mad.Packet) []mad.Packet { return nil }), nil
	})
}

func itoa(n int) string { return string(rune('0' + n)) }

func writeConf(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ibdiag.conf")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOpenPicksPort checks which port Open finds for a spec, with and
// without ibdiag.conf's CA and Port.
func TestOpenPicksPort(t *testing.T) {
	tests := []struct {
		name, spec, conf, want string
	}{
		{"default", "", "", "mlx5_0/1"},
		{"device and port", "mlx5_0/2", "", "mlx5_0/2"},
		{"port GUID", "0x0c42a10300a1b2c4", "", "mlx5_0/1"},
		{"port GID", "fe80::c42:a103:a1:b2c4", "", "mlx5_0/1"},
		{"config CA and port", "", "CA=mlx5_0\nPort=2\n", "mlx5_0/2"},
		{"spec wins over config", "mlx5_0/1", "CA=mlx5_1\nPort=1\n", "mlx5_0/1"},
		{"config port for the spec's device", "mlx5_0", "Port=2\n", "mlx5_0/2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf := ""
			if tt.conf != "" {
				conf = writeConf(t, tt.conf)
			}
			var got string
			p, err := endport.Open(context.Background(), tt.spec, endport.WithSysfs(fixture),
				endport.WithSimulator(endport.SimOff), endport.WithConfigFile(conf), silent(&got))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected port (-want +got):\n%s", diff)
			}
			if p.Simulated || p.Transactor == nil || p.Local.LID == 0 && tt.want == "mlx5_0/1" {
				t.Errorf("unexpected port %+v", p)
			}
		})
	}
}

// TestOpenTransactorDefaults checks that the timeout, retries and M_Key
// reach the transactor, from ibdiag.conf and from options, options
// winning: a silent port makes each SMP time out, and the error says how
// often it went and with which key.
func TestOpenTransactorDefaults(t *testing.T) {
	tests := []struct {
		name      string
		conf      string
		opts      []endport.Option
		wantTries int
		wantMKey  uint64
	}{
		{"config", "timeout=20\nm_key=0x1234\n", nil, 3, 0x1234},
		{"options win", "timeout=5000\nm_key=0x1234\n",
			[]endport.Option{endport.WithTimeout(20 * time.Millisecond), endport.WithRetries(0), endport.WithMKey(7)}, 1, 7},
		{"retries", "timeout=20\n", []endport.Option{endport.WithRetries(1)}, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			opts := append([]endport.Option{endport.WithSysfs(fixture), endport.WithSimulator(endport.SimOff),
				endport.WithConfigFile(writeConf(t, tt.conf)), silent(&got)}, tt.opts...)
			p, err := endport.Open(context.Background(), "", opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			start := time.Now()
			_, err = madrpc.NewQuerier(p.Transactor, mad.LIDPath(5)).Get(context.Background(), &mad.NodeInfo{}, 0)
			var te *madrpc.TimeoutError
			if !errors.As(err, &te) {
				t.Fatalf("Get on a silent port: %v, want a *mad.TimeoutError", err)
			}
			if te.Tries != tt.wantTries || te.MKey != tt.wantMKey {
				t.Errorf("timed out after %d tries with M_Key %#x, want %d tries with %#x", te.Tries, te.MKey, tt.wantTries, tt.wantMKey)
			}
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("the timeouts took %v: the configured timeout was not used", el)
			}
		})
	}
}

// TestOpenErrors checks the step and cause of each way Open fails.
func TestOpenErrors(t *testing.T) {
	var got string
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, nil, 0o644)
	tests := []struct {
		name  string
		spec  string
		opts  []endport.Option
		step  endport.Step
		check func(error) bool
	}{
		{"bad spec", "mlx5_0/x", nil, endport.StepSpec,
			func(err error) bool { var pe *rdma.ParseError; return errors.As(err, &pe) }},
		{"no such sysfs", "", []endport.Option{endport.WithSysfs("/no/such/dir")}, endport.StepSetup,
			func(err error) bool { var se *endport.SysfsRootError; return errors.As(err, &se) && se.Missing() }},
		{"sysfs not a directory", "", []endport.Option{endport.WithSysfs(notDir)}, endport.StepSetup,
			func(err error) bool {
				var se *endport.SysfsRootError
				return errors.As(err, &se) && se.Reason() == "not a directory"
			}},
		{"no such device", "mlx5_9/1", []endport.Option{endport.WithSysfs(fixture)}, endport.StepResolve,
			func(err error) bool { var re *endport.ResolveError; return errors.As(err, &re) }},
		{"named config missing", "", []endport.Option{endport.WithSysfs(fixture), endport.WithConfigFile("/no/such/ibdiag.conf")}, endport.StepSetup,
			func(err error) bool { return errors.Is(err, os.ErrNotExist) }},
		{"bad simulator port", "", []endport.Option{endport.WithSimulator(endport.SimOn),
			endport.WithEnv(func(k string) string { return map[string]string{"IBSIM_SERVER_PORT": "x"}[k] })}, endport.StepSetup,
			func(err error) bool { return err != nil }},
		{"transport fails", "", []endport.Option{endport.WithSysfs(fixture),
			endport.WithTransport(func(context.Context, *rdma.Device, *rdma.Port) (mad.Transport, error) {
				return nil, os.ErrPermission
			})}, endport.StepTransport,
			func(err error) bool { return errors.Is(err, os.ErrPermission) }},
		{"SA path is a directed route", "", []endport.Option{endport.WithSysfs(fixture), silent(&got),
			endport.WithSAPath(mad.DRPath(0, 1))}, endport.StepSAPath,
			func(err error) bool { return err != nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := append([]endport.Option{endport.WithSimulator(endport.SimOff), endport.WithConfigFile("")}, tt.opts...)
			p, err := endport.Open(context.Background(), tt.spec, opts...)
			if err == nil {
				p.Close()
				t.Fatal("Open succeeded")
			}
			var oe *endport.OpenError
			if !errors.As(err, &oe) {
				t.Fatalf("Open: %v, want an *endport.OpenError", err)
			}
			if oe.Step != tt.step || !tt.check(err) {
				t.Errorf("Open: %v (step %v), want step %v and the right cause", err, oe.Step, tt.step)
			}
		})
	}
}

// TestSimulatorFromEnv checks the variables that choose the simulator.
func TestSimulatorFromEnv(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"IBTOOL_SIM": "1"}, true},
		{map[string]string{"IBTOOL_SIM": "0"}, false},
		{map[string]string{"IBSIM_SOCKNAME": "x"}, true},
	}
	for _, tt := range tests {
		if got := endport.SimulatorFromEnv(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("SimulatorFromEnv(%v) = %v, want %v", tt.env, got, tt.want)
		}
	}
}

// TestDevices checks the device tree Devices returns on sysfs, and its
// failure on simulator variables that do not parse.
func TestDevices(t *testing.T) {
	devs, err := endport.Devices(context.Background(), endport.WithSysfs(fixture), endport.WithSimulator(endport.SimOff))
	if err != nil {
		t.Fatal(err)
	}
	names, err := devs.DeviceNames()
	if diff := cmp.Diff([]string{"mlx5_0", "mlx5_1"}, names); err != nil || diff != "" || devs.Root() != fixture {
		t.Errorf("Devices: root %q, names (-want +got):\n%s (err %v)", devs.Root(), diff, err)
	}
	_, err = endport.Devices(context.Background(), endport.WithSimulator(endport.SimOn),
		endport.WithEnv(func(k string) string { return map[string]string{"IBSIM_SERVER_PORT": "0"}[k] }))
	var oe *endport.OpenError
	if !errors.As(err, &oe) || oe.Step != endport.StepSetup {
		t.Errorf("Devices with IBSIM_SERVER_PORT=0: %v, want an *OpenError at StepSetup", err)
	}
}
