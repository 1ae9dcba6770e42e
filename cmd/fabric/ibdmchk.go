package fabric

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/routecheck"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// ibdmchk is ibutils' routing checker in its verification mode: it reads
// opensm's dumps of the subnet and of the forwarding tables (or, with
// --fabric, sweeps the fabric for the same state) and checks every
// CA-to-CA route, the multicast trees and the credit loops of the routing
// (pkg/routecheck does the checks).

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibdmchk",
		Summary: "check the routing from opensm's dumps or the live fabric: routes, multicast trees, credit loops",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbdmchkCmd(f, nil) },
	})
}

// ibdmchkOptions are ibdmchk's parsed flags.
type ibdmchkOptions struct {
	IO        cmdutil.IOStreams
	Common    cmdutil.CommonOptions
	Discovery cmdutil.DiscoveryOptions

	SubnetFile string // -s
	FDBFile    string // -f
	MCFDBFile  string // -m
	PSLFile    string // -c
	SLVLFile   string // -d
	RootsFile  string // -r
	LMC        int    // -l
	LMCGiven   bool   // -l was given (--fabric otherwise takes the ports' LMC)
	UpDown     bool   // -u
	MFTLoops   bool   // -M
	AllPaths   bool   // -a
	// Live is --fabric: sweep the fabric instead of reading dumps.
	Live bool
	// SL2VL is --sl2vl: with --fabric, read the switches' SL to VL
	// tables too.
	SL2VL bool
	// PathSLs is --path-sl: with --fabric, ask the SA for the paths' SLs.
	PathSLs bool
	// DumpDir is --dump: where the live sweep's state is written in
	// opensm's dump formats ("" writes nothing).
	DumpDir string
	// Design is the design mode (--topo).
	Design ibdmchkDesign
	// Discover walks the fabric for --fabric.
	Discover func() (*subnet.Fabric, error)

	// PortDLIDsFile is where the destinations per switch port are written
	// when its directory exists, as ibdmchk writes them; "" writes nothing.
	PortDLIDsFile string
	// Defaults are the places the dumps are looked for when not given:
	// subnet, fdbs, mcfdbs candidates.
	Defaults [3][]string
}

var ibdmchkDefaults = [3][]string{
	{"/var/log/osm-subnet.lst", "/var/log/opensm-subnet.lst", "/tmp/subnet.lst"},
	{"/var/log/osm.fdbs", "/var/log/opensm.fdbs", "/tmp/osm.fdbs"},
	{"/var/log/osm.mcfdbs", "/var/log/opensm.mcfdbs", "/tmp/osm.mcfdbs"},
}

