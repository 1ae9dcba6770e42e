package cmd

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// testFactory returns a Factory on buffers with the given environment.
func testFactory(env map[string]string) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	f := &Factory{
		IO:      IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Getenv:  func(k string) string { return env[k] },
		Version: "test",
	}
	return f, &out, &errOut
}

// cmpCommonOptions compares CommonOptions by their parsed flags, leaving
// out the context the command runs in.
var cmpCommonOptions = cmp.Options{
	cmp.AllowUnexported(CommonOptions{}),
	cmpopts.IgnoreFields(CommonOptions{}, "ctx"),
}

// goldenCase is one run of a local tool on a sysfs fixture; its output is
// testdata/<tool>/<fixture>/<name>.golden.
type goldenCase struct {
	fixture  string
	name     string
	args     []string
	wantCode int
	wantErr  string
	// cExitsZero marks a failure infiniband-diags keeps quiet about: it
	// prints a default for what it could not read and exits 0, where
	// ibtool prints the same and then says what it could not read.
	cExitsZero bool
}

// checkGolden checks a run's exit code, error text and output against
// what the case and its golden file say.
func checkGolden(t *testing.T, tool, fixture, name string, wantCode int, wantErr, got string, err error) {
	t.Helper()
	if code := ExitCode(err); code != wantCode {
		t.Errorf("exit code %d (%v), want %d", code, err, wantCode)
	}
	if err != nil && err.Error() != wantErr {
		t.Errorf("error %q, want %q", err, wantErr)
	}
	checkSysfsGolden(t, filepath.Join("testdata", tool, fixture, name+".golden"), got)
}

// checkParseErr checks what parsing a tool's arguments returned: a usage
// error containing wantErr, or no error when wantErr is empty. It reports
// whether the case goes on to check the parsed options.
func checkParseErr(t *testing.T, err error, wantErr string) bool {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) || ExitCode(err) != ExitUsage {
			t.Errorf("error %v (exit %d), want usage error %q", err, ExitCode(err), wantErr)
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}
