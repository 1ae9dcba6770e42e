package fabric

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// scriptRun is one run of a script tool: what it printed, its error and
// the topology it kept.
type scriptRun struct {
	Out, ErrOut, Err, Kept string
}

// runScriptTool runs a script tool with -R, its fresh topology from fab
// itself (fromFabric) or from the ibnetdiscover -g text of it.
func runScriptTool[O any](t *testing.T, newCmd func(*cmdutil.Factory, func(*O) error) *cobra.Command, run func(*O) error,
	fresh func(o *O, dir string), args ...string) scriptRun {
	t.Helper()
	dir := t.TempDir()
	out, errOut, err := runWith(t, newCmd, func(o *O) error { fresh(o, dir); return run(o) }, append([]string{"-R"}, args...)...)
	r := scriptRun{Out: out, ErrOut: errOut, Err: fmt.Sprint(err)}
	kept, rerr := os.ReadFile(filepath.Join(dir, "ibnetdiscover--.topology"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	r.Kept = regexp.MustCompile(`generated on .*`).ReplaceAllString(string(kept), "generated on DATE")
	return r
}

// TestScriptToolsFromFabric: with -R, ibidsverify, the ibprint tools and
// ibfindnodesusing print from the fabric they discovered what they print
// from the ibnetdiscover -g text of it, and keep that text, on every
// fabric of TestScriptTopologyFromFabric.
func TestScriptToolsFromFabric(t *testing.T) {
	for name, fab := range scriptTopologyFabrics(t) {
		t.Run(name, func(t *testing.T) {
			text := subnet.TopologyText(fab, true, time.Time{})
			compare := func(what string, run func(fromFabric bool) scriptRun) {
				t.Helper()
				want, got := run(false), run(true)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: unexpected run (-want from text +got from fabric):\n%s", what, diff)
				}
			}
			compare("ibidsverify", func(fromFabric bool) scriptRun {
				return runScriptTool(t, newIbidsverifyCmd, ibidsverifyRun, func(o *ibidsverifyOptions, dir string) {
					o.CacheDir, o.Discover, o.Topology = dir, func() (*subnet.Fabric, error) { return fab, nil }, nil
					if !fromFabric {
						o.Topology = func() ([]byte, error) { return text, nil }
					}
				})
			})
			var targets [][]string
			for _, typ := range []mad.NodeType{mad.NodeTypeSwitch, mad.NodeTypeCA, mad.NodeTypeRouter} {
				for i, n := range fab.ByType(typ) {
					if i < 3 {
						targets = append(targets, []string{"-G", fmt.Sprintf("%#x", uint64(n.GUID))}, []string{regexp.QuoteMeta(n.Desc)})
					}
				}
			}
			targets = append(targets, []string{"-l"}, []string{"Hca."}, []string{"sw"})
			for _, k := range nodePrintKinds {
				for _, args := range targets {
					compare(fmt.Sprint(k.name, args), func(fromFabric bool) scriptRun {
						newCmd := func(f *cmdutil.Factory, runF func(*nodePrintOptions) error) *cobra.Command {
							return newNodePrintCmd(f, k.name, k, runF)
						}
						return runScriptTool(t, newCmd, nodePrintRun, func(o *nodePrintOptions, dir string) {
							o.CacheDir, o.Discover, o.Topology = dir, func() (*subnet.Fabric, error) { return fab, nil }, nil
							if !fromFabric {
								o.Topology = func() ([]byte, error) { return text, nil }
							}
						}, args...)
					})
				}
			}
			// Routes: every CA port's LID out of a port that follows from
			// the LID, the same for every switch.
			var routes []lftEntry
			for _, n := range fab.All() {
				for _, p := range n.Ports {
					if p != nil && p.BaseLID != 0 && n.Type != mad.NodeTypeSwitch {
						routes = append(routes, lftEntry{LID: int(p.BaseLID), Port: int(p.BaseLID)%4 + 1, Valid: true, described: true,
							destType: n.Type, Dest: n.Desc})
					}
				}
			}
			for i, sw := range fab.ByType(mad.NodeTypeSwitch) {
				if i >= 3 {
					break
				}
				for _, port := range []string{"1", "3"} {
					for _, all := range [][]string{nil, {"-a"}} {
						args := append([]string{fmt.Sprintf("%#x", uint64(sw.GUID)), port}, all...)
						compare(fmt.Sprint("ibfindnodesusing ", args), func(fromFabric bool) scriptRun {
							return runScriptTool(t, newIbfindnodesusingCmd, ibfindnodesusingRun, func(o *ibfindnodesusingOptions, dir string) {
								o.CacheDir, o.Discover, o.Topology = dir, func() (*subnet.Fabric, error) { return fab, nil }, nil
								if !fromFabric {
									o.Topology = func() ([]byte, error) { return text, nil }
								}
								o.Routes = func(string) ([]lftEntry, error) { return routes, nil }
							}, args...)
						})
					}
				}
			}
		})
	}
}
