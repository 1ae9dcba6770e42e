package cmdutil

import (
	"bytes"
	"strings"
)

// NewTestFactory returns a Factory on buffers with the given environment.
// It reads no ibdiag.conf unless env names one in IBTOOL_IBDIAG_CONF.
func NewTestFactory(env map[string]string) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	f := &Factory{
		IO:         IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Getenv:     func(k string) string { return env[k] },
		Version:    "test",
		IBDiagConf: env[ibdiagConfEnv],
	}
	return f.nameFields(), &out, &errOut
}