func newIbdmchkCmd(f *cmdutil.Factory, runF func(*ibdmchkOptions) error) *cobra.Command {
	o := &ibdmchkOptions{IO: f.IO, PortDLIDsFile: routecheck.PortDLIDsFile, Defaults: ibdmchkDefaults}
	c := &cobra.Command{
		Use:   "ibdmchk [-v] [-a] [-u] [-M] [-l lmc] [-r roots] [-s subnet] [-f fdbs] [-m mcfdbs] [-c path-sl] [-d sl2vl] | --fabric [--path-sl] [--sl2vl] [--dump dir] | --topo file [-n sm-node] [-p sm-port] [--enh]",
		Short: "check the routing from opensm's dumps or the live fabric: routes, multicast trees, credit loops",
		Long: `ibdmchk checks a subnet's routing as ibutils' ibdmchk does in its verification
mode, from the files opensm writes with -D 0x41 (or 0x43) into its dump
directory: opensm-subnet.lst (-s), opensm.fdbs (-f) and opensm.mcfdbs (-m).
It follows every CA-to-CA route through the switches' forwarding tables (no
black hole, no loop), prints the hop histograms, the spread of destinations
over switch ports and the longest min-hop path, checks each multicast tree,
and searches the channel dependency graph for credit loops (or, with -u,
checks the routes against the Up/Down rule of the roots in -r or of roots it
finds).

With --fabric it checks the fabric as it is now instead: it discovers the
subnet and reads every switch's linear and multicast forwarding tables in
one parallel sweep (by SMP, or from the SA with --discovery sa or --sa),
taking SL 0 on every path as ibdmchk does without -c unless --path-sl asks
the SA's PathRecords, and each SL's own VL as without -d unless --sl2vl
reads the switches' SL2VL tables; --dump DIR writes what it read as
opensm-subnet.lst, opensm.fdbs and opensm.mcfdbs (and ibdmchk-psl.lst for
-c, ibdmchk-sl2vl.lst for -d), which ibdmchk reads.

With --topo FILE (ibdmchk's design mode, -t there) it reads a topology file
as ibnetdiscover writes it, gives the ports LIDs from the SM's port (-n,
-p; by default the node and port the file was made from) as opensm does on
a fresh subnet, routes it min-hop (or Up/Down with -u, from the roots of -r,
one node a line, or found as opensm's updn finds them), then runs the same
checks; --enh (ibdmchk's -e) routes instead as ibdm's enhanced LMC routing
does, spreading the 2^LMC LIDs of each port over systems and nodes, and the
report's LMC histograms say how many of them the routes of a pair share. Exit status: 0 clean, 1 errors found, 2 bad input, 3 a sweep that
could not read everything.`,
		Example: "  opensm -D 0x43 ...   # writes the dumps into OSM_TMP_DIR\n  ibdmchk -s opensm-subnet.lst -f opensm.fdbs -m opensm.mcfdbs\n  ibdmchk --fabric --dump /tmp/state\n  ibnetdiscover > fabric.topo; ibdmchk --topo fabric.topo -u",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if o.LMC < 0 || o.LMC > 7 {
				return cmdutil.UsageErrorf("LMC %d is not between 0 and 7", o.LMC)
			}
			o.LMCGiven = c.Flags().Changed("lmc")
			if err := o.finishDesign(c); err != nil {
				return err
			}
			if err := o.finishLive(c); err != nil {
				return err
			}
			o.Discover = func() (*subnet.Fabric, error) { return f.DiscoverFabric("ibdmchk", &o.Common, &o.Discovery, nil) }
			if runF != nil {
				return runF(o)
			}
			return ibdmchkRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsNoDebugShort|cmdutil.FlagsNoSMPortShort)
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	fl := c.Flags()
	fl.StringVarP(&o.SubnetFile, "subnet", "s", "", "opensm's subnet file (opensm-subnet.lst)")
	fl.StringVarP(&o.FDBFile, "fdb", "f", "", "opensm's unicast forwarding tables (opensm.fdbs)")
	fl.StringVarP(&o.MCFDBFile, "mcfdb", "m", "", "opensm's multicast forwarding tables (opensm.mcfdbs)")
	fl.StringVarP(&o.PSLFile, "psl", "c", "", "path SLs: a line \"0xSRC_GUID DLID SL\" per route")
	fl.StringVarP(&o.SLVLFile, "slvl", "d", "", "SL2VL tables: a line \"0xSW_GUID IN OUT 0x(sl0)(sl1) ... 0x(sl14)(sl15)\" per port pair")
	fl.StringVarP(&o.RootsFile, "roots", "r", "", "root switches' node GUIDs for -u, one a line")
	fl.IntVarP(&o.LMC, "lmc", "l", 0, "the LMC opensm ran with")
	fl.BoolVarP(&o.UpDown, "updn", "u", false, "check the Up/Down rule instead of the whole dependency graph (with --topo, also route Up/Down)")
	fl.BoolVarP(&o.MFTLoops, "MFT", "M", false, "include the multicast trees in the credit-loop check")
	fl.BoolVarP(&o.AllPaths, "all", "a", false, "also check routes from and to switches")
	fl.BoolVar(&o.Live, "fabric", false, "check the live fabric: discover it and read every switch's forwarding tables instead of opensm's dumps")
	fl.BoolVar(&o.SL2VL, "sl2vl", false, "with --fabric, also read every switch's SL to VL tables (by SMP) for the credit-loop check, as -d gives them")
	fl.BoolVar(&o.PathSLs, "path-sl", false, "with --fabric, also ask the SA for the SL of every CA port's path to every port (PathRecords) for the credit-loop check, as -c gives them")
	addDesignFlags(c, &o.Design)
	fl.StringVar(&o.DumpDir, "dump", "", "with --fabric, write what was read into this directory as opensm-subnet.lst, opensm.fdbs and opensm.mcfdbs")
	return c
}

// finishLive checks the flags of the two modes: the dump files and the
// sweep's flags do not mix.
func (o *ibdmchkOptions) finishLive(c *cobra.Command) error {
	if !o.Live {
		if o.DumpDir != "" || o.SL2VL || o.PathSLs {
			return cmdutil.UsageErrorf("--dump, --sl2vl and --path-sl go with --fabric")
		}
		return nil
	}
	if o.PathSLs && o.PSLFile != "" {
		return cmdutil.UsageErrorf("--path-sl asks the SA for the path SLs, -c reads them from a file: give one")
	}
	if o.SL2VL && o.SLVLFile != "" {
		return cmdutil.UsageErrorf("--sl2vl reads the SL2VL tables from the switches, -d from a file: give one")
	}
	for _, name := range []string{"subnet", "fdb", "mcfdb"} {
		if c.Flags().Changed(name) {
			return cmdutil.UsageErrorf("--%s reads a dump; --fabric reads the fabric instead: give one", name)
		}
	}
	return o.Discovery.Finish()
}

