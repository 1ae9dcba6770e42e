package rdma

import (
	"testing"

	"github.com/ibtool/ibtool/pkg/verbs"
)

// The rest of bwSession needs a device (verbs.Context): make test-vm runs
// it on Soft-RoCE.

func TestPathMTU(t *testing.T) {
	tests := []struct {
		name          string
		local, remote verbs.MTU
		flag          verbs.MTU
		want          verbs.MTU
	}{
		{"both ports alike", verbs.MTU4096, verbs.MTU4096, 0, verbs.MTU4096},
		{"the smaller port's", verbs.MTU4096, verbs.MTU1024, 0, verbs.MTU1024},
		{"the local port's", verbs.MTU512, verbs.MTU2048, 0, verbs.MTU512},
		{"-m below both", verbs.MTU4096, verbs.MTU2048, verbs.MTU256, verbs.MTU256},
		{"-m above the ports'", verbs.MTU1024, verbs.MTU1024, verbs.MTU4096, verbs.MTU1024},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &rdmaBwOptions{MTU: int(tt.flag)}
			got := pathMTU(o, bwDest{MTU: int(tt.local)}, bwDest{MTU: int(tt.remote)})
			if got != tt.want {
				t.Errorf("pathMTU %d, want %d", got, tt.want)
			}
		})
	}
}
