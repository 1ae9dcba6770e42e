package vs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:        "ibsysstat",
		Light:       true,
		Summary:     "ask a port's ibsysstat server for its host name or CPUs, or be one (-S)",
		New:         func(f *cmdutil.Factory) *cobra.Command { return newIbsysstatCmd(f, nil) },
		SignalIsEnd: true,
	})
}

// sysstatAttrs are ibsysstat's ops: the OpenIB sysstat class's attributes.
var sysstatAttrs = map[string]mad.AttrID{"ping": mad.AttrSysstatPing, "host": mad.AttrSysstatHost, "cpu": mad.AttrSysstatCPU}

// ibsysstatOptions are ibsysstat's parsed flags and arguments.
type ibsysstatOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	Target endport.Target
	Attr   mad.AttrID
	vendorClassFlags
}

func newIbsysstatCmd(f *cmdutil.Factory, runF func(*ibsysstatOptions) error) *cobra.Command {
	o := &ibsysstatOptions{IO: f.IO, Attr: mad.AttrSysstatPing}
	c := &cobra.Command{
		Use:   "ibsysstat [options] <dest lid|guid> [<op>]",
		Short: "ask a port's ibsysstat server for its host name or CPUs, or be one (-S)",
		Long: `ibsysstat asks the ibsysstat server (ibsysstat -S) at a port for one of:
ping (the default: does it answer), host (its host and domain name) or cpu
(its processors' model and MHz), using the OpenIB sysstat vendor class
(0x33). With -S it is the server, until it is stopped.

One MAD carries 216 bytes: a server with more CPUs than fit lists those that
do and ends with a line saying how many it left out.`,
		Example: `  ibsysstat -S           # on the target host
  ibsysstat 12 host      # its host name
  ibsysstat 12 cpu`,
		Args: cmdutil.ArgsRange(0, 2),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			serve, err := o.finish(args)
			if err != nil {
				return err
			}
			if serve {
				return pingServe(o.Common.Context(), f, &o.Common, o.IO, mad.ClassOpenIBSysstat, o.OUI, true, func(h mad.Header) mad.OpenIBText { return sysstatReply(h.AttrID) })
			}
			if len(args) == 0 {
				return &cmdutil.UsageError{Err: errors.New("expected <dest lid|guid>"), Syntax: true}
			}
			if len(args) > 1 {
				a, ok := sysstatAttrs[args[1]]
				if !ok {
					return cmdutil.UsageErrorf("invalid op %q: want ping, host or cpu", args[1])
				}
				o.Attr = a
			}
			t, err := o.Common.ParseTarget(args[0])
			if err != nil {
				return err
			}
			o.Target = t
			if runF != nil {
				return runF(o)
			}
			return ibsysstatRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsSA)
	cmdutil.AddTargetFlags(c, &o.Common, "LGD")
	o.add(c)
	return c
}

// sysstatReply returns the text a server answers attr with: its host name
// (cut to one MAD), its CPU list (whole, to go with RMPP as
// infiniband-diags' server sends a longer one) or nothing.
func sysstatReply(attr mad.AttrID) mad.OpenIBText {
	switch attr {
	case mad.AttrSysstatHost:
		return hostAndDomain()
	case mad.AttrSysstatCPU:
		return mad.OpenIBText(cpuInfo("/proc/cpuinfo"))
	}
	return ""
}

// maxCPUs is how many processors ibsysstat's server lists at most, as
// infiniband-diags' MAX_CPUS.
const maxCPUs = 256

// cpuInfo lists the processors of a /proc/cpuinfo file as ibsysstat does,
// "cpu N: model M MHZ F" a line, M and F as the file has them after the
// colon, "(null)" when missing.
func cpuInfo(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return []byte("couldn't open /proc/cpuinfo\n")
	}
	defer f.Close()
	type cpu struct{ model, mhz *string }
	var cpus []cpu
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "processor\t") {
			if len(cpus) == maxCPUs {
				break
			}
			cpus = append(cpus, cpu{})
			continue
		}
		_, val, ok := strings.Cut(line, ":")
		if !ok || len(cpus) == 0 {
			continue
		}
		switch {
		case strings.HasPrefix(line, "model name\t"):
			cpus[len(cpus)-1].model = &val
		case strings.HasPrefix(line, "cpu MHz\t"):
			cpus[len(cpus)-1].mhz = &val
		}
	}
	orNull := func(s *string) string {
		if s == nil {
			return "(null)"
		}
		return *s
	}
	var b []byte
	for i, c := range cpus {
		b = fmt.Appendf(b, "cpu %d: model %s MHZ %s\n", i, orNull(c.model), orNull(c.mhz))
	}
	return b
}

func ibsysstatRun(o *ibsysstatOptions) error {
	if err := o.Common.CheckGMPTarget(o.Target, "sysstat MADs"); err != nil {
		return err
	}
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	p, err := o.Common.GMPTarget(x, o.Target, "sysstat MADs")
	if err != nil {
		return err
	}
	r, err := x.Do(o.Common.Context(), &madrpc.Request{Path: p, Class: mad.ClassOpenIBSysstat, Method: mad.MethodGet, AttrID: o.Attr, Name: sysstatName(o.Attr), OUI: o.OUI})
	if err != nil {
		return err
	}
	var text mad.OpenIBText
	_ = text.UnmarshalBinary(r.Data()) // takes any data
	if o.Common.JSON {
		return cmdutil.WriteJSONDocument(o.IO.Out, sysstatDoc{Op: sysstatName(o.Attr), Reply: string(text), Target: p.String()})
	}
	if o.Attr == mad.AttrSysstatPing {
		_, err = fmt.Fprintln(o.IO.Out, "sysstat ping succeeded")
		return err
	}
	_, err = fmt.Fprintln(o.IO.Out, text) // puts: the text and a newline
	return err
}

// sysstatDoc is ibsysstat's --json document.
type sysstatDoc struct {
	Op     string `json:"op"`
	Reply  string `json:"reply"`
	Target string `json:"target"`
}

func sysstatName(a mad.AttrID) string {
	for name, id := range sysstatAttrs {
		if id == a {
			return name
		}
	}
	return fmt.Sprintf("attribute %#x", uint16(a))
}
