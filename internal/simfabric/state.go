package simfabric

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// fabricState is fabric.json: what another process needs to use or stop a
// fabric it did not start.
type fabricState struct {
	SockName  string    `json:"sockName"`
	NetFile   string    `json:"netFile"`
	SMNode    string    `json:"smNode"`
	IbsimPID  int       `json:"ibsimPid"`
	OpenSMPID int       `json:"opensmPid"`
	Keep      bool      `json:"keep"`
	Started   time.Time `json:"started"`
	Timing    Timing    `json:"timing"`
}

// StateFile returns the path of the fabric's fabric.json.
func (f *Fabric) StateFile() string { return f.path(stateFile) }

// writeState writes fabric.json. Start writes it as soon as each process
// runs, so that `simfab stop` can clean up after a start that was killed,
// and again when the fabric is up, with the timing.
func (f *Fabric) writeState() error {
	st := fabricState{
		SockName:  f.sockName,
		NetFile:   f.netPath,
		SMNode:    f.smNode,
		IbsimPID:  f.ibsim.PID(),
		OpenSMPID: f.opensm.PID(),
		Keep:      f.keep,
		Started:   f.started.UTC().Truncate(time.Second),
		Timing:    f.timing,
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	// Write and rename, so that a reader never sees half a file.
	tmp := f.path(stateFile + ".tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", stateFile, err)
	}
	return os.Rename(tmp, f.path(stateFile))
}

// Attach returns the fabric whose directory is dir, started by this or
// another process (Start with Detach, as `simfab start` does). Stop on the
// result kills its processes by the PIDs in fabric.json, after checking
// that they still run ibsim and opensm.
func Attach(dir string) (*Fabric, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(abs, stateFile))
	if err != nil {
		return nil, fmt.Errorf("simfabric: %s is not a running fabric's directory: %w", dir, err)
	}
	var st fabricState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("simfabric: %s: %w", filepath.Join(dir, stateFile), err)
	}
	f := &Fabric{
		dir:      abs,
		sockName: st.SockName,
		netPath:  st.NetFile,
		smNode:   st.SMNode,
		keep:     st.Keep || os.Getenv(EnvKeep) == "1",
		timing:   st.Timing,
		slots:    make(chan struct{}, maxClients),
		ibsim:    &proc{name: "ibsim", pid: st.IbsimPID},
		opensm:   &proc{name: "opensm", pid: st.OpenSMPID},
	}
	if f.net, err = ReadNetFile(f.netPath); err != nil {
		return nil, fmt.Errorf("simfabric: attaching to %s: %w", dir, err)
	}
	return f, nil
}
