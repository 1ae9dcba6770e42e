package ibsim

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The integration tests share one ibsim, started on first use and stopped
// by TestMain. With -short, or without ibsim installed, they skip; with
// IBTOOL_REQUIRE_BENCH=1 (make test) a missing ibsim fails them instead.

func TestMain(m *testing.M) {
	ServeKeeper() // the keeper tests start this binary as one
	code := m.Run()
	stopFabrics()
	os.Exit(code)
}

// fabric is a running ibsim.
type fabric struct {
	dir string // ibsim's working directory and log
	cfg Config // how to reach it
	cmd *exec.Cmd
}

var (
	fabricsMu sync.Mutex
	fabrics   = map[string]*fabric{} // by kind: "unix", "inet"
	fabricErr = map[string]error{}
)

const shimPath = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"

// requireBench skips (or, under IBTOOL_REQUIRE_BENCH=1, fails) when the
// named program or file is missing.
func requireBench(t *testing.T, what string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: skipped with -short")
	}
	path := what
	var err error
	if filepath.IsAbs(what) {
		_, err = os.Stat(what)
	} else {
		path, err = exec.LookPath(what)
	}
	if err != nil {
		msg := fmt.Sprintf("%s not installed (apt-get install ibsim-utils libumad2sim0 infiniband-diags): %v", what, err)
		if os.Getenv("IBTOOL_REQUIRE_BENCH") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}

// unixFabric returns the shared ibsim on abstract unix sockets.
func unixFabric(t *testing.T) *fabric {
	t.Helper()
	return sharedFabric(t, "unix")
}

// inetFabric returns a shared ibsim in inet mode (-r) on 127.0.0.1.
func inetFabric(t *testing.T) *fabric {
	t.Helper()
	return sharedFabric(t, "inet")
}

func sharedFabric(t *testing.T, kind string) *fabric {
	t.Helper()
	ibsim := requireBench(t, "ibsim")
	fabricsMu.Lock()
	defer fabricsMu.Unlock()
	if f := fabrics[kind]; f != nil {
		return f
	}
	if err := fabricErr[kind]; err != nil {
		t.Fatal(err)
	}
	f, err := startFabric(ibsim, kind)
	if err != nil {
		fabricErr[kind] = err
		t.Fatal(err)
	}
	fabrics[kind] = f
	return f
}

// startFabric runs `ibsim -s -n net.2sw2path4hca` in a fresh directory with
// a socket name (or, for inet, a port) of its own, and waits until its
// control socket answers a CONNECT.
func startFabric(ibsim, kind string) (*fabric, error) {
	dir, err := os.MkdirTemp("", "ibtool-ibsim-")
	if err != nil {
		return nil, err
	}
	net, err := os.ReadFile("testdata/net.2sw2path4hca")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "net"), net, 0o644); err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		f := &fabric{dir: dir}
		args := []string{"-s", "-n"}
		if kind == "inet" {
			// ibsim binds port and port+1..port+10; pick a range at random.
			port := 20000 + int(time.Now().UnixNano()%30000)
			f.cfg = Config{ServerName: "127.0.0.1", ServerPort: port, Timeout: 2 * time.Second}
			args = append(args, "-r", "-l", strconv.Itoa(port))
		} else {
			f.cfg = Config{SockName: fmt.Sprintf("ibtool-test-%d-%d", os.Getpid(), attempt), Timeout: 2 * time.Second}
		}
		args = append(args, "net")
		log, err := os.Create(filepath.Join(dir, fmt.Sprintf("ibsim-%s-%d.log", kind, attempt)))
		if err != nil {
			return nil, err
		}
		f.cmd = exec.Command(ibsim, args...)
		f.cmd.Dir = dir
		f.cmd.Env = append(os.Environ(), "IBSIM_SOCKNAME="+f.cfg.SockName)
		f.cmd.Stdout, f.cmd.Stderr = log, log
		if err := f.cmd.Start(); err != nil {
			log.Close()
			return nil, err
		}
		log.Close()
		exited := make(chan error, 1)
		go func() { exited <- f.cmd.Wait() }()
		if lastErr = f.waitReady(exited); lastErr == nil {
			return f, nil
		}
		f.cmd.Process.Kill()
		<-exited
	}
	return nil, fmt.Errorf("ibsim did not come up (logs in %s): %w", dir, lastErr)
}

// waitReady polls with Dial and Close until ibsim answers, for up to 10s.
func (f *fabric) waitReady(exited <-chan error) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("ibsim exited: %v", err)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		c, err := Dial(ctx, f.cfg)
		cancel()
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func stopFabrics() {
	fabricsMu.Lock()
	defer fabricsMu.Unlock()
	for kind, f := range fabrics {
		if f.cmd.Process != nil {
			f.cmd.Process.Kill()
		}
		os.RemoveAll(f.dir)
		delete(fabrics, kind)
	}
}

// dial attaches to f at host and closes the client when the test ends.
func (f *fabric) dial(t *testing.T, host string) *Client {
	t.Helper()
	cfg := f.cfg
	cfg.Host = host
	c, err := Dial(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Dial(%s): %v", host, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}
