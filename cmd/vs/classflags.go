package vs

import (
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
)

// vendorClassFlags are the flags ibping and ibsysstat share: -o, the OUI of
// their vendor class (OpenIB's unless given), and -S, serve the class.
type vendorClassFlags struct {
	OUI    uint32
	Server bool
	ouiArg string
}

// add registers -o and -S on c.
func (v *vendorClassFlags) add(c *cobra.Command) {
	v.OUI = mad.OUIOpenIB
	fl := c.Flags()
	fl.StringVarP(&v.ouiArg, "oui", "o", "", "use specified OUI number")
	fl.BoolVarP(&v.Server, "Server", "S", false, "start in server mode")
}

// finish parses -o and reports whether the tool serves (-S), which takes no
// destination among args.
func (v *vendorClassFlags) finish(args []string) (serve bool, err error) {
	if v.ouiArg != "" {
		if v.OUI, err = cmdutil.ParseOUI(v.ouiArg); err != nil {
			return false, err
		}
	}
	if v.Server && len(args) > 0 {
		return false, cmdutil.UsageErrorf("-S serves on the local port: no destination (%q)", args[0])
	}
	return v.Server, nil
}
