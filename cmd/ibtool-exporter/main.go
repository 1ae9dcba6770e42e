// Command ibtool-exporter serves the fabric's port counters as Prometheus
// metrics under treydock/infiniband_exporter's names, through
// client_golang and exporter-toolkit (TLS, basic auth, gzip, OpenMetrics).
// It is its own binary, as Prometheus exporters are, so that the one-shot
// tools of the ibtool binary do not link net/http and crypto/tls; "ibtool
// exporter" runs it. docs/exporter.md describes it.
package main

import (
	"os"

	"github.com/ibtool/ibtool/cmd/exporter"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/internal/sigrelay"
	"github.com/ibtool/ibtool/pkg/mad/ibsim"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ibsim.ServeKeeper() // exits when this process is one
	sigrelay.Exit(exporter.Main(os.Args[1:], cmdutil.NewFactory(version)))
}
