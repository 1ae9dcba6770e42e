package endport

import (
	"errors"
	"io/fs"
	"strconv"
	"syscall"
)

// Step names the part of Open that failed.
type Step uint8

// The steps of Open, in order.
const (
	// StepSpec: the end-port spec did not parse (a *rdma.ParseError).
	StepSpec Step = iota
	// StepSetup: what the options and the environment name could not be
	// used: an ibdiag.conf that did not read, a sysfs root that is no
	// directory (*SysfsRootError), simulator variables that do not parse.
	StepSetup
	// StepResolve: no local port matches the spec (a *ResolveError, or
	// a *ScopeError when the targets' end ports disagree with it).
	StepResolve
	// StepTransport: the port's umad device, or the simulator, did not
	// open (a *rdma.SysError names the device and the errno).
	StepTransport
	// StepSAPath: WithSAPath's path did not resolve through the SA.
	StepSAPath
)

var stepNames = [...]string{
	StepSpec:      "parsing",
	StepSetup:     "setting up",
	StepResolve:   "finding",
	StepTransport: "opening",
	StepSAPath:    "resolving the SA path of",
}

// String names the step as a verb: "parsing", "finding", "opening".
func (s Step) String() string {
	if int(s) < len(stepNames) {
		return stepNames[s]
	}
	return "Step(" + strconv.Itoa(int(s)) + ")"
}

// OpenError reports why Open, OpenLocal or OpenTransport failed. Err is
// the cause, for errors.As and errors.Is: a *ResolveError, a
// *rdma.SysError (errors.Is(err, os.ErrPermission) when the umad device
// is not accessible), an *ibdiagconf.LineError, a *SysfsRootError.
type OpenError struct {
	Step Step   // what failed
	Spec string // the end port as given, in Local's String form; "" for the default
	Err  error
}

// Error says which end port failed at which step, and why:
// `opening end port "mlx5_0/1": /dev/infiniband/umad0: permission denied`.
// A *ResolveError names the end port itself and is said alone.
func (e *OpenError) Error() string {
	var re *ResolveError
	if errors.As(e.Err, &re) {
		return e.Err.Error()
	}
	port := "the default end port"
	if e.Spec != "" {
		port = "end port " + strconv.Quote(e.Spec)
	}
	return e.Step.String() + " " + port + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *OpenError) Unwrap() error { return e.Err }

// SysfsRootError reports a sysfs mount point (WithSysfs, IBTOOL_SYSFS)
// that is not a directory.
type SysfsRootError struct {
	Root string
	Err  error // from os.Stat, or why it is no directory
}

// Error names the root and says what is wanted.
func (e *SysfsRootError) Error() string {
	return "sysfs root " + e.Root + ": " + e.Reason() + "; want the sysfs mount point, such as /sys"
}

// Reason says what is wrong with the root: "no such directory", "not a
// directory", or the stat error.
func (e *SysfsRootError) Reason() string {
	switch {
	case errors.Is(e.Err, errNotDir):
		return "not a directory"
	case e.Missing():
		return "no such directory"
	}
	return e.Err.Error()
}

// Missing reports whether the root is not there, or is not a directory:
// a mistake in its name rather than a problem reading it.
func (e *SysfsRootError) Missing() bool {
	return errors.Is(e.Err, fs.ErrNotExist) || errors.Is(e.Err, syscall.ENOTDIR) || errors.Is(e.Err, errNotDir)
}

// Unwrap returns the cause.
func (e *SysfsRootError) Unwrap() error { return e.Err }

var (
	errNotDir   = errors.New("not a directory")
	errSAPathDR = errors.New("a directed route: SA queries are LID routed; give a LID, port GUID, GID or IBPath(...)")
)
