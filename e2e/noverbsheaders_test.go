package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBuildWithoutVerbsHeaders builds ibtool with cgo where libibverbs'
// headers are not (an empty tmpfs over /usr/include/infiniband, in a
// mount namespace of the test's own), as `go install` does on a machine
// without libibverbs-dev, and checks that the binary has the cgo verbs
// driver: a verbs tool gets past loading libibverbs instead of saying it
// was built without verbs.
func TestBuildWithoutVerbsHeaders(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ibtool")
	}
	for _, tool := range []string{"unshare", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed: %v", tool, err)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "ibtool")
	// The header must be unreachable (exit 101) before go build runs;
	// CC -E proves it the way cgo would look.
	script := `
[ ! -d /usr/include/infiniband ] || mount -t tmpfs -o size=1m none /usr/include/infiniband || exit 100
printf '#include <infiniband/verbs.h>\n' | $(go env CC) -E -x c - >/dev/null 2>&1 && exit 101
exec go build -o "$1" .`
	cmd := exec.Command("unshare", "-m", "sh", "-c", script, "sh", bin)
	cmd.Dir = root
	// A flag of this run's own makes cgo packages compile again: the build
	// cache does not key on system headers, so a cached pkg/verbs would
	// hide an #include of <infiniband/verbs.h>.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1",
		fmt.Sprintf("CGO_CFLAGS=-O2 -g -DIBT_NOHEADERS_RUN=%d", time.Now().UnixNano()))
	out, err := cmd.CombinedOutput()
	switch code := cmd.ProcessState.ExitCode(); {
	case code == 100:
		t.Fatalf("could not hide /usr/include/infiniband: %s", out)
	case code == 101:
		t.Fatalf("<infiniband/verbs.h> is still found with /usr/include/infiniband hidden")
	case err != nil:
		t.Fatalf("go build with the verbs headers hidden: %v\n%s", err, out)
	}

	run := exec.Command(bin, "ibv_devinfo")
	var stderr strings.Builder
	run.Stderr = &stderr
	_ = run.Run() // no device on the bench: any exit, but not "built without verbs"
	if strings.Contains(stderr.String(), "built without verbs") {
		t.Errorf("ibtool built with cgo and without the headers has no verbs driver: %s", stderr.String())
	}
}
