package local

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibv_devices",
		Light:   true,
		Summary: "list the local RDMA devices and their node GUIDs",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbvDevicesCmd(f, nil) },
	})
}

// ibvDevicesOptions are ibv_devices' parsed flags and what it reads.
type ibvDevicesOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	// Sysfs opens the device tree.
	Sysfs func() (*rdma.FS, error)
}

func newIbvDevicesCmd(f *cmdutil.Factory, runF func(*ibvDevicesOptions) error) *cobra.Command {
	o := &ibvDevicesOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "ibv_devices",
		Short: "list the local RDMA devices and their node GUIDs",
		Long: `ibv_devices lists the RDMA devices user space can open (those under
class/infiniband_verbs in sysfs) with their node GUIDs, in the layout of
rdma-core's ibv_devices. A node GUID that does not read prints as
0000000000000000, as rdma-core prints it; ibv_devices then says on stderr
which file it could not read and exits with status 3.`,
		Args: cmdutil.ArgsRange(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if f.UseSim(&o.Common) {
				// libumad2sim shows the C tools a umad device only, and
				// rdma-core's ibv_devices fails there too.
				return errors.New("Failed to get IB devices list: the simulator has no verbs devices (ibsim carries MADs only)")
			}
			o.Sysfs = func() (*rdma.FS, error) { return cmdutil.OpenLocalSysfs(f, &o.Common) }
			if runF != nil {
				return runF(o)
			}
			return ibvDevicesRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsJSON)
	return c
}

// ibvDevice is one line of the listing.
type ibvDevice struct {
	Name     string    `json:"name"`
	NodeGUID rdma.GUID `json:"nodeGuid"`
}

// ibvDevicesRun prints the devices as rdma-core's ibv_devices does, then
// what it could not read: uverbsN entries it left out, node GUIDs it
// printed as 0.
func ibvDevicesRun(o *ibvDevicesOptions) error {
	fsys, err := o.Sysfs()
	if err != nil {
		return err
	}
	var problems cmdutil.SysfsProblems
	verbs, err := fsys.VerbsDevices()
	var skipped *rdma.SkippedError
	switch {
	case errors.As(err, &skipped):
		problems.Add(skipped)
	case err != nil:
		return cmdutil.WithContext(err, "Failed to get IB devices list")
	}
	devs := make([]ibvDevice, 0, len(verbs))
	for _, v := range verbs {
		guid, err := ibvNodeGUID(fsys, v.Device)
		if err != nil {
			problems.Add(err)
		}
		devs = append(devs, ibvDevice{Name: v.Device, NodeGUID: guid})
	}
	return problems.Result(writeIbvDevices(o, devs))
}

// writeIbvDevices prints the listing.
func writeIbvDevices(o *ibvDevicesOptions, devs []ibvDevice) error {
	if o.Common.JSON {
		return cmdutil.WriteJSONDocument(o.IO.Out, struct {
			Devices []ibvDevice `json:"devices"`
		}{devs})
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "    %s\t   node GUID\n", padRight("device", 16))
	fmt.Fprintf(&b, "    %s\t----------------\n", padRight("------", 16))
	for _, d := range devs {
		fmt.Fprintf(&b, "    %s\t%016x\n", padRight(d.Name, 16), uint64(d.NodeGUID))
	}
	_, err := o.IO.Out.Write(b.Bytes())
	return err
}

// padRight is C's %-16s: s padded with spaces to width bytes, never cut.
func padRight(s string, width int) string {
	if len(s) >= width {
		return s
	}
	return s + strings.Repeat(" ", width-len(s))
}

// ibvNodeGUID reads a device's node GUID as libibverbs'
// ibv_get_device_guid does: node_guid read into 24 bytes, then
// sscanf("%hx:%hx:%hx:%hx"). When either fails it returns 0, which
// ibv_devices prints, and the error: the kernel writes node_guid for every
// device, always in that form.
func ibvNodeGUID(fsys *rdma.FS, dev string) (rdma.GUID, error) {
	name := "class/infiniband/" + dev + "/node_guid"
	data, err := fsys.ReadFile(name)
	if err != nil {
		return 0, err
	}
	bad := func(reason string) (rdma.GUID, error) {
		return 0, &rdma.SysError{Op: "parse", Path: fsys.Path(name), Err: &rdma.ParseError{Kind: "node GUID", Input: string(data), Reason: reason}}
	}
	const size = 24
	if len(data) > size {
		data = data[:size]
	}
	switch {
	case len(data) > 0 && data[len(data)-1] == '\n':
		data = data[:len(data)-1]
	case len(data) == size:
		// It would not fit with its NUL: libibverbs fails the read.
		return bad("longer than libibverbs reads (23 bytes and a newline)")
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		data = data[:i]
	}
	var guid uint64
	s := string(data)
	for i := range 4 {
		if i > 0 {
			if s == "" || s[0] != ':' {
				return bad("want four hex numbers separated by colons")
			}
			s = s[1:]
		}
		v, rest, ok := scanHex(s)
		if !ok {
			return bad("want four hex numbers separated by colons")
		}
		guid = guid<<16 | uint64(uint16(v))
		s = rest
	}
	return rdma.GUID(guid), nil
}

// scanHex is scanf's %x: white space, an optional sign, an optional 0x
// before a hex digit, then hex digits; a value too large saturates.
func scanHex(s string) (uint64, string, bool) {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if i+2 < len(s) && s[i] == '0' && (s[i+1]|0x20) == 'x' && isHexDigit(s[i+2]) {
		i += 2
	}
	start := i
	var v uint64
	for ; i < len(s) && isHexDigit(s[i]); i++ {
		if v>>60 != 0 {
			v = ^uint64(0)
			continue
		}
		v = v<<4 | uint64(hexDigit(s[i]))
	}
	if i == start {
		return 0, s, false
	}
	if neg {
		v = -v
	}
	return v, s[i:], true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hexDigit(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
