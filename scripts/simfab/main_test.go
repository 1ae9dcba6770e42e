package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

func TestDispatch(t *testing.T) {
	t.Setenv(envDir, "")
	tests := []struct {
		args       []string
		code       int
		stdout     string // prefix
		stderrPart string
	}{
		{nil, exitUsage, "", "usage: simfab COMMAND"},
		{[]string{"bogus"}, exitUsage, "", `unknown command "bogus"`},
		{[]string{"fattree", "-levels", "2", "-hosts", "3", "-radix", "4"}, exitOK, "# 2-level fat tree: 3 hosts, radix 4", ""},
		{[]string{"fattree", "-levels", "5", "-hosts", "3"}, exitUsage, "", "levels 5"},
		{[]string{"fattree", "-hosts", "3", "extra"}, exitUsage, "", `unexpected argument "extra"`},
		{[]string{"fattree", "-nope"}, exitUsage, "", "flag provided but not defined"},
		{[]string{"start"}, exitUsage, "", "want one net file"},
		{[]string{"stop"}, exitUsage, "", "no fabric directory"},
		{[]string{"stop", t.TempDir()}, exitFailure, "", "not a running fabric's directory"},
		{[]string{"console", "-dir", "x"}, exitUsage, "", "no command"},
		{[]string{"diff", "-ibtool", "/nonexistent/ibtool", "--", "ibstat"}, exitUsage, "", "no such file"},
		{[]string{"run", "-dir", "x"}, exitUsage, "", "no tool"},
		{[]string{"preload", "x"}, exitUsage, "", `unexpected argument "x"`},
		{[]string{"freeze"}, exitUsage, "", "no fabric directory"},
		{[]string{"freeze", "-for", "-1s", "-dir", "x"}, exitUsage, "", "negative"},
		{[]string{"freeze", "-dir", "x", "extra"}, exitUsage, "", `unexpected argument "extra"`},
		{[]string{"thaw", "-dir", t.TempDir()}, exitFailure, "", "not a running fabric's directory"},
		{[]string{"crash", "-dir", "x", "extra"}, exitUsage, "", `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := dispatch(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), tt.stdout) {
				t.Errorf("stdout %q, want it to start with %q", stdout.String(), tt.stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderrPart) {
				t.Errorf("stderr %q, want it to contain %q", stderr.String(), tt.stderrPart)
			}
		})
	}
}

func TestPreload(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc to build the RMPP layer")
	}
	var stdout, stderr bytes.Buffer
	if code := dispatch(context.Background(), []string{"preload"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want, err := simfabric.Preload()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(stdout.String()); got != want || !strings.HasSuffix(got, " "+simfabric.Shim) {
		t.Errorf("simfab preload printed %q, want %q, ending in the shim", got, want)
	}
}

func TestFatTreeMatchesLibrary(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := dispatch(context.Background(), []string{"fattree", "-levels", "3", "-hosts", "100", "-radix", "8"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want, err := simfabric.FatTree(simfabric.FatTreeSpec{Levels: 3, Hosts: 100, Radix: 8})
	if err != nil {
		t.Fatal(err)
	}
	if d := simfabric.Diff(want, stdout.Bytes()); d != "" {
		t.Errorf("simfab fattree differs from FatTree:\n%s", d)
	}
}

func TestIntegrationFreezeThaw(t *testing.T) {
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	run := func(args ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := dispatch(context.Background(), args, &stdout, &stderr); code != exitOK {
			t.Fatalf("simfab %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
		}
	}
	run("freeze", "-dir", f.Dir())
	if !f.Frozen() {
		t.Error("not frozen after simfab freeze")
	}
	run("thaw", "-dir", f.Dir())
	if f.Frozen() {
		t.Error("frozen after simfab thaw")
	}
	t0 := time.Now()
	run("freeze", "-dir", f.Dir(), "-for", "100ms")
	if d := time.Since(t0); d < 100*time.Millisecond || f.Frozen() {
		t.Errorf("simfab freeze -for 100ms returned after %v, frozen %v", d, f.Frozen())
	}
	run("crash", "-dir", f.Dir())
	ibsim, _ := f.PIDs()
	if err := syscall.Kill(ibsim, 0); err != syscall.ESRCH {
		t.Errorf("ibsim (pid %d) still there after simfab crash (%v)", ibsim, err)
	}
}
