package fabric

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/routecheck"
)

// ibdmchk --fabric: the same checks on the fabric as it is now. Discovery
// and one parallel sweep of every switch's LFT and MFT blocks
// (routecheck.Sweep) build the snapshot opensm's dumps would hold, so
// both modes check the same model; --dump writes the snapshot in those
// dumps' formats.

// dumpNames are the files --dump writes.
var dumpNames = struct{ subnet, fdbs, mcfdbs, psl, sl2vl string }{"opensm-subnet.lst", "opensm.fdbs", "opensm.mcfdbs", "ibdmchk-psl.lst", "ibdmchk-sl2vl.lst"}

func ibdmchkLiveRun(o *ibdmchkOptions) error {
	out, log := o.outputs()
	defer out.Flush()
	sub, err := o.Discover()
	if err != nil {
		return cmdutil.WithContext(err, "discovery")
	}
	partial := cmdutil.ReportPartial("ibdmchk", sub, o.IO.ErrOut)
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	sweep, err := routecheck.Sweep(o.Common.Context(), x, sub, routecheck.SweepOptions{ViaSA: o.Discovery.Mode == "sa", SMKey: o.Common.SMKey, SL2VL: o.SL2VL, PathSLs: o.PathSLs})
	if err != nil {
		return err
	}
	for _, t := range []error{sweep.Unicast.SAError, sweep.Multicast.SAError} {
		if t != nil {
			fmt.Fprintf(o.IO.ErrOut, "ibdmchk: warning: %v; reading the tables by SMP\n", t)
		}
	}
	for _, e := range sweep.Errs {
		fmt.Fprintf(o.IO.ErrOut, "ibdmchk: %v\n", e)
	}
	if n := len(sweep.Errs); n > 0 {
		fmt.Fprintf(o.IO.ErrOut, "ibdmchk: %d table reads failed: the LIDs of a forwarding table block not read are unassigned in the check (routes through them end there), the SLs of an SL2VL table not read have no VL, the paths of a CA port whose PathRecords were not read have no SL\n", n)
		if partial == nil {
			partial = fmt.Errorf("%d table reads failed; the check is partial", n)
		}
	}
	snap := sweep.Snapshot
	if o.LMCGiven {
		snap.LMC = uint8(o.LMC)
	}
	if o.DumpDir != "" {
		if err := writeSnapshot(o.DumpDir, snap); err != nil {
			return err
		}
	}
	writeHeader(log, o, []string{fmt.Sprintf("Fabric = live, discovery %s", o.Discovery.Mode)}, int(snap.LMC))
	fab, counts, err := snap.Fabric()
	if err != nil {
		out.Flush()
		return cmdutil.WithContext(err, "the swept fabric")
	}
	fmt.Fprintf(log, "-I- Discovered the subnet: %d nodes\n", len(sub.Nodes))
	fmt.Fprintf(log, "-I- Defined %d/%d systems/nodes \n", fab.Systems(), len(fab.Nodes()))
	fmt.Fprintf(log, "-I- Read the LFTs of %d switches\n", len(sweep.Unicast.Switches))
	fmt.Fprintf(log, "-I- Defined %d fdb entries for:%d switches\n", counts.FDBEntries, counts.FDBSwitches)
	if err := loadSLFiles(o, fab, log); err != nil {
		out.Flush()
		return &cmdutil.UsageError{Err: err}
	}
	if o.PathSLs {
		fmt.Fprintf(log, "-I- Read %d path SLs from the SA\n", len(snap.PathSLs))
		fmt.Fprintf(log, "-I- Defined %d SLs in use\n", fab.NumSLs())
	}
	if o.SL2VL {
		fmt.Fprintf(log, "-I- Read %d SL2VL tables of switch port pairs\n", len(snap.SL2VL))
		fmt.Fprintf(log, "-I- Defined %d VLs in use\n", fab.NumVLs())
	}
	fmt.Fprintf(log, "-I- Read the MFTs of %d switches\n", len(sweep.Multicast.Switches))
	fmt.Fprintf(log, "-I- Defined %d Multicast Fdb entries for:%d switches\n", counts.MFTEntries, counts.MFTSwitches)
	return checkAndReport(o, fab, out, partial)
}

// writeSnapshot writes the snapshot into dir as opensm's dumps, and the
// path SLs and SL2VL tables read in ibdmchk's -c and -d formats.
func writeSnapshot(dir string, s *routecheck.Snapshot) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string]func(io.Writer) error{
		dumpNames.subnet: s.WriteSubnet,
		dumpNames.fdbs:   s.WriteFDBs,
		dumpNames.mcfdbs: s.WriteMCFDBs,
	}
	if s.PathSLs != nil {
		files[dumpNames.psl] = s.WritePathSLs
	}
	if s.SL2VL != nil {
		files[dumpNames.sl2vl] = s.WriteSL2VL
	}
	for name, write := range files {
		if err := writeFile(filepath.Join(dir, name), write); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path string, write func(io.Writer) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	err = write(fh)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
