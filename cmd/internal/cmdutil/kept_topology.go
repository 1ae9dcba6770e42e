package cmdutil

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ibtool/ibtool/pkg/subnet"
)

// infiniband-diags' Perl scripts (ibidsverify, ibfindnodesusing) share an
// ibnetdiscover -g topology kept in a cache directory, named after -C and
// -P as typed, and discover it again only when it is missing or with -R
// (IBswcountlimits.pm).

// KeptTopology finds or makes the kept topology.
type KeptTopology struct {
	Dir        string
	CA         string
	Port       int
	Regenerate bool
	// Discover discovers the fabric afresh; it may return a fabric with
	// a partial discovery's error.
	Discover func() (*subnet.Fabric, error)
	// Text, when set, gives the fresh topology as text instead of
	// Discover: a topology made elsewhere, kept as it is.
	Text func() ([]byte, error)
}

// path is the kept file: ibnetdiscover-CA-PORT.topology.
func (k *KeptTopology) path() string {
	port := ""
	if k.Port != 0 {
		port = fmt.Sprint(k.Port)
	}
	return filepath.Join(k.Dir, fmt.Sprintf("ibnetdiscover-%s-%s.topology", k.CA, port))
}

// Read returns the kept topology: the kept file's text when there is one
// and Regenerate is not set; otherwise the fabric discovered afresh,
// whose ibnetdiscover -g text it keeps for the next run and the scripts
// (or Text's text, kept and returned as text). A partial discovery's
// error comes with its fabric.
func (k *KeptTopology) Read() (text []byte, fab *subnet.Fabric, err error) {
	text, err = os.ReadFile(k.path())
	if !k.Regenerate && err == nil {
		return text, nil, nil
	}
	var partial error
	if k.Text != nil {
		if text, partial = k.Text(); text == nil {
			return nil, nil, partial
		}
	} else {
		if fab, partial = k.Discover(); fab == nil {
			return nil, nil, partial
		}
		text = subnet.TopologyText(fab, true, time.Now())
	}
	if err := os.MkdirAll(k.Dir, 0o700); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(k.path(), text, 0o644); err != nil {
		return nil, nil, err
	}
	if fab != nil {
		text = nil
	}
	return text, fab, partial
}

// FreshFabric discovers the fabric for tool, reporting a partial
// discovery on stderr; its error then comes with the fabric.
func FreshFabric(f *Factory, tool string, o *CommonOptions, d *DiscoveryOptions) (*subnet.Fabric, error) {
	fab, err := f.DiscoverFabric(tool, o, d, nil)
	if err != nil {
		return nil, WithContext(err, "discovery")
	}
	return fab, ReportPartial(tool, fab, f.IO.ErrOut)
}
