package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestWithoutLibibverbs runs ibtool where libibverbs.so.1 cannot be
// loaded (an empty file bind-mounted over it, in a mount namespace of the
// test's own): the tools that use no verbs start as always, and a verbs
// tool fails with one line that says why, exit 3.
func TestWithoutLibibverbs(t *testing.T) {
	out, err := exec.Command("ldconfig", "-p").Output()
	if err != nil {
		t.Fatalf("ldconfig -p: %v", err)
	}
	m := regexp.MustCompile(`libibverbs\.so\.1 \(.*\) => (\S+)`).FindSubmatch(out)
	if m == nil {
		t.Skip("libibverbs.so.1 is not installed: nothing to hide")
	}
	lib := string(m[1])
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatalf("unshare (util-linux) is needed: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.so")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// run runs ibtool with args, libibverbs hidden.
	run := func(args ...string) (stdout, stderr string, code int) {
		t.Helper()
		script := `mount --bind "$1" "$2" || exit 100; shift 2; exec "$@"`
		cmd := exec.Command("unshare", append([]string{"-m", "sh", "-c", script, "sh", empty, lib, ibtoolBin}, args...)...)
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code = cmd.ProcessState.ExitCode()
		if err != nil && code < 0 {
			t.Fatalf("ibtool %v: %v", args, err)
		}
		if code == 100 {
			t.Fatalf("could not hide %s: %s", lib, e.String())
		}
		return o.String(), e.String(), code
	}

	if stdout, stderr, code := run("decode_mad", "--help"); code != 0 || !strings.Contains(stdout, "decode_mad") {
		t.Errorf("decode_mad --help without libibverbs: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	for _, tool := range []string{"ibv_devinfo", "rdma_bw"} {
		args := []string{tool}
		if tool == "rdma_bw" {
			args = append(args, "192.0.2.1")
		}
		_, stderr, code := run(args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 3 || len(lines) != 1 || !strings.HasPrefix(lines[0], tool+": libibverbs could not be loaded: ") {
			t.Errorf("%s without libibverbs: exit %d (want 3), stderr:\n%s", tool, code, stderr)
		}
	}
}
