package promtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// CheckMetrics runs `promtool check metrics` on the exposition file at
// path, as node_exporter's textfile collector users check theirs. It
// returns nil when promtool accepts the file: it parses, and no lint rule
// (HELP on every family, _total on counters and only on counters, base
// units, no reserved label names ...) finds a problem. Otherwise the error
// holds promtool's findings.
func CheckMetrics(ctx context.Context, path string) error {
	bin, err := exec.LookPath("promtool")
	if err != nil {
		return fmt.Errorf("promtest: %w (apt-get install prometheus, or make deps)", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("promtest: %w", err)
	}
	defer f.Close()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "check", "metrics")
	cmd.Stdin = f
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("promtest: promtool check metrics %s: %w\n%s", path, err, strings.TrimSpace(out.String()))
	}
	return nil
}
