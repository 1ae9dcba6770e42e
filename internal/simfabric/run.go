package simfabric

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// maxClients is how many runners may talk to one fabric at once: ibsim has
// ten client slots, opensm holds one, and one is left for a test's own
// client.
const maxClients = 8

// RunReference runs an infiniband-diags tool (a name looked up in PATH and
// /usr/sbin, or a path) under the shim and the RMPP layer (Preload),
// attached at node simHost ("" for ibsim's default port), in a scratch
// directory of its own. The layer runs with RMPPSHIM_GUARD=1: it sees every
// packet first and drops those of a class the tool has no agent for, which
// the shim would crash on (a segment opensm resends to the node's previous
// client, say), at the cost of a hop per packet. It returns the tool's
// output untouched and its exit code; err is set only when the tool could
// not run or did not finish (not found, killed, ctx done).
func (f *Fabric) RunReference(ctx context.Context, simHost, tool string, args ...string) (stdout, stderr []byte, exit int, err error) {
	return f.runReference(ctx, nil, simHost, tool, args...)
}

// runReference is RunReference with more environment (RMPPSHIM_ settings).
func (f *Fabric) runReference(ctx context.Context, extraEnv []string, simHost, tool string, args ...string) (stdout, stderr []byte, exit int, err error) {
	path, err := lookPath(tool)
	if err != nil {
		return nil, nil, -1, fmt.Errorf("simfabric: reference tool: %w", err)
	}
	env, err := f.referenceEnv(simHost)
	if err != nil {
		return nil, nil, -1, err
	}
	return f.run(ctx, append(env, extraEnv...), path, args...)
}

// referenceEnv returns the environment of an infiniband-diags tool
// attached at simHost: the fabric's, the preload, the layer's guard.
func (f *Fabric) referenceEnv(simHost string) ([]string, error) {
	preload, err := Preload()
	if err != nil {
		return nil, err
	}
	return append(f.Env(simHost), "LD_PRELOAD="+preload, "RMPPSHIM_GUARD=1"), nil
}

// RunIbtool runs `bin tool args...` (bin is the path of an ibtool binary)
// attached at node simHost, with IBSIM_SOCKNAME set, which makes ibtool
// talk to the simulator; otherwise as RunReference.
func (f *Fabric) RunIbtool(ctx context.Context, bin, simHost, tool string, args ...string) (stdout, stderr []byte, exit int, err error) {
	return f.run(ctx, f.Env(simHost), bin, append([]string{tool}, args...)...)
}

// RunCommand runs bin with args attached at node simHost, with the fabric's
// environment and without the shim: an ibtool symlink ("ibstat") or any
// other native simulator client. Otherwise as RunReference.
func (f *Fabric) RunCommand(ctx context.Context, simHost, bin string, args ...string) (stdout, stderr []byte, exit int, err error) {
	return f.run(ctx, f.Env(simHost), bin, args...)
}

// run runs a simulator client in a scratch directory under the fabric
// directory, holding one of the fabric's client slots.
func (f *Fabric) run(ctx context.Context, env []string, bin string, args ...string) (stdout, stderr []byte, exit int, err error) {
	dir, release, err := f.claimRun(ctx, bin)
	if err != nil {
		return nil, nil, -1, err
	}
	defer release()

	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = childEnv(env...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.SysProcAttr = procAttr(false)
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	exit = -1
	settle := false
	if cmd.ProcessState != nil {
		exit = cmd.ProcessState.ExitCode()
		settle = f.toolEnded(cmd.Process.Pid, killed(cmd.ProcessState))
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && exit >= 0:
		err = nil // a tool's failure is its exit code, not ours
	default:
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", err, ctx.Err())
		}
		err = fmt.Errorf("simfabric: running %s: %w", bin, err)
	}
	if settle {
		err = errors.Join(err, f.settleClients(context.WithoutCancel(ctx)))
	}
	return out.Bytes(), errOut.Bytes(), exit, err
}

// claimRun waits for one of the fabric's client slots to run bin and
// makes the run's scratch directory; release gives both back.
func (f *Fabric) claimRun(ctx context.Context, bin string) (dir string, release func(), err error) {
	select {
	case f.slots <- struct{}{}:
	case <-ctx.Done():
		return "", nil, fmt.Errorf("simfabric: waiting for a client slot to run %s: %w", bin, ctx.Err())
	}
	dir, err = f.scratchDir()
	if err != nil {
		<-f.slots
		return "", nil, err
	}
	return dir, func() {
		os.RemoveAll(dir)
		<-f.slots
	}, nil
}

// scratchDir makes a directory for one client run under the fabric
// directory (the shim leaves ./sys-<pid> behind).
func (f *Fabric) scratchDir() (string, error) {
	if err := os.MkdirAll(f.path(runsDir), 0o755); err != nil {
		return "", err
	}
	return os.MkdirTemp(f.path(runsDir), "run-")
}
