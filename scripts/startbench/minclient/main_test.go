package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/internal/simfabric"
)

func TestMain(m *testing.M) { simfabric.Main(m) }

// TestIntegrationSameAsSmpquery checks that the floor does the C tool's
// work: its output is smpquery's for the same MAD, byte for byte.
func TestIntegrationSameAsSmpquery(t *testing.T) {
	f := simfabric.ForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want, errOut, code, err := f.RunReference(ctx, "Hca1", "smpquery", "-D", "portinfo", "0,1", "1")
	if err != nil || code != 0 {
		t.Fatalf("smpquery: exit %d, err %v, stderr:\n%s", code, err, errOut)
	}
	env := map[string]string{}
	for _, kv := range f.Env("Hca1") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	var got bytes.Buffer
	if err := run(ctx, func(k string) string { return env[k] }, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Errorf("minclient against smpquery -D portinfo 0,1 1 (-want +got):\n%s", diff)
	}
}
