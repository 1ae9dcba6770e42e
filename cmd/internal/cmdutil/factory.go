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
	// names rewrites the output for --int-names (intnames.go). Every
	// Factory has one (NewFactory, NewTestFactory, Run.FactoryFor), so a
	// tool's command takes --int-names however it is built: for a run,
	// for the man pages or for the shell completions.
	names *fieldNamer
	// signalsCaught, in a run's Factory, is closed once the process
	// catches SIGINT and SIGTERM (awaitSignals).
	signalsCaught <-chan struct{}
}

// awaitSignals returns once a signal can no longer kill the process
// outright: before attaching to ibsim, which a client that dies half way
// through its attach can abort, and whose slot a killed client keeps.
// Outside a run (tests, man pages) it returns at once.
func (f *Factory) awaitSignals() {
	if f.signalsCaught != nil {
		<-f.signalsCaught
	}
}

// nameFields puts a fieldNamer in front of f's output.
func (f *Factory) nameFields() *Factory {
	f.names = &fieldNamer{w: f.IO.Out}
	f.IO.Out = f.names
	return f
}

// plainOut is f's output without its fieldNamer.
func (f *Factory) plainOut() io.Writer {
	if f.names != nil {
		return f.names.w
	}
	return f.IO.Out
}

// NewFactory returns a Factory on the process's real streams and environment.
func NewFactory(version string) *Factory {
	f := &Factory{
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
	return f.nameFields()
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
