package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// TestDryRun runs every tool that changes fabric state with --dry-run on
// a fabric of its own and checks the fabric did not change: ports as
// ibsim's Dump shows them, error counters, the SM's state, opensm's trap
// log, a CC attribute. Each run exits 0 (ibqueryerrors 1, for the errors
// it reports) and prints one plan line a MAD. ibsim does not answer the
// vendor class vendstat sends (0x0A): its dry runs can only be seen to
// plan and send nothing, by ibsim's log (see checkVendstatDryRun).
// LIDs (from opensm): Switch1 1, Hca1 2, Switch2 3, Hca2 4, Hca3 5, Hca4 6.
func TestDryRun(t *testing.T) {
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ports := func() []simfabric.PortStatus {
		t.Helper()
		d, err := f.Dump(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	counters := []counterSet{
		{"Hca1", 1, "PortCounters.SymbolErrorCounter", 5},
		{"Switch2", 1, "PortCounters.LinkDownedCounter", 3},
		{"Hca2", 1, "PortCounters.PortRcvErrors", 7},
	}
	setCounters(t, f, counters)
	// errorCounters is what perfquery shows of the counters set above.
	errorCounters := func() string {
		t.Helper()
		var b strings.Builder
		for _, q := range [][]string{{"2", "1"}, {"3", "1"}, {"4", "1"}} {
			out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "perfquery", q...)
			if err != nil || exit != 0 {
				t.Fatalf("perfquery %q: exit %d, %v: %s", q, exit, err, errOut)
			}
			for _, l := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(l, "SymbolErrorCounter:") || strings.HasPrefix(l, "LinkDownedCounter:") || strings.HasPrefix(l, "PortRcvErrors:") {
					b.WriteString(l + "\n")
				}
			}
		}
		return b.String()
	}
	activity := regexp.MustCompile(`activity count \d+ `)
	smState := func() string {
		t.Helper()
		out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "sminfo")
		if err != nil || exit != 0 {
			t.Fatalf("sminfo: exit %d, %v: %s", exit, err, errOut)
		}
		return activity.ReplaceAllString(string(out), "activity count N ")
	}
	ccSetting := func() string {
		t.Helper()
		out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibccquery", "CACongestionSetting", "2")
		if err != nil || exit != 0 {
			t.Fatalf("ibccquery: exit %d, %v: %s", exit, err, errOut)
		}
		return string(out)
	}
	beforePorts, beforeCounters, beforeSM, beforeCC := ports(), errorCounters(), smState(), ccSetting()
	if strings.Count(beforeCounters, "....5\n")+strings.Count(beforeCounters, "....3\n")+strings.Count(beforeCounters, "....7\n") != 3 {
		t.Fatalf("the counters were not set:\n%s", beforeCounters)
	}

	tests := []struct {
		args []string
		// plans is how many plan lines the run prints; want, a line or
		// part of one it prints.
		plans int
		want  string
	}{
		{[]string{"init_all_ports"}, 12, "dry-run: SubnSet(PortInfo) from=ibsim0/1 dr=0,1,3,1 attrmod=0x1 LinkState=Down\n"},
		{[]string{"set_port_state", "--disable", "0,1,3@5", "0,1,3@2"}, 2, "dry-run: SubnSet(PortInfo) from=ibsim0/1 dr=0,1,3 attrmod=0x5 PhysLinkState=Disabled\n"},
		{[]string{"set_port_state", "--init", "2@1"}, 1, "dry-run: SubnSet(PortInfo) from=ibsim0/1 dr=0 attrmod=0x1 LinkState=Down\n"},
		{[]string{"ibportstate", "2", "1", "disable"}, 1, "Disable may be irreversible\ndry-run: SubnSet(PortInfo) from=ibsim0/1 lid=2 attrmod=0x80000001 PhysLinkState=Disabled\n"},
		{[]string{"ibportstate", "-D", "0,1", "1", "down"}, 1, "LinkState=Down"},
		{[]string{"ibportstate", "4", "1", "reset"}, 1, "PhysLinkState=Polling"},
		{[]string{"ibportstate", "2", "1", "speed", "3", "width", "1"}, 1, `LinkWidthEnabled=1X LinkSpeedEnabled="2.5 Gbps or 5.0 Gbps"`},
		{[]string{"ibportstate", "2", "1", "espeed", "1"}, 1, "dry-run: SubnSet(PortInfo) from=ibsim0/1 lid=2 attrmod=0x80000001"},
		{[]string{"perfquery", "-R", "2", "1"}, 1, "dry-run: PerfSet(PortCounters) from=ibsim0/1 lid=2 attrmod=0x0 PortSelect=1 CounterSelect=0xffff CounterSelect2=0x01\n"},
		{[]string{"perfquery", "-r", "-a", "3"}, 1, "PortSelect=255"},
		{[]string{"perfquery", "-R", "-x", "4", "1"}, 1, "PerfSet(PortCountersExtended)"},
		{[]string{"ibclearcounters"}, 6, "## Summary: 6 nodes cleared 0 errors"},
		{[]string{"ibclearerrors"}, 6, "CounterSelect=0x0fff\n"},
		{[]string{"sminfo", "1", "1"}, 1, "dry-run: SubnSet(SMInfo) from=ibsim0/1 lid=1 attrmod=0x1 SMState=2\n"},
		{[]string{"ibccconfig", "CACongestionSetting", "2", "0", "0x3", "150", "1", "0", "0"}, 1, "Entry[1].CCTITimer=150"},
		{[]string{"ibsendtrap", "local_link_integrity"}, 1, "TrapNumber=129"},
		{[]string{"ibqueryerrors", "-k", "-K"}, 12, "   GUID 0x200001 port 1: [LinkDownedCounter == 3]\n" +
			"dry-run: PerfSet(PortCounters) from=ibsim0/1 lid=3 attrmod=0x0 PortSelect=255 CounterSelect=0xffff CounterSelect2=0x01\n"},
		{[]string{"ibqueryerrors", "-k", "--details", "-G", "0x100004"}, 3, "PerfSet(PortRcvErrorDetails)"},
		{[]string{"vendstat", "-W", "0x10013c,0x5", "3"}, 1,
			"dry-run: Vendor1(0x0a)Set(ConfigSpaceAccess) from=ibsim0/1 lid=3 attrmod=0x810000 Data=00000000000000000010013c00000005ffffffff\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := append([]string{tt.args[0], "--dry-run"}, tt.args[1:]...)
			wantExit, findings := 0, ""
			if args[0] == "ibqueryerrors" {
				wantExit = 1 // the errors it reports, as without --dry-run
			}
			out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", args[0], args[1:]...)
			if wantExit == 1 {
				findings = queryErrorsFindings.FindString(string(errOut))
			}
			if err != nil || exit != wantExit || string(errOut) != findings {
				t.Fatalf("exit %d (want %d), %v, stderr %q", exit, wantExit, err, errOut)
			}
			if n := strings.Count(string(out), "dry-run: "); n != tt.plans {
				t.Errorf("%d plan lines, want %d:\n%s", n, tt.plans, out)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("stdout lacks %q:\n%s", tt.want, out)
			}
		})
	}
	t.Run("ibqueryerrors report", func(t *testing.T) {
		// The report of a dry run is the report; the plans are added.
		want, _, _, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibqueryerrors")
		if err != nil {
			t.Fatal(err)
		}
		out, _, _, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibqueryerrors", "--dry-run", "-k", "-K")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), planLines.ReplaceAllString(string(out), "")); diff != "" {
			t.Errorf("the report of a dry run (-plain +dry run without its plans):\n%s", diff)
		}
	})
	checkVendstatDryRun(t, f)
	// A trap sent for real after the dry run's: once opensm logged it,
	// the dry run's would be there too.
	if _, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibsendtrap", "sys_image_guid_change"); err != nil || exit != 0 {
		t.Fatalf("ibsendtrap: exit %d, %v, %s", exit, err, errOut)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		log, err := os.ReadFile(filepath.Join(f.Dir(), "opensm.log"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(log), "new SysImageGUID 0x1234567812345678") {
			if strings.Contains(string(log), "num:129") {
				t.Errorf("opensm received the dry run's trap 129")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("opensm.log lacks the trap sent for real")
		}
	}
	if diff := cmp.Diff(beforePorts, ports()); diff != "" {
		t.Errorf("ports changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(beforeCounters, errorCounters()); diff != "" {
		t.Errorf("error counters changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(beforeSM, smState()); diff != "" {
		t.Errorf("SMInfo changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(beforeCC, ccSetting()); diff != "" {
		t.Errorf("CACongestionSetting changed (-before +after):\n%s", diff)
	}
}

// TestDryRunJSON checks a --json dry run is one JSON document with the
// plans, and the tool's read.
func TestDryRunJSON(t *testing.T) {
	f := smallFabric(t)
	out, errOut, exit, err := f.RunIbtool(context.Background(), ibtoolBin, "Hca1", "ibportstate", "--dry-run", "--json", "2", "1", "down")
	if err != nil || exit != 0 || len(errOut) != 0 {
		t.Fatalf("exit %d, %v, stderr %q", exit, err, errOut)
	}
	for _, want := range []string{`"dryRun": [`, `"request": "SubnSet(PortInfo)"`, `"text": "Down"`, `"was": "Active"`, `"portInfo": {`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("stdout lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), `"after"`) {
		t.Errorf("a dry run reports the port after a Set it did not send:\n%s", out)
	}
	// ibqueryerrors finds errors or not, as the shared fabric's counters
	// are; its resets are planned either way.
	out, errOut, exit, err = f.RunIbtool(context.Background(), ibtoolBin, "Hca1", "ibqueryerrors", "--dry-run", "--json", "-k", "-G", "0x100004")
	if err != nil || exit > 1 || (exit == 0) != (len(errOut) == 0) {
		t.Fatalf("ibqueryerrors: exit %d, %v, stderr %q", exit, err, errOut)
	}
	for _, want := range []string{`"dryRun": [`, `"request": "PerfSet(PortCounters)"`, `"lid": 4`, `"text": "0x0fff"`, `"portsChecked": 1`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("ibqueryerrors: stdout lacks %s:\n%s", want, out)
		}
	}
}

// queryErrorsFindings is what ibqueryerrors says on stderr when it
// reports errors.
var queryErrorsFindings = regexp.MustCompile(`^ibqueryerrors: \d+ ports have errors beyond threshold\n$`)

// planLines matches a dry run's plan lines.
var planLines = regexp.MustCompile(`(?m)^dry-run: .*\n`)

// checkVendstatDryRun checks what ibsim shows of vendstat's dry runs.
// ibsim answers no MAD of the vendor class 0x0A; it logs each it gets
// ("no one to handle pkt: class 0xa, attr 0x50"), by attribute, not
// method. So -W's dry run (the Set is its only MAD) is seen to send
// nothing, against a -W sent for real; -c's, whose read back goes out,
// can only be seen to print its plan and then fail that read.
func checkVendstatDryRun(t *testing.T, f *simfabric.Fabric) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const configSpace = "no one to handle pkt: class 0xa, attr 0x50"
	logHas := func(s string) bool {
		t.Helper()
		log, err := os.ReadFile(filepath.Join(f.Dir(), "ibsim.log"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(string(log), s)
	}
	if logHas(configSpace) {
		t.Errorf("ibsim got the ConfigSpaceAccess Set of vendstat's dry run")
	}
	out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "vendstat", "--dry-run", "-t", "100", "-c", "1,2", "3")
	wantOut := "counter_groups_config: configuring group0 1 group1 2\n" +
		"dry-run: Vendor1(0x0a)Set(ConfigCounterGroup) from=ibsim0/1 lid=3 attrmod=0x0 Data=0000000000000000000000000000000100000002\n"
	wantErr := "config counter group query: Vendor1(0x0a) Get(ConfigCounterGroup) to Lid 3: no response"
	if err != nil || exit != 3 || string(out) != wantOut || !strings.Contains(string(errOut), wantErr) {
		t.Errorf("vendstat --dry-run -c: exit %d, %v, stdout %q, stderr %q; want exit 3, stdout %q and %q", exit, err, out, errOut, wantOut, wantErr)
	}
	if _, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "vendstat", "-t", "100", "-W", "0x10013c,0x5", "3"); err != nil || exit != 3 {
		t.Errorf("vendstat -W: exit %d, %v, %s; want 3, no answer from ibsim", exit, err, errOut)
	}
	if !logHas(configSpace) {
		t.Errorf("ibsim.log lacks %q after vendstat -W sent for real: the check above sees nothing", configSpace)
	}
}
