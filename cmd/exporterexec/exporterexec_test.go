package exporterexec

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

// TestExporterArgs checks that every argument, flags and --help
// included, is passed on as it was given.
func TestExporterArgs(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--help"},
		{"--version"},
		{"--web.listen-address", ":1", "--web.listen-address=:2", "-C", "mlx5_0", "--sudo", "extra"},
	} {
		var got *exporterOptions
		err := cmdtest.ParseToolArgs(t, "exporter", func(f *cmdutil.Factory) *cobra.Command {
			return newExporterCmd(f, func(o *exporterOptions) error { got = o; return nil })
		}, args)
		if err != nil {
			t.Errorf("%q: %v", args, err)
			continue
		}
		if diff := cmp.Diff(args, got.Args); diff != "" {
			t.Errorf("%q: arguments passed on (-want +got):\n%s", args, diff)
		}
	}
}

// fakeBin makes an executable file named name in dir.
func fakeBin(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExporterRun(t *testing.T) {
	beside, inPath := t.TempDir(), t.TempDir()
	besideBin := fakeBin(t, beside, Binary)
	pathBin := fakeBin(t, inPath, Binary)
	// A symlink to ibtool in another directory: the binary is looked for
	// beside the real ibtool.
	links := t.TempDir()
	self := filepath.Join(beside, "ibtool")
	fakeBin(t, beside, "ibtool")
	if err := os.Symlink(self, filepath.Join(links, "exporter")); err != nil {
		t.Fatal(err)
	}
	lookPath := func(dir string) func(string) (string, error) {
		return func(file string) (string, error) {
			p := filepath.Join(dir, file)
			if _, err := os.Stat(p); err != nil {
				return "", exec.ErrNotFound
			}
			return p, nil
		}
	}
	tests := []struct {
		name     string
		self     string
		path     string // the directory PATH holds
		execErr  error
		wantPath string
		wantErr  error
	}{
		{name: "beside ibtool", self: self, path: inPath, wantPath: besideBin},
		{name: "beside ibtool through a symlink", self: filepath.Join(links, "exporter"), path: inPath, wantPath: besideBin},
		{name: "in PATH", self: filepath.Join(inPath, "..", "elsewhere", "ibtool"), path: inPath, wantPath: pathBin},
		{name: "not installed", self: filepath.Join(t.TempDir(), "ibtool"), path: t.TempDir(), wantErr: ErrNotInstalled},
		{name: "exec fails", self: self, path: inPath, execErr: os.ErrPermission, wantPath: besideBin, wantErr: os.ErrPermission},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gotPath string
			var gotArgv []string
			o := &exporterOptions{
				Args:       []string{"--collector.hca"},
				Executable: func() (string, error) { return tt.self, nil },
				LookPath:   lookPath(tt.path),
				Exec: func(p string, argv, env []string) error {
					gotPath, gotArgv = p, argv
					return tt.execErr
				},
				Environ: func() []string { return []string{"A=1"} },
			}
			err := exporterRun(o)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("exporterRun: %v, want %v", err, tt.wantErr)
			}
			if gotPath != tt.wantPath {
				t.Errorf("ran %q, want %q", gotPath, tt.wantPath)
			}
			if tt.wantPath != "" {
				if diff := cmp.Diff([]string{Binary, "--collector.hca"}, gotArgv); diff != "" {
					t.Errorf("argv (-want +got):\n%s", diff)
				}
			}
			if err != nil && cmdutil.ExitCode(err) != cmdutil.ExitFailure {
				t.Errorf("exit code %d for %v, want %d", cmdutil.ExitCode(err), err, cmdutil.ExitFailure)
			}
		})
	}
}
