package ibsim

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The device view must equal what the real shim writes for the same node.
func TestIntegrationIBSimSysFSMatchesShim(t *testing.T) {
	f := unixFabric(t)
	requireBench(t, shimPath)
	bash := requireBench(t, "bash")
	for _, host := range []string{"Hca1", "Switch1", "Hca4"} {
		t.Run(host, func(t *testing.T) {
			dir := t.TempDir()
			// The shim builds ./sys-<pid>/sys on the first sysfs access and
			// deletes it at exit, so copy it out while the shell lives. The
			// trailing "true" keeps bash from exec'ing cp, which would skip
			// the shim's exit handler and leak an ibsim slot.
			cmd := exec.Command(bash, "-c", `echo /sys/class/infiniband/* >/dev/null && env -u LD_PRELOAD cp -a sys-$$/sys shim; true`)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "LD_PRELOAD="+shimPath, "IBSIM_SOCKNAME="+f.cfg.SockName, "SIM_HOST="+host)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("shim: %v\n%s", err, out)
			}
			want, err := readTree(os.DirFS(filepath.Join(dir, "shim")))
			if err != nil {
				t.Fatal(err)
			}
			got, err := readTree(f.dial(t, host).SysFS())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("device view differs from the shim's (-shim +ibsim.Client):\n%s", diff)
			}
		})
	}
}
