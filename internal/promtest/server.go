package promtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Config describes the server Start runs and the one scrape job it has.
type Config struct {
	// Targets are the host:port addresses the job scrapes.
	Targets []string
	// MetricsPath is the path scraped on each target; "" means /metrics.
	MetricsPath string
	// ScrapeInterval is how often each target is scraped; 0 means 1 s.
	ScrapeInterval time.Duration
	// ScrapeTimeout bounds one scrape, and is what Prometheus sends in
	// X-Prometheus-Scrape-Timeout-Seconds; 0 means ScrapeInterval.
	// Prometheus refuses a timeout longer than the interval.
	ScrapeTimeout time.Duration
	// Job is the job label; "" means "promtest".
	Job string
	// CAFile, when set, makes the job scrape over HTTPS, trusting the
	// certificates of this PEM file.
	CAFile string
	// Username and Password, when Username is set, are the job's basic
	// auth.
	Username, Password string
	// Binary is the prometheus program; "" means prometheus in PATH.
	Binary string
	// TempDir is where the server's directory (configuration, data, log)
	// is made; "" means os.TempDir.
	TempDir string
	// Keep keeps the server's directory after Stop, for its log.
	Keep bool
}

// withDefaults returns c with its zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.MetricsPath == "" {
		c.MetricsPath = "/metrics"
	}
	if c.ScrapeInterval == 0 {
		c.ScrapeInterval = time.Second
	}
	if c.ScrapeTimeout == 0 {
		c.ScrapeTimeout = c.ScrapeInterval
	}
	if c.Job == "" {
		c.Job = "promtest"
	}
	if c.Binary == "" {
		c.Binary = "prometheus"
	}
	return c
}

// duration formats d as Prometheus' configuration writes durations:
// whole milliseconds.
func duration(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}

// yaml returns the configuration file for c. Strings are written as
// double-quoted YAML scalars, whose escapes are a superset of Go's %q for
// the characters a host:port or path holds.
func (c Config) yaml() ([]byte, error) {
	if len(c.Targets) == 0 {
		return nil, errors.New("promtest: no targets to scrape")
	}
	if c.ScrapeTimeout > c.ScrapeInterval {
		return nil, fmt.Errorf("promtest: scrape timeout %v is longer than the interval %v", c.ScrapeTimeout, c.ScrapeInterval)
	}
	if c.ScrapeInterval < time.Millisecond || c.ScrapeTimeout < time.Millisecond {
		return nil, fmt.Errorf("promtest: scrape interval %v and timeout %v must be at least 1ms", c.ScrapeInterval, c.ScrapeTimeout)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  scrape_timeout: %s\n", duration(c.ScrapeInterval), duration(c.ScrapeTimeout))
	fmt.Fprintf(&b, "scrape_configs:\n  - job_name: %q\n    metrics_path: %q\n", c.Job, c.MetricsPath)
	if c.CAFile != "" {
		fmt.Fprintf(&b, "    scheme: https\n    tls_config:\n      ca_file: %q\n", c.CAFile)
	}
	if c.Username != "" {
		fmt.Fprintf(&b, "    basic_auth:\n      username: %q\n      password: %q\n", c.Username, c.Password)
	}
	fmt.Fprintf(&b, "    static_configs:\n      - targets:\n")
	for _, t := range c.Targets {
		fmt.Fprintf(&b, "          - %q\n", t)
	}
	return b.Bytes(), nil
}

// Server is a running Prometheus server started by Start.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:PORT.
	URL string

	cfg    Config
	dir    string
	cmd    *exec.Cmd
	done   chan struct{} // closed when the process has exited
	err    error         // its exit status, once done
	client *http.Client
}

// Files in a server's directory.
const (
	configFile = "prometheus.yml"
	dataDir    = "data"
	logFile    = "prometheus.log"
)

// startTries is how many free ports Start tries: another process may take
// the port between the probe that found it free and Prometheus' bind.
const startTries = 3

