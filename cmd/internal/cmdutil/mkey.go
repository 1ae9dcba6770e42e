package cmdutil

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/mad"
)

// addMKeyFlag registers -y/--m_key on c, once: a tool that discovers the
// fabric gets it from AddDiscoveryFlags as well as from FlagsMKey.
func addMKeyFlag(c *cobra.Command, o *CommonOptions) {
	if c.Flags().Lookup("m_key") != nil {
		return
	}
	c.Flags().StringVarP(&o.mkeyArg, "m_key", "y", "", "M_Key to send in every SMP, decimal or 0x hex (default: ibdiag.conf's m_key, else 0)")
}

// finishMKey parses -y into o.MKey over what ibdiag.conf's m_key set.
func (o *CommonOptions) finishMKey() error {
	if o.mkeyArg == "" {
		return nil
	}
	n, err := ParseUintArg(o.mkeyArg, 1<<64-1)
	if err != nil {
		return UsageErrorf("invalid M_Key %q: %v", o.mkeyArg, err)
	}
	o.MKey = n
	return nil
}

// mkeyHint is what RenderError adds to a timeout of an SMP: a port whose
// M_Key check fails drops the SMP without an answer (IBA 14.2.4), which
// looks just like an unreachable port, so the line says which key went.
func mkeyHint(err error) string {
	var te *mad.TimeoutError
	if !errors.As(err, &te) || !te.MaybeMKeyProtected() {
		return ""
	}
	if te.MKey == 0 {
		return "; an M_Key protected port does not answer SMPs without its M_Key, and none was sent (-y gives one)"
	}
	return fmt.Sprintf("; an M_Key protected port does not answer SMPs without its M_Key, and 0x%016x was sent (-y)", te.MKey)
}
