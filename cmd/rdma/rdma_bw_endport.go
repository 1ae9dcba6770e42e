package rdma

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// python-rdma's rdma_bw names its end port with LibIBOpts' -C/--Ca (a
// device name or node GUID) and -P/--Port (a port number, DEVICE/PORT, a
// port GUID or a GID), which share their destinations with perftest's -d
// and -i. ibtool takes both spellings; -C with -d, or -P with -i, name
// the same thing twice and are a usage error.

// addBwEndPortFlags registers -C/--Ca and -P/--Port.
func addBwEndPortFlags(c *cobra.Command, o *rdmaBwOptions) {
	fl := c.Flags()
	fl.StringVarP(&o.caArg, "Ca", "C", "", "the device by name or node GUID (python-rdma's; the same as -d)")
	fl.StringVarP(&o.portArg, "Port", "P", "", "the end port: a port number, DEVICE/PORT, port GUID or GID (python-rdma's; -i takes a number)")
}

// resolveBwEndPort turns -C and -P into -d's device and -i's port. A
// device name with a port number needs no lookup; any other form is found
// among devs' ports, as every tool's -C/-P is (endport.Local.Resolve).
func (o *rdmaBwOptions) resolveBwEndPort(c *cobra.Command, devs func() (endport.DeviceSource, error)) error {
	fl := c.Flags()
	if o.caArg == "" && o.portArg == "" {
		return nil
	}
	if fl.Changed("Ca") && fl.Changed("ib-dev") {
		return cmdutil.UsageErrorf("-C %q and -d %q both name the device; give one", o.caArg, o.Device)
	}
	if fl.Changed("Port") && fl.Changed("ib-port") {
		return cmdutil.UsageErrorf("-P %q and -i %d both name the port; give one", o.portArg, o.IBPort)
	}
	ca := o.caArg
	if ca == "" && o.portArg != "" && fl.Changed("ib-dev") {
		ca = o.Device // -d with python-rdma's -P number
	}
	l, err := endport.FromFlagArgs(ca, o.portArg)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	if l.Kind == endport.ByName && l.CA != "" && l.Port != 0 {
		o.Device, o.IBPort = l.CA, int(l.Port)
		return nil
	}
	if l.Kind == endport.ByName && l.CA != "" && o.portArg == "" && fl.Changed("ib-port") {
		o.Device = l.CA // -C with perftest's -i
		return nil
	}
	src, err := devs()
	if err != nil {
		return err
	}
	d, p, err := l.Resolve(src)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	o.Device, o.IBPort = d.Name, p.Number
	return nil
}

// localDevices lists the local RDMA devices from sysfs, as the local tools
// read them.
func localDevices(f *cmdutil.Factory) func() (endport.DeviceSource, error) {
	return func() (endport.DeviceSource, error) {
		fsys, root, err := f.LocalSysfs(&cmdutil.CommonOptions{})
		if err != nil {
			return nil, err
		}
		return rdma.NewFS(fsys, root), nil
	}
}

// debugf prints python-rdma's --debug lines on stderr: the report on
// stdout stays perftest's.
func (o *rdmaBwOptions) debugf(format string, a ...any) {
	if o.Debug > 0 {
		fmt.Fprintf(o.IO.ErrOut, "D: "+format+"\n", a...)
	}
}
