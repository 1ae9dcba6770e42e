package cmdutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ibtool/ibtool/pkg/mad/ibsim"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// python-rdma's discovery cache (libibopts' --cache and --refresh-cache):
// every tool that discovers the fabric reads it from the file --cache
// names when the file is there, instead of discovering, and writes what it
// discovered there otherwise; --refresh-cache discovers and writes anyway,
// which is the only way the cache is renewed, as in python-rdma. The file
// is ibtool's cache (libibnetdisc's format, JSON when the name ends in
// .json), so ibnetdiscover --load-cache and ibtool's --diff read it too.

// cacheVar matches a string.Template placeholder: $$, $name or ${name}.
var cacheVar = &LazyRegexp{Expr: `\$(?:\$|\{([_A-Za-z][_A-Za-z0-9]*)\}|([_A-Za-z][_A-Za-z0-9]*))`}

// expandCacheName substitutes python-rdma's placeholders in a --cache
// name: $C and ${CA} the device, $P and ${PORT} the port number, $A both
// as DEVICE-PORT. Others stay as written (Template.safe_substitute).
func expandCacheName(name, dev string, port int) string {
	return cacheVar.Get().ReplaceAllStringFunc(name, func(m string) string {
		if m == "$$" {
			return "$"
		}
		sub := cacheVar.Get().FindStringSubmatch(m)
		id := sub[1] + sub[2]
		switch id {
		case "C", "CA":
			return dev
		case "P", "PORT":
			return strconv.Itoa(port)
		case "A":
			return dev + "-" + strconv.Itoa(port)
		}
		return m
	})
}

// cacheFile is --cache with its placeholders filled in from the local end
// port the flags name; a name without any needs no port.
func (f *Factory) cacheFile(o *CommonOptions, d *DiscoveryOptions) (string, error) {
	if !cacheVar.Get().MatchString(d.Cache) {
		return d.Cache, nil
	}
	var dev string
	var port *rdma.Port
	var err error
	if f.UseSim(o) {
		dev = ibsim.DeviceName
		_, port, err = o.Open()
	} else {
		var fsys fs.FS
		var root string
		if fsys, root, err = f.LocalSysfs(o); err == nil {
			var d *rdma.Device
			if d, port, err = o.resolveLocal(rdma.NewFS(fsys, root)); err == nil {
				dev = d.Name
			} else {
				err = o.localPortError(err)
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("--cache %s: %w", d.Cache, err)
	}
	return expandCacheName(d.Cache, dev, port.Number), nil
}

// usesCache reports whether the discovery reads and writes --cache: a
// whole-fabric walk whose result holds all a tool may read (a scan from a
// node or of a few hops, or an SA walk without PortInfo, would leave a
// fabric another tool cannot use).
func (d *DiscoveryOptions) usesCache(from []uint8) bool {
	return d.Cache != "" && !d.WritesCache && len(from) == 0 && d.MaxHops == 0 && !d.SANoPortInfo
}

// loadCached returns the fabric kept in file, or nil when there is none
// (or --refresh-cache).
func (f *Factory) loadCached(tool string, o *CommonOptions, d *DiscoveryOptions, file string) (*subnet.Fabric, error) {
	if d.RefreshCache {
		return nil, nil
	}
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if o.Verbose > 0 {
		fmt.Fprintf(f.IO.ErrOut, "%s: loading the discovery cache from %s\n", tool, file)
	}
	fab, err := LoadFabric(file)
	if err != nil {
		return nil, fmt.Errorf("%w; --refresh-cache writes a new one", err)
	}
	return fab, nil
}

// saveCached writes fab to file through .new-file, renamed into place, so
// a run that fails half way never leaves half a cache (python-rdma's
// done()). A partial discovery is not kept: the next run would take its
// holes for the fabric.
func (f *Factory) saveCached(tool string, o *CommonOptions, fab *subnet.Fabric, file string) error {
	if fab.Partial() {
		fmt.Fprintf(f.IO.ErrOut, "%s: warning: the discovery is partial; not saved to %s\n", tool, file)
		return nil
	}
	if o.Verbose > 0 {
		fmt.Fprintf(f.IO.ErrOut, "%s: saving the discovery cache to %s\n", tool, file)
	}
	tmp := filepath.Join(filepath.Dir(file), ".new-"+filepath.Base(file)) // the suffix picks the format
	if err := SaveFabric(tmp, fab); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, file); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("caching fabric: %w", err)
	}
	return nil
}