// Start runs Prometheus with cfg's scrape job on a free loopback port and
// returns once the server answers /-/ready. ctx bounds the start only.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	conf, err := cfg.yaml()
	if err != nil {
		return nil, err
	}
	bin, err := exec.LookPath(cfg.Binary)
	if err != nil {
		return nil, fmt.Errorf("promtest: %w (apt-get install prometheus, or make deps)", err)
	}
	dir, err := os.MkdirTemp(cfg.TempDir, "promtest-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, configFile), conf, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	for try := 1; ; try++ {
		s, err := startOn(ctx, cfg, bin, dir)
		if err == nil {
			return s, nil
		}
		if try == startTries || !errors.Is(err, errAddrInUse) || ctx.Err() != nil {
			if !cfg.Keep {
				os.RemoveAll(dir)
			}
			return nil, err
		}
	}
}

// errAddrInUse marks a start that lost its port to another process.
var errAddrInUse = errors.New("address already in use")

// startOn starts the server on a port found free and waits until it is
// ready.
func startOn(ctx context.Context, cfg Config, bin, dir string) (*Server, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, logFile))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(bin,
		"--config.file="+filepath.Join(dir, configFile),
		"--storage.tsdb.path="+filepath.Join(dir, dataDir),
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	// A group of its own, and killed by the kernel if the test binary
	// dies without calling Stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("promtest: starting %s: %w", bin, err)
	}
	s := &Server{
		URL:    "http://" + addr,
		cfg:    cfg,
		dir:    dir,
		cmd:    cmd,
		done:   make(chan struct{}),
		client: &http.Client{Timeout: 10 * time.Second},
	}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(ctx); err != nil {
		s.kill()
		if strings.Contains(s.logTail(), "address already in use") {
			err = fmt.Errorf("%w: %w", errAddrInUse, err)
		}
		return nil, err
	}
	return s, nil
}

// freePort returns a loopback address with a port no one listens on now.
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("promtest: finding a free port: %w", err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr, nil
}

// waitReady polls /-/ready until it answers 200, the server exits or ctx
// is done.
func (s *Server) waitReady(ctx context.Context) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/-/ready", nil)
		if err != nil {
			return err
		}
		if resp, err := s.client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("promtest: prometheus exited before it was ready: %v\n%s", s.err, s.logTail())
		case <-ctx.Done():
			return fmt.Errorf("promtest: waiting for prometheus at %s to be ready: %w\n%s", s.URL, ctx.Err(), s.logTail())
		case <-tick.C:
		}
	}
}

// logTailBytes is how much of the server's log an error quotes.
const logTailBytes = 2048

// logTail returns the end of the server's log.
func (s *Server) logTail() string {
	b, err := os.ReadFile(filepath.Join(s.dir, logFile))
	if err != nil {
		return ""
	}
	if len(b) > logTailBytes {
		b = b[len(b)-logTailBytes:]
	}
	return string(b)
}

// Dir returns the server's directory: prometheus.yml, data/ and
// prometheus.log.
func (s *Server) Dir() string { return s.dir }

// stopGrace is how long Stop waits after SIGTERM before it kills.
const stopGrace = 10 * time.Second

// Stop shuts the server down (SIGTERM, then SIGKILL after 10 s), waits for
// it to exit and removes its directory unless Config.Keep is set. It
// returns an error when the server had to be killed or had already died.
func (s *Server) Stop() error {
	var err error
	select {
	case <-s.done:
		err = fmt.Errorf("promtest: prometheus had exited: %v\n%s", s.err, s.logTail())
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(stopGrace):
			s.kill()
			err = fmt.Errorf("promtest: prometheus did not stop within %v of SIGTERM; killed\n%s", stopGrace, s.logTail())
		}
	}
	if !s.cfg.Keep {
		if rmErr := os.RemoveAll(s.dir); rmErr != nil {
			err = errors.Join(err, rmErr)
		}
	}
	return err
}

// kill kills the server (Prometheus forks nothing) and waits for it to
// exit.
func (s *Server) kill() {
	_ = s.cmd.Process.Kill() // os.Process never signals a reaped PID
	<-s.done
}