// resolveDumps fills in the dump files not given from the default places.
func (o *ibdmchkOptions) resolveDumps() error {
	kinds := []string{"subnet file (-s)", "unicast forwarding tables (-f)", "multicast forwarding tables (-m)"}
	var missing []string
	for i, p := range []*string{&o.SubnetFile, &o.FDBFile, &o.MCFDBFile} {
		if *p != "" {
			continue
		}
		for _, cand := range o.Defaults[i] {
			if fh, err := os.Open(cand); err == nil {
				fh.Close()
				*p = cand
				break
			}
		}
		if *p == "" {
			missing = append(missing, fmt.Sprintf("no %s given and none of %s is readable", kinds[i], strings.Join(o.Defaults[i], ", ")))
		}
	}
	if len(missing) > 0 {
		return cmdutil.UsageErrorf("%s", strings.Join(missing, "; "))
	}
	return nil
}

func ibdmchkRun(o *ibdmchkOptions) error {
	if o.Design.TopoFile != "" {
		return ibdmchkDesignRun(o)
	}
	if o.Live {
		return ibdmchkLiveRun(o)
	}
	if err := o.resolveDumps(); err != nil {
		return err
	}
	out, log := o.outputs()
	defer out.Flush()
	writeHeader(log, o, []string{"FDB File = " + o.FDBFile, "MCFDB File = " + o.MCFDBFile, "Subnet File = " + o.SubnetFile}, o.LMC)

	fab := routecheck.New(uint8(o.LMC))
	if err := loadDumps(o, fab, log); err != nil {
		out.Flush()
		return &cmdutil.UsageError{Err: err}
	}
	return checkAndReport(o, fab, out, nil)
}

// outputs returns the buffered standard output and where the lines about
// the input go: the output, or nowhere with --json.
func (o *ibdmchkOptions) outputs() (*bufio.Writer, io.Writer) {
	out := bufio.NewWriter(o.IO.Out)
	if o.Common.JSON {
		return out, io.Discard
	}
	return out, out
}

// writeHeader prints ibdmchk's banner: the inputs, the SL and SL2VL
// files, the LMC.
func writeHeader(log io.Writer, o *ibdmchkOptions, inputs []string, lmc int) {
	fmt.Fprintln(log, "-------------------------------------------------")
	if o.Common.Verbose > 0 {
		fmt.Fprintln(log, " Verbose Mode")
	}
	fmt.Fprintln(log, " IBDMCHK OpenSM Routing Verification Mode:")
	for _, in := range inputs {
		fmt.Fprintf(log, " %s\n", in)
	}
	if o.PSLFile != "" {
		fmt.Fprintf(log, " SL File = %s\n", o.PSLFile)
	} else if o.PathSLs {
		fmt.Fprintln(log, " SL File = NONE, the SA's PathRecords")
	} else {
		fmt.Fprintln(log, " SL File = NONE, using single SL")
	}
	if o.SLVLFile != "" {
		fmt.Fprintf(log, " SLVL File = %s\n", o.SLVLFile)
	} else if o.SL2VL {
		fmt.Fprintln(log, " SLVL File = NONE, the switches' SL2VL tables")
	} else {
		fmt.Fprintln(log, " SLVL File = NONE, using identity mapping")
	}
	fmt.Fprintf(log, " LMC = %d\n", lmc)
	fmt.Fprintln(log, "-------------------------------------------------")
}

