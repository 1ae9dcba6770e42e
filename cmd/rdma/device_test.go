package rdma

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// TestDeviceErrors checks what each tool says, and how it exits, when
// the device does not open. The pingpongs and ibv_asyncwatch name an
// unknown device in rdma-core's words, rdma_bw in perftest's.
func TestDeviceErrors(t *testing.T) {
	failOpen := func(err error) func(string) (*verbs.Context, error) {
		return func(string) (*verbs.Context, error) { return nil, err }
	}
	tools := []struct {
		name, notFound string
		run            func(dev string, err error) error
	}{
		{"pingpong", "IB device nosuch not found", func(dev string, err error) error {
			_, _, _, err = ppDevice(&ppOptions{Device: dev, IBPort: 1, open: failOpen(err)})
			return err
		}},
		{"ibv_asyncwatch", "IB device nosuch not found", func(dev string, err error) error {
			return asyncwatchRun(&asyncwatchOptions{Device: dev, open: failOpen(err)})
		}},
		{"rdma_bw", "IB device 'nosuch' wasn't found", func(dev string, err error) error {
			f, _, _ := cmdutil.NewTestFactory(nil)
			return rdmaBwRun(&rdmaBwOptions{IO: f.IO, Device: dev, IBPort: 1, GIDIndex: -1, open: failOpen(err)})
		}},
	}
	tests := []struct {
		name     string
		device   string
		err      error
		want     string // "" for the tool's notFound
		wantCode int
	}{
		{"no verbs", "", verbs.ErrNoVerbs, verbs.ErrNoVerbs.Error(), cmdutil.ExitFailure},
		{"unknown device", "nosuch", fmt.Errorf("nosuch: %w", verbs.ErrDeviceNotFound), "", cmdutil.ExitUsage},
		{"no devices", "", fmt.Errorf("no RDMA devices found: %w", verbs.ErrDeviceNotFound), "no RDMA devices found: no such RDMA device", cmdutil.ExitFailure},
		{"open fails", "rxe0", &verbs.VerbError{Verb: "ibv_open_device", Object: "rxe0", Err: errors.New("boom")}, "rxe0: ibv_open_device: boom", cmdutil.ExitFailure},
	}
	for _, tool := range tools {
		for _, tt := range tests {
			t.Run(tool.name+"/"+tt.name, func(t *testing.T) {
				want := tt.want
				if want == "" {
					want = tool.notFound
				}
				err := tool.run(tt.device, tt.err)
				if diff := cmp.Diff(want, fmt.Sprint(err)); diff != "" {
					t.Errorf("unexpected error (-want +got):\n%s", diff)
				}
				if code := cmdutil.ExitCode(err); code != tt.wantCode {
					t.Errorf("exit %d, want %d", code, tt.wantCode)
				}
			})
		}
	}
}
