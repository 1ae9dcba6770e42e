package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// requireTools skips t without the programs the package checks run, or
// fails it with IBTOOL_REQUIRE_BENCH=1 (make test; install-deps.sh
// installs rpm and systemd).
func requireTools(t *testing.T, progs ...string) {
	t.Helper()
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("IBTOOL_REQUIRE_BENCH") == "1" {
				t.Fatalf("%s missing (make deps)", p)
			}
			t.Skipf("%s missing (make deps)", p)
		}
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestIntegrationPackages builds the .deb and the .rpm of a staged tree
// from packaging/nfpm.yaml and checks them: both hold the binaries, the
// exporter's unit and /etc/default file; the .rpm installs into a scratch
// root (rpm --root), where systemd-analyze verifies the unit against the
// installed binary.
func TestIntegrationPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds packages")
	}
	requireTools(t, "rpm", "dpkg-deb", "systemd-analyze")
	t.Chdir("../..") // the description's paths are the repository's
	stage, out := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(stage, "usr/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"ibtool", "ibtool-exporter"} {
		if err := os.WriteFile(filepath.Join(stage, "usr/bin", b), []byte("#!/bin/sh\necho "+b+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"IBTOOL_STAGE": stage, "IBTOOL_ARCH": "amd64", "IBTOOL_VERSION": "1.2.3", "IBTOOL_LIBC_DEP": ""}
	getenv := func(k string) string { return env[k] }
	deb, rpm := filepath.Join(out, "ibtool.deb"), filepath.Join(out, "ibtool.rpm")
	for format, file := range map[string]string{"deb": deb, "rpm": rpm} {
		if err := build("packaging/nfpm.yaml", format, file, getenv); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
	}
	want := []string{"/usr/bin/ibtool", "/usr/bin/ibtool-exporter", "/usr/lib/systemd/system/ibtool-exporter.service", "/etc/default/ibtool-exporter"}
	debList, rpmList := run(t, "dpkg-deb", "-c", deb), run(t, "rpm", "-qlp", rpm)
	for _, w := range want {
		if !strings.Contains(debList, "."+w+"\n") {
			t.Errorf("the .deb has no %s:\n%s", w, debList)
		}
		if !strings.Contains(rpmList, w+"\n") {
			t.Errorf("the .rpm has no %s:\n%s", w, rpmList)
		}
	}
	if got := run(t, "dpkg-deb", "-f", deb, "Depends"); strings.TrimSpace(got) != "passwd" {
		t.Errorf(".deb Depends %q, want passwd (an empty libc dependency dropped)", got)
	}
	if got := run(t, "rpm", "-qp", "--scripts", rpm); !strings.Contains(got, "useradd --system") {
		t.Errorf("the .rpm's scripts do not make the exporter's user:\n%s", got)
	}
	if got := run(t, "rpm", "-qp", "--configfiles", rpm); !strings.Contains(got, "/etc/default/ibtool-exporter") {
		t.Errorf("/etc/default/ibtool-exporter is not a configuration file of the .rpm:\n%s", got)
	}

	// A scratch root: rpm's own database there, the package without its
	// scripts (useradd would write the root's /etc/passwd) and without
	// dependencies (the root has no other package).
	root := t.TempDir()
	run(t, "rpm", "--root", root, "--initdb")
	run(t, "rpm", "--root", root, "-i", "--nodeps", "--noscripts", rpm)
	for _, w := range want {
		if _, err := os.Stat(filepath.Join(root, w)); err != nil {
			t.Errorf("after rpm --root -i: %v", err)
		}
	}
	if got := run(t, "rpm", "--root", root, "-q", "ibtool"); !strings.HasPrefix(got, "ibtool-1.2.3-") {
		t.Errorf("rpm -q ibtool in the scratch root: %q", got)
	}
	// systemd-analyze --root resolves the unit's dependencies there: give
	// it the host's units beside the package's.
	if err := exec.Command("cp", "-rn", "/usr/lib/systemd/system/.", filepath.Join(root, "usr/lib/systemd/system")).Run(); err != nil {
		t.Fatal(err)
	}
	run(t, "systemd-analyze", "verify", "--root="+root, "/usr/lib/systemd/system/ibtool-exporter.service")
}
