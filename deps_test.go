package main

import (
	"os/exec"
	"strings"
	"testing"
)

// serverDeps are packages the ibtool binary must not link: the
// exporter's HTTP stack, whose package initialisation (TLS cipher
// tables, HTTP/2, protobuf descriptors, the default registry's
// collectors) every one-shot tool would pay at start. They belong to
// ibtool-exporter (cmd/ibtool-exporter).
var serverDeps = []string{
	"net/http",
	"crypto/tls",
	"github.com/prometheus/client_golang/prometheus",
	"github.com/prometheus/exporter-toolkit/web",
	"github.com/ibtool/ibtool/pkg/exporter",
	"github.com/ibtool/ibtool/cmd/exporter",
}

// TestNoServerDeps lists the ibtool binary's packages, as the Makefile
// builds it, and fails when one of serverDeps is among them.
func TestNoServerDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-tags", "netgo,osusergo", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	if !deps["github.com/ibtool/ibtool/cmd/exporterexec"] {
		t.Errorf("ibtool does not link cmd/exporterexec: no 'ibtool exporter'")
	}
	for _, p := range serverDeps {
		if deps[p] {
			t.Errorf("ibtool links %s: it belongs to ibtool-exporter only", p)
		}
	}
}