// checkAndReport runs the checks on the model and prints the report;
// partial, when not nil, is why the model is incomplete, the run's error
// unless the checks found errors.
func checkAndReport(o *ibdmchkOptions, fab *routecheck.Fabric, out *bufio.Writer, partial error) error {
	roots := o.Design.rootGUIDs
	if o.UpDown && o.RootsFile != "" && o.Design.TopoFile == "" {
		var err error
		if roots, err = readFileWith(o.RootsFile, func(r io.Reader) ([]uint64, error) { return routecheck.ReadRoots(r, o.RootsFile) }); err != nil {
			out.Flush()
			return &cmdutil.UsageError{Err: err}
		}
	}
	rep, err := routecheck.Check(fab, routecheck.Options{AllRoutes: o.AllPaths, UpDown: o.UpDown, Roots: roots, MulticastLoops: o.MFTLoops})
	if err != nil {
		return err
	}
	if rep.Routes != nil && o.PortDLIDsFile != "" {
		writePortDLIDs(o.PortDLIDsFile, rep.Routes)
	}
	if o.Common.JSON {
		if err := cmdutil.WriteJSONDocument(out, struct {
			Failed bool                     `json:"failed"`
			Design *routecheck.DesignResult `json:"design,omitempty"`
			*routecheck.Report
		}{rep.Failed(), o.Design.result, rep}); err != nil {
			return err
		}
	} else if err := rep.WriteText(out); err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if partial != nil {
		return partial
	}
	if rep.Failed() {
		return &cmdutil.FindingsError{Summary: "routing errors found"}
	}
	return nil
}

// loadDumps reads the dumps into the fabric, printing ibdmchk's lines
// about each.
func loadDumps(o *ibdmchkOptions, fab *routecheck.Fabric, log io.Writer) error {
	fmt.Fprintf(log, "-I- Parsing Subnet file:%s\n", o.SubnetFile)
	if _, err := readFileWith(o.SubnetFile, func(r io.Reader) (int, error) { return routecheck.ReadSubnet(fab, r, o.SubnetFile) }); err != nil {
		return err
	}
	fmt.Fprintf(log, "-I- Defined %d/%d systems/nodes \n", fab.Systems(), len(fab.Nodes()))
	fmt.Fprintf(log, "-I- Parsing FDBs file:%s\n", o.FDBFile)
	var entries, switches int
	if _, err := readFileWith(o.FDBFile, func(r io.Reader) (int, error) {
		var err error
		entries, switches, err = routecheck.ReadFDBs(fab, r, o.FDBFile)
		return entries, err
	}); err != nil {
		return err
	}
	fmt.Fprintf(log, "-I- Defined %d fdb entries for:%d switches\n", entries, switches)
	if err := loadSLFiles(o, fab, log); err != nil {
		return err
	}
	fmt.Fprintf(log, "-I- Parsing Multicast FDBs file:%s\n", o.MCFDBFile)
	if _, err := readFileWith(o.MCFDBFile, func(r io.Reader) (int, error) {
		var err error
		entries, switches, err = routecheck.ReadMCFDBs(fab, r, o.MCFDBFile)
		return entries, err
	}); err != nil {
		return err
	}
	fmt.Fprintf(log, "-I- Defined %d Multicast Fdb entries for:%d switches\n", entries, switches)
	return nil
}

// loadSLFiles reads the -c and -d files into the fabric, printing
// ibdmchk's lines about each.
func loadSLFiles(o *ibdmchkOptions, fab *routecheck.Fabric, log io.Writer) error {
	if o.PSLFile != "" {
		fmt.Fprintf(log, "-I- Parsing SL file:%s\n", o.PSLFile)
		if _, err := readFileWith(o.PSLFile, func(r io.Reader) (int, error) { return routecheck.ReadPathSLs(fab, r, o.PSLFile) }); err != nil {
			return err
		}
		fmt.Fprintf(log, "-I- Defined %d SLs in use\n", fab.NumSLs())
	}
	if o.SLVLFile != "" {
		fmt.Fprintf(log, "-I- Parsing SLVL file:%s\n", o.SLVLFile)
		if _, err := readFileWith(o.SLVLFile, func(r io.Reader) (int, error) { return routecheck.ReadSL2VL(fab, r, o.SLVLFile) }); err != nil {
			return err
		}
		fmt.Fprintf(log, "-I- Defined %d VLs in use\n", fab.NumVLs())
	}
	return nil
}

func readFileWith[T any](path string, read func(io.Reader) (T, error)) (T, error) {
	fh, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer fh.Close()
	return read(bufio.NewReaderSize(fh, 1<<20))
}

// writePortDLIDs writes the detailed destinations-per-port list where
// ibdmchk writes it, when that directory exists; like ibdmchk, a failure
// to write it is not an error of the check.
func writePortDLIDs(path string, res *routecheck.RouteResult) {
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return
	}
	fh, err := os.Create(path)
	if err != nil {
		return
	}
	err = res.WritePortDLIDs(fh)
	if cerr := fh.Close(); err == nil && cerr != nil && !errors.Is(cerr, os.ErrClosed) {
		return
	}
}
