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
	// Fresh discovers and renders a topology; it may return text with a
	// partial discovery's error.
	Fresh func() ([]byte, error)
}

// path is the kept file: ibnetdiscover-CA-PORT.topology.
func (k *KeptTopology) path() string {
	port := ""
	if k.Port != 0 {
		port = fmt.Sprint(k.Port)
	}
	return filepath.Join(k.Dir, fmt.Sprintf("ibnetdiscover-%s-%s.topology", k.CA, port))
}

// Read returns the kept topology, discovering and keeping a fresh one when
// there is none or Regenerate is set.
func (k *KeptTopology) Read() ([]byte, error) {
	text, err := os.ReadFile(k.path())
	if !k.Regenerate && err == nil {
		return text, nil
	}
	text, partial := k.Fresh()
	if text == nil {
		return nil, partial
	}
	if err := os.MkdirAll(k.Dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(k.path(), text, 0o644); err != nil {
		return nil, err
	}
	return text, partial
}

// TopologyText discovers the fabric and renders it as ibnetdiscover prints
// it (as ibnetdiscover -g with group set).
func TopologyText(f *Factory, tool string, o *CommonOptions, d *DiscoveryOptions, group bool) ([]byte, error) {
	fab, err := f.DiscoverFabric(tool, o, d, nil)
	if err != nil {
		return nil, WithContext(err, "discovery")
	}
	return subnet.TopologyText(fab, group, time.Now()), ReportPartial(tool, fab, f.IO.ErrOut)
}
