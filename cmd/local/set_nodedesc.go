package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func init() {
	for _, name := range []string{"set_nodedesc", "set_nodedesc.sh"} {
		cmdutil.Register(cmdutil.Tool{
			Name:    name,
			Summary: "show or set the node description of the local CAs",
			New:     func(f *cmdutil.Factory) *cobra.Command { return newSetNodedescCmd(f, name, nil) },
		})
	}
}

// nodeDescLen is the size of NodeDescription (IBA 14.2.5.2).
const nodeDescLen = 64

// setNodedescOptions are set_nodedesc's parsed flags and arguments.
type setNodedescOptions struct {
	IO cmdutil.IOStreams
	// View is -v: show every CA's description instead of setting it.
	View bool
	// CA limits the tool to one device (-C): a name, or python-rdma's
	// node GUID.
	CA string
	// Port is python-rdma's -P: the device of this end port (a port
	// number, DEVICE/PORT, port GUID or GID), with -C the port of -C's.
	Port string
	// Name is the description to set; the host name by default.
	Name  string
	Sysfs string // --sysfs
	Sim   bool   // --sim
	// DryRun is --dry-run: say which file would get which text, write
	// none.
	DryRun bool
	// root and devs are the sysfs tree in use; onSim says it is the
	// simulator's attach point.
	root  string
	devs  *rdma.FS
	onSim bool
}

func newSetNodedescCmd(f *cmdutil.Factory, name string, runF func(*setNodedescOptions) error) *cobra.Command {
	o := &setNodedescOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   name + " [-v] [-C CA] [-P PORT] [<name>]",
		Short: "show or set the node description of the local CAs",
		Long: `set_nodedesc writes a node description (64 bytes at most; the host name by
default) to the node_desc file of every local CA in sysfs, or of the one -C
names, as infiniband-diags' set_nodedesc.sh and python-rdma's set_nodedesc
do; the SM and the diagnostics then show it. -v shows the descriptions
instead. Writing needs root.`,
		Example: `  set_nodedesc -v              # show every CA's description
  set_nodedesc                 # set them to the host name
  set_nodedesc -C mlx5_0 "node17 HCA-1"
  set_nodedesc --dry-run       # print what it would write`,
		Args: cmdutil.ArgsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				o.Name = args[0]
			}
			if err := o.open(f); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return setNodedescRun(o)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&o.View, "view", "v", false, "view all node descriptors")
	fl.StringVarP(&o.CA, "Ca", "C", "", "only this CA (a name or node GUID)")
	fl.StringVarP(&o.Port, "Port", "P", "", "only the CA of this end port: a port number, DEVICE/PORT, port GUID or GID (python-rdma's)")
	fl.StringVar(&o.Sysfs, "sysfs", "", "sysfs mount point (default $IBTOOL_SYSFS or /sys)")
	fl.BoolVar(&o.Sim, "sim", false, "use the ibsim simulator (also IBTOOL_SIM=1 or IBSIM_SOCKNAME set)")
	fl.BoolVar(&o.DryRun, "dry-run", false, "print each file it would write and the text, write none")
	return c
}

// open finds the sysfs tree, as the local tools do.
func (o *setNodedescOptions) open(f *cmdutil.Factory) error {
	co := &cmdutil.CommonOptions{Sysfs: o.Sysfs, Sim: o.Sim}
	if f.UseSim(co) && !o.View {
		return errors.New("the simulator's node descriptions come from its net file; set_nodedesc can only show them (-v)")
	}
	fsys, root, err := f.LocalSysfs(co)
	if err != nil {
		return err
	}
	o.root = root
	o.devs = rdma.NewFS(fsys, root)
	o.onSim = f.UseSim(co)
	return nil
}

func setNodedescRun(o *setNodedescOptions) error {
	devs, err := o.devs.Devices()
	if err != nil {
		return err
	}
	if err := o.pickByEndPort(); err != nil {
		return err
	}
	if o.CA != "" {
		var picked []*rdma.Device
		for _, d := range devs {
			if d.Name == o.CA {
				picked = append(picked, d)
			}
		}
		if picked == nil {
			return cmdutil.UsageErrorf("no RDMA device %q", o.CA)
		}
		devs = picked
	}
	if len(devs) == 0 {
		return errors.New("no RDMA devices")
	}
	if o.View {
		return viewNodedesc(o, devs)
	}
	name := o.Name
	if name == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("no name given and no host name: %w", err)
		}
		name = h
	}
	if len(name) > nodeDescLen {
		return cmdutil.UsageErrorf("node description %q: %d bytes, at most %d", name, len(name), nodeDescLen)
	}
	var failed []string
	var plan []byte
	for _, d := range devs {
		path := filepath.Join(o.root, "class/infiniband", d.Name, "node_desc")
		if o.DryRun {
			was, _ := o.devs.NodeDesc(d.Name) // a plan shows it as read, "" if it did not read
			plan = appendWritePlan(plan, path, name, was)
			continue
		}
		if err := writeExisting(path, name); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", d.Name, explainWrite(err)))
		}
	}
	if failed != nil {
		return fmt.Errorf("setting the node description failed for %s", strings.Join(failed, "; "))
	}
	if plan != nil {
		_, err := o.IO.Out.Write(plan)
		return err
	}
	return nil
}

// pickByEndPort turns python-rdma's forms, -P or -C as a node GUID, into
// the device name -C filters by: the device of the end port they name
// (endport.Local.Resolve, as every tool's -C/-P).
func (o *setNodedescOptions) pickByEndPort() error {
	if o.Port == "" && o.CA == "" {
		return nil
	}
	l, err := endport.FromFlagArgs(o.CA, o.Port)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	if l.Kind == endport.ByName && o.Port == "" {
		return nil // a device name: filtered as it is
	}
	d, _, err := l.Resolve(o.devs)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	o.CA = d.Name
	return nil
}

// appendWritePlan appends a dry run's line for a file write, as the MAD
// tools' (dryrun.go):
//
//	dry-run: write file=/sys/class/infiniband/mlx5_0/node_desc text="node17 HCA-1" was=node17
func appendWritePlan(b []byte, path, text, was string) []byte {
	b = append(b, "dry-run: write file"...)
	b = cmdutil.AppendPlanValue(b, path)
	b = append(b, " text"...)
	b = cmdutil.AppendPlanValue(b, text)
	b = append(b, " was"...)
	b = cmdutil.AppendPlanValue(b, was)
	return append(b, '\n')
}

// viewNodedesc prints each device's node description. One that does not
// read prints empty, and is told after the list.
func viewNodedesc(o *setNodedescOptions, devs []*rdma.Device) error {
	var problems cmdutil.SysfsProblems
	var b strings.Builder
	for _, d := range devs {
		desc, err := o.devs.NodeDesc(d.Name)
		switch {
		case err != nil && o.onSim && rdma.Absent(err):
			problems.Add(fmt.Errorf("%s: the simulator presents no node_desc; 'smpquery -D nodedesc 0' shows the attach point's", d.Name))
		case err != nil:
			problems.Add(err)
		}
		fmt.Fprintf(&b, "%s: %s\n", d.Name, desc)
	}
	_, err := fmt.Fprint(o.IO.Out, b.String())
	return problems.Result(err)
}

// explainWrite says what to do about a failed sysfs write.
func explainWrite(err error) error {
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("%w; run as root", err)
	}
	return err
}

// writeExisting writes s to the file at path, which must exist (sysfs
// attributes are never created).
func writeExisting(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
