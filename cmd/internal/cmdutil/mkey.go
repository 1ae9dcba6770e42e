package cmdutil

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
)

// addMKeyFlag registers -y/--m_key on c, once: a tool that discovers the
// fabric gets it from AddDiscoveryFlags as well as from FlagsMKey.
func addMKeyFlag(c *cobra.Command, o *CommonOptions) {
	if c.Flags().Lookup("m_key") != nil {
		return
	}
	c.Flags().StringVarP(&o.mkeyArg, "m_key", "y", "", "M_Key to send in every SMP, decimal or 0x hex; not a number (x): ask for it (default: ibdiag.conf's m_key, else 0)")
}

// finishMKey parses -y into o.MKey over what ibdiag.conf's m_key set. A
// value that is not a number ("x") has the operator type the key at a
// prompt, as infiniband-diags does (getpass), so that it stays out of the
// shell's history and the process list; a malformed number is an error.
// The prompt goes to errOut, the key is read from in.
func (o *CommonOptions) finishMKey(in io.Reader, errOut io.Writer) error {
	if o.mkeyArg == "" {
		return nil
	}
	n, err := ParseUintArg(o.mkeyArg, 1<<64-1)
	if err == nil {
		o.MKey = n
		return nil
	}
	if c := o.mkeyArg[0]; c >= '0' && c <= '9' {
		return UsageErrorf("invalid M_Key %q: %v", o.mkeyArg, err)
	}
	typed, rerr := ReadSecret(in, errOut, "M_Key: ")
	if rerr != nil {
		return UsageErrorf("invalid M_Key %q, and none could be read at the prompt: %v", o.mkeyArg, rerr)
	}
	if n, err = ParseUintArg(typed, 1<<64-1); err != nil {
		return UsageErrorf("invalid M_Key typed at the prompt: %v", err)
	}
	o.MKey = n
	return nil
}

// ReadSecret writes prompt to errOut and reads one line from in, with the
// terminal's echo off when in is one: a key typed at a prompt, as
// infiniband-diags reads one with getpass. The line's end is dropped;
// errOut gets the newline nothing echoed.
func ReadSecret(in io.Reader, errOut io.Writer, prompt string) (string, error) {
	fmt.Fprint(errOut, prompt)
	defer fmt.Fprintln(errOut)
	if f, ok := in.(*os.File); ok {
		if t, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
			quiet := *t
			quiet.Lflag &^= unix.ECHO
			if err := unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, &quiet); err == nil {
				defer unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, t)
			}
		}
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	switch {
	case err == nil, errors.Is(err, io.EOF) && line != "":
		return strings.TrimRight(line, "\r\n"), nil
	case errors.Is(err, io.EOF):
		return "", errors.New("end of input")
	}
	return "", err
}

// mkeyHint is what RenderError adds to a timeout of an SMP: a port whose
// M_Key check fails drops the SMP without an answer (IBA 14.2.4), which
// looks just like an unreachable port, so the line says which key went.
func mkeyHint(err error) string {
	var te *madrpc.TimeoutError
	if !errors.As(err, &te) || !te.MaybeMKeyProtected() {
		return ""
	}
	if te.MKey == 0 {
		return "; an M_Key protected port does not answer SMPs without its M_Key, and none was sent (-y gives one)"
	}
	return fmt.Sprintf("; an M_Key protected port does not answer SMPs without its M_Key, and 0x%016x was sent (-y)", te.MKey)
}
