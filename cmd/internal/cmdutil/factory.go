package cmdutil

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// IOStreams are the standard streams a command reads and writes, with whether
// each output is a terminal (tables align on a terminal and are
// tab-separated when piped; progress shows only on a terminal).
type IOStreams struct {
	In          io.Reader
	Out         io.Writer
	ErrOut      io.Writer
	OutIsTTY    bool
	ErrOutIsTTY bool
}

// Factory carries what a command needs from its surroundings: the streams,
// the environment and the run's access to the fabric. Tests build one with
// buffers and a map-backed Getenv (NewTestFactory).
type Factory struct {
	IO IOStreams
	// Getenv reads an environment variable; tests replace it.
	Getenv func(string) string
	// Version is the ibtool version string printed by -V.
	Version string
	// IBDiagConf is the ibdiag.conf tools read before -z's file and
	// their flags: $IBTOOL_IBDIAG_CONF, else infiniband-diags' default.
	// Empty: none (tests).
	IBDiagConf string
	// fabric is the run's MAD access, opened on first use (OpenMAD) and
	// closed when the tool returns. Each run's Factory has its own.
	fabric *fabricAccess
	// names rewrites the run's output for --int-names (intnames.go).
	names *fieldNamer
}

// NewFactory returns a Factory on the process's real streams and environment.
func NewFactory(version string) *Factory {
	return &Factory{
		IO: IOStreams{
			In:          os.Stdin,
			Out:         os.Stdout,
			ErrOut:      os.Stderr,
			OutIsTTY:    isTerminal(os.Stdout),
			ErrOutIsTTY: isTerminal(os.Stderr),
		},
		Getenv:     os.Getenv,
		Version:    version,
		IBDiagConf: defaultIBDiagConf(os.Getenv),
	}
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
