package simfabric

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Shim is the LD_PRELOAD library (Debian's libumad2sim0) that routes
// libibumad's MADs to ibsim, for opensm and the infiniband-diags tools. The
// bench preloads the RMPP layer ahead of it: see Preload.
const Shim = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"

// shimPath is Shim, a variable for the tests of Available.
var shimPath = Shim

// ErrNotInstalled is wrapped by Available's error when a program of the
// bench is missing.
var ErrNotInstalled = errors.New("bench not installed")

// sbinDirs are searched after PATH: infiniband-diags and opensm install to
// /usr/sbin, which a user's PATH may lack.
var sbinDirs = []string{"/usr/sbin", "/sbin", "/usr/bin"}

// lookPath finds a program in PATH or sbinDirs.
func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	if !strings.Contains(name, "/") {
		for _, d := range sbinDirs {
			p := filepath.Join(d, name)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%s not found in PATH or %s", name, strings.Join(sbinDirs, ", "))
}

// Available reports whether ibsim, opensm, the shim and gcc are installed,
// and builds the RMPP layer (see Preload). Its error wraps ErrNotInstalled
// and names the Debian packages to install.
func Available() error {
	var missing []string
	for _, prog := range []string{"ibsim", "opensm"} {
		if _, err := lookPath(prog); err != nil {
			missing = append(missing, prog)
		}
	}
	if _, err := os.Stat(shimPath); err != nil {
		missing = append(missing, shimPath)
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		missing = append(missing, "gcc")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s missing (apt-get install ibsim-utils libumad2sim0 opensm infiniband-diags gcc libc6-dev, or make deps)",
			ErrNotInstalled, strings.Join(missing, ", "))
	}
	_, err := RMPPShim()
	return err
}

// simEnvVars are dropped from the inherited environment of every process
// the bench starts, so that a caller's own simulator settings (an inet
// ibsim, another socket name, a preload) never leak into a fabric.
var simEnvVars = []string{
	"IBSIM_SOCKNAME", "IBSIM_SERVER_NAME", "IBSIM_SERVER_PORT",
	"SIM_HOST", "SIM_SET_ISSM", "LD_PRELOAD", "OSM_TMP_DIR", "OSM_CACHE_DIR",
}

// childEnv returns the current environment without simEnvVars, plus extra.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, v := range simEnvVars {
			if name == v {
				drop = true
				break
			}
		}
		if !drop {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// procAttr puts a child in a process group of its own (so that Stop kills
// whatever it forks too) and, unless detached, has the kernel kill it when
// the process that started it dies, however that happens.
func procAttr(detach bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if !detach {
		a.Pdeathsig = syscall.SIGKILL
	}
	return a
}

// proc is ibsim or opensm: a child of this process, or one found in a
// fabric.json (then cmd is nil and done is nil).
type proc struct {
	name string // program name, as /proc/PID/comm shows it
	pid  int
	cmd  *exec.Cmd
	done chan struct{} // closed when the child has exited
	err  error         // its exit status, once done
}

// startProc starts cmd and a goroutine that reaps it.
func startProc(name string, cmd *exec.Cmd) (*proc, error) {
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, pid: cmd.Process.Pid, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// PID returns the process ID, 0 for a nil proc.
func (p *proc) PID() int {
	if p == nil {
		return 0
	}
	return p.pid
}

// exited returns an error when the process is gone.
func (p *proc) exited() error {
	if p == nil {
		return nil
	}
	if p.done != nil {
		select {
		case <-p.done:
			if p.err == nil {
				return fmt.Errorf("%s (pid %d) exited", p.name, p.pid)
			}
			return fmt.Errorf("%s (pid %d) exited: %v", p.name, p.pid, p.err)
		default:
			return nil
		}
	}
	if !p.isOurs() {
		return fmt.Errorf("%s (pid %d) is not running", p.name, p.pid)
	}
	return nil
}

// isOurs reports whether pid is alive and still runs the program it was
// started as (a PID in a stale fabric.json may have been reused).
func (p *proc) isOurs() bool {
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p.pid))
	if err != nil {
		return false
	}
	state, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err == nil {
		// A zombie (state Z, after the comm in parentheses) is dead.
		if i := strings.LastIndexByte(string(state), ')'); i >= 0 && strings.HasPrefix(string(state[i+1:]), " Z") {
			return false
		}
	}
	return strings.TrimSpace(string(comm)) == p.name
}

// kill sends SIGKILL to the process group and waits for the process to go.
// opensm's cache files are of no use to a test, so there is no grace
// period.
func (p *proc) kill() error {
	if p == nil {
		return nil
	}
	if p.done == nil && !p.isOurs() {
		return nil
	}
	if p.done != nil {
		select {
		case <-p.done:
			return nil // reaped: its PID may be another process's now
		default:
		}
	}
	// The group first, then the process, in case it left its group.
	_ = syscall.Kill(-p.pid, syscall.SIGKILL)
	_ = syscall.Kill(p.pid, syscall.SIGKILL)
	deadline := time.After(10 * time.Second)
	if p.done != nil {
		select {
		case <-p.done:
			return nil
		case <-deadline:
			return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, p.pid)
		}
	}
	for p.isOurs() {
		select {
		case <-deadline:
			return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, p.pid)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}
