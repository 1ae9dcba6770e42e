package cmdutil

import (
	"bufio"
	"bytes"
	"fmt"

	"os"
	"strings"

	"github.com/ibtool/ibtool/pkg/subnet"
)

// LoadFabric reads a fabric cache file: libibnetdisc's format (what
// ibnetdiscover --cache writes) or ibtool's JSON form, told apart by the
// first byte. Chassis are grouped as libibnetdisc does on load. A file that
// cannot be read or parsed is a runtime failure naming the file.
func LoadFabric(path string) (*subnet.Fabric, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading cached fabric: %w", err)
	}
	var fab *subnet.Fabric
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		fab, err = subnet.ReadJSON(bytes.NewReader(data))
	} else {
		fab, err = subnet.ReadCache(bytes.NewReader(data))
	}
	if err != nil {
		return nil, fmt.Errorf("loading cached fabric %s: %w", path, err)
	}
	fab.GroupChassis()
	return fab, nil
}

// SaveFabric writes the fabric to a cache file: JSON when the name ends in
// .json, libibnetdisc's format otherwise.
func SaveFabric(path string, fab *subnet.Fabric) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("caching fabric: %w", err)
	}
	w := bufio.NewWriter(f)
	write := fab.WriteCache
	if strings.HasSuffix(path, ".json") {
		write = fab.WriteJSON
	}
	if err := write(w); err != nil {
		f.Close()
		return fmt.Errorf("caching fabric to %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("caching fabric to %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("caching fabric to %s: %w", path, err)
	}
	return nil
}

// DiffFlags are the checks of --diff, as --diffcheck names them.
type DiffFlags uint

// The checks --diffcheck names: sw, ca, router, port, lid, nodedesc and
// (iblinkinfo's) state.
const (
	DiffSwitch DiffFlags = 1 << iota
	DiffCA
	DiffRouter
	DiffPort
	DiffLID
	DiffNodeDesc
	DiffState
)

// ParseDiffCheck parses a --diffcheck list: comma-separated keys from
// allowed, any case.
func ParseDiffCheck(s string, allowed map[string]DiffFlags) (DiffFlags, error) {
	var f DiffFlags
	for _, k := range strings.Split(s, ",") {
		v, ok := allowed[strings.ToLower(k)]
		if !ok {
			return 0, UsageErrorf("invalid diff check key: %s", k)
		}
		f |= v
	}
	return f, nil
}
