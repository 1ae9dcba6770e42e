package cmd

import (
	"bytes"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// testFactory returns a Factory on buffers with the given environment.
func testFactory(env map[string]string) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	f := &Factory{
		IO:      IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Getenv:  func(k string) string { return env[k] },
		Version: "test",
	}
	return f, &out, &errOut
}

// cmpCommonOptions compares CommonOptions by their parsed flags, leaving
// out the context the command runs in.
var cmpCommonOptions = cmp.Options{
	cmp.AllowUnexported(CommonOptions{}),
	cmpopts.IgnoreFields(CommonOptions{}, "ctx"),
}
