package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// smLIDLine is sminfo's report of the master SM's LID.
var smLIDLine = regexp.MustCompile(`^sminfo: sm lid (\d+) `)

// TestSMPortMatchesReference: -s/--sm_port names the SM whose SA resolves
// GUID targets; given the SM's LID the output is infiniband-diags', and a
// LID where no SM answers fails with a timeout that names that LID.
func TestSMPortMatchesReference(t *testing.T) {
	f := smallFabric(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "sminfo")
	m := smLIDLine.FindSubmatch(out)
	if err != nil || exit != 0 || m == nil {
		t.Fatalf("sminfo: exit %d, %v: %s%s", exit, err, out, errOut)
	}
	sm := string(m[1])
	for _, args := range [][]string{
		{"smpquery", "-s", sm, "-G", "nodeinfo", "0x100004"},
		{"ibaddr", "--sm_port", sm, "-G", "0x100004"},
		{"perfquery", "-s", sm, "-G", "0x100004", "1"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			mask := func(b []byte) []byte { return perfTrafficLines.ReplaceAll(b, []byte("$1N")) }
			sameOutput(t, f, "Hca1", mask, args, args)
		})
	}
	t.Run("no SM there", func(t *testing.T) {
		args := []string{"-s", "99", "-t", "100", "-G", "nodeinfo", "0x100004"}
		if _, _, exit, err := f.RunReference(ctx, "Hca1", "smpquery", args...); err != nil || exit == 0 {
			t.Errorf("reference smpquery %q: exit %d, %v; want a failure", args, exit, err)
		}
		ibtoolFails(t, f, "Hca1", 3, "to Lid 99: no response after 3 tries", "smpquery", args...)
	})
	t.Run("bad LID", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 2, `invalid --sm_port "0xc000"`, "perfquery", "-s", "0xc000", "-G", "0x100004")
	})
}

// TestErrorsOption: -e/--errors shows each retry and the final timeout on
// stderr as they happen, as libibmad's -e does, and the tool still ends
// with its one error line.
func TestErrorsOption(t *testing.T) {
	f := smallFabric(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := []string{"-e", "-t", "100", "nodeinfo", "99"}
	_, refErr, _, err := f.RunReference(ctx, "Hca1", "smpquery", args...)
	if err != nil {
		t.Fatal(err)
	}
	_, ourErr, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "smpquery", args...)
	if err != nil || exit != 3 {
		t.Fatalf("smpquery %q: exit %d, %v; want 3", args, exit, err)
	}
	for _, want := range []string{"retry 1 (timeout 100 ms)", "retry 2 (timeout 100 ms)", "timeout after 3 "} {
		if !strings.Contains(string(refErr), want) {
			t.Errorf("reference stderr lacks %q:\n%s", want, refErr)
		}
		if !strings.Contains(string(ourErr), want) {
			t.Errorf("ibtool stderr lacks %q:\n%s", want, ourErr)
		}
	}
	if !strings.Contains(string(ourErr), "smpquery: ") || !strings.Contains(string(ourErr), "Lid 99") {
		t.Errorf("ibtool stderr lacks the tool's error naming Lid 99:\n%s", ourErr)
	}
	t.Run("quiet without -e", func(t *testing.T) {
		_, errOut, _, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "smpquery", args[1:]...)
		if err != nil || strings.Contains(string(errOut), "retry") {
			t.Errorf("smpquery without -e: %v, stderr %q", err, errOut)
		}
	})
}
