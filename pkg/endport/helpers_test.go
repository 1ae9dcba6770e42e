package endport

import (
	"testing"

	"github.com/ibtool/ibtool/pkg/rdma"
)

func ptr[T any](v T) *T { return &v }

func mustGID(t testing.TB, s string) rdma.GID {
	t.Helper()
	g, err := rdma.ParseGID(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// errText returns err's message, or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
