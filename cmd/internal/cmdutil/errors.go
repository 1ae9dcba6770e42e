package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Exit codes shared by every tool.
const (
	ExitOK       = 0 // success
	ExitFindings = 1 // the tool ran and found problems (errors, mismatches)
	ExitUsage    = 2 // bad flags, arguments or addresses
	ExitFailure  = 3 // the tool could not do its work (device, fabric, I/O)
	// ExitInterrupted is the shell's code for a process ended by SIGINT
	// (128+2); after SIGTERM a tool's code is 143 (128+15). The ibtool
	// binary then dies of the signal itself (sigrelay.Exit), and its
	// parent sees the same status.
	ExitInterrupted = 130
)

// UsageError marks an error in what the operator typed: flags, arguments,
// device names, addresses. It exits with ExitUsage. Its message is one line;
// when Syntax is set (an unknown flag, a wrong number of arguments) a second
// line points to --help.
type UsageError struct {
	Err    error
	Syntax bool
}

func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *UsageError) Unwrap() error { return e.Err }

// UsageErrorf builds a UsageError from a format.
func UsageErrorf(format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...)}
}

// FindingsError reports that a checking tool ran to completion and found
// problems; it exits with ExitFindings. Its message is a summary line.
type FindingsError struct{ Summary string }

func (e *FindingsError) Error() string { return e.Summary }

// ContextError adds what the command was doing to an error as it unwinds,
// e.g. "resolving path to fe80::2:c903:0:1492". It prints as "context: err".
type ContextError struct {
	Context string
	Err     error
}

func (e *ContextError) Error() string { return e.Context + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ContextError) Unwrap() error { return e.Err }

// WithContext wraps err with what was being done; nil stays nil.
func WithContext(err error, format string, a ...any) error {
	if err == nil {
		return nil
	}
	return &ContextError{Context: fmt.Sprintf(format, a...), Err: err}
}

// InterruptedError reports that SIGINT or SIGTERM came while the tool ran;
// it exits with 128 plus the signal's number (ExitInterrupted for SIGINT
// and for a nil Signal), as a shell reports a process the signal ended.
// Err is what the tool returned, nil if it finished all the same.
type InterruptedError struct {
	Err    error
	Signal os.Signal
}

// Error names the signal only: what the tool returned is mostly what the
// signal cut short (RenderError shows it at -v).
func (e *InterruptedError) Error() string {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return "interrupted by " + unix.SignalName(s)
	}
	return "interrupted"
}

// Code is the exit code: 128 plus the signal's number.
func (e *InterruptedError) Code() int {
	if s, ok := e.Signal.(syscall.Signal); ok && s > 0 {
		return 128 + int(s)
	}
	return ExitInterrupted
}

// Unwrap returns the error the interrupted work returned.
func (e *InterruptedError) Unwrap() error { return e.Err }

// StatusError reports findings with the exit code the tool's script gives
// them (ibcheckport's 255, ibchecknet's count of problems); its message is
// a summary line.
type StatusError struct {
	Code    int
	Summary string
}

func (e *StatusError) Error() string { return e.Summary }

// ExitCode maps an error returned by a command to the process exit code.
// Several errors joined (errors.Join) exit with the highest code among
// them: a runtime failure outranks a usage error.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var interrupted *InterruptedError
	if errors.As(err, &interrupted) {
		return interrupted.Code()
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		code := ExitOK
		for _, e := range joined.Unwrap() {
			code = max(code, ExitCode(e))
		}
		return code
	}
	var status *StatusError
	if errors.As(err, &status) {
		return status.Code
	}
	var usage *UsageError
	var findings *FindingsError
	switch {
	case errors.As(err, &usage), errors.Is(err, ErrUnknownTool):
		return ExitUsage
	case errors.As(err, &findings):
		return ExitFindings
	}
	return ExitFailure
}

// RenderError writes err for an operator: one line "tool: message" naming the
// root cause; at verbosity 1 and above, one indented "while ..." line per
// context layer follows, innermost first. Several errors joined
// (errors.Join) are written one after another in that way.
func RenderError(w io.Writer, tool string, err error, verbosity int) {
	if err == nil {
		return
	}
	var interrupted *InterruptedError
	if errors.As(err, &interrupted) {
		fmt.Fprintf(w, "%s: %s\n", tool, interrupted.Error())
		if e := interrupted.Err; verbosity > 0 && e != nil && !errors.Is(e, context.Canceled) {
			fmt.Fprintf(w, "  the tool returned: %s\n", strings.TrimRight(e.Error(), "\n"))
		}
		return
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			RenderError(w, tool, e, verbosity)
		}
		return
	}
	var contexts []string
	root := err
	for {
		var ce *ContextError
		if !errors.As(root, &ce) {
			break
		}
		contexts = append(contexts, ce.Context)
		root = ce.Err
	}
	msg := strings.TrimRight(root.Error(), "\n") + mkeyHint(root)
	if verbosity == 0 && len(contexts) > 0 {
		// Without -v the outermost context still says what failed.
		msg = contexts[0] + ": " + msg
		contexts = nil
	}
	fmt.Fprintf(w, "%s: %s\n", tool, strings.TrimRight(msg, "\n"))
	for i := len(contexts) - 1; i >= 0; i-- {
		fmt.Fprintf(w, "  while %s\n", contexts[i])
	}
}

// ScriptFailed is the exit code of a per-node check script that failed.
const ScriptFailed = 255
