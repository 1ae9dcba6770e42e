package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"golang.org/x/crypto/bcrypt"

	"github.com/ibtool/ibtool/internal/promtest"
	"github.com/ibtool/ibtool/internal/simfabric"
)

// Node names of the non-UTF-8 fabric: Switch2 and Hca4 of
// net.2sw2path4hca renamed with bytes that are not UTF-8 and a
// backslash (ibsim's node IDs, which are the NodeDescriptions, cannot
// hold a quote); Switch1's name in the node name map has a backslash and
// a byte that is not UTF-8 (a name there ends at its first quote, as
// infiniband-diags reads it).
const (
	oddSwitch = "Sw\xfe\\2"
	oddHca    = "H\xc3\x28ca4"
	oddMapped = "spine \\ \xff"
)

// oddFabric is net.2sw2path4hca with oddSwitch and oddHca.
func oddFabric() []byte {
	net := bytes.ReplaceAll(simfabric.Net2sw2path4hca, []byte(`"Switch2"`), []byte(`"`+oddSwitch+`"`))
	return bytes.ReplaceAll(net, []byte(`"Hca4"`), []byte(`"`+oddHca+`"`))
}

// writePEM writes one PEM block to path.
func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// testCerts makes a CA and a server certificate for 127.0.0.1 signed by
// it in dir: ca.pem, cert.pem and key.pem.
func testCerts(t *testing.T, dir string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ibtool e2e CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", caDER)
	writePEM(t, filepath.Join(dir, "cert.pem"), "CERTIFICATE", leafDER)
	writePEM(t, filepath.Join(dir, "key.pem"), "EC PRIVATE KEY", keyDER)
}

// TestExporterTLSBasicAuth serves the non-UTF-8 fabric over HTTPS with
// basic auth from an exporter-toolkit web configuration file: a scrape
// without the password or with a wrong one gets 401, and a Prometheus
// server with the wrong one shows the target down; a gzip scrape decodes
// and parses with every label value valid; an OpenMetrics scrape passes
// promtool check metrics; Prometheus with the password scrapes it with
// no error and has the odd names, bad bytes as U+FFFD.
func TestExporterTLSBasicAuth(t *testing.T) {
	promtest.Require(t)
	f := simfabric.StartForTest(t, simfabric.Options{Net: oddFabric()})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	testCerts(t, dir)
	const user, password = "prometheus", "s3cret pass"
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webConfig := filepath.Join(dir, "web.yml")
	conf := fmt.Sprintf("tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\nbasic_auth_users:\n  %s: %s\n", user, hash)
	if err := os.WriteFile(webConfig, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	nodeMap := filepath.Join(dir, "node-name-map")
	if err := os.WriteFile(nodeMap, []byte(fmt.Sprintf("%s \"%s\"\n", exporterSwitch1, oddMapped)), 0o644); err != nil {
		t.Fatal(err)
	}

	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	// The transport leaves Content-Encoding to the test.
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	get := func(ctx context.Context, addr, user, password string, header http.Header) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/metrics", nil)
		if err != nil {
			return nil, err
		}
		for k, v := range header {
			req.Header[k] = v
		}
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		return client.Do(req)
	}
	addr := startExporterWith(ctx, t, f, "Hca1", func(ctx context.Context, addr string) (*http.Response, error) {
		return get(ctx, addr, user, password, nil)
	}, "--web.config.file", webConfig, "--collector.hca", "--node-name-map", nodeMap, "--web.disable-exporter-metrics")

	for _, who := range []struct{ user, password string }{{"", ""}, {user, "wrong"}, {"nobody", password}} {
		resp, err := get(ctx, addr, who.user, who.password, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("user %q password %q: %s, want 401", who.user, who.password, resp.Status)
		}
	}

	// gzip, as Prometheus asks for it.
	resp, err := get(ctx, addr, user, password, http.Header{"Accept-Encoding": {"gzip"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip scrape: %s, Content-Encoding %q", resp.Status, resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("decoding the gzip scrape: %v", err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("parsing the gzip scrape: %v\n%s", err, text)
	}
	values := map[string]bool{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if !model.LabelValue(l.GetValue()).IsValid() {
					t.Errorf("%s: label %s=%q is not UTF-8", mf.GetName(), l.GetName(), l.GetValue())
				}
				values[l.GetValue()] = true
			}
		}
	}
	if t.Failed() {
		t.Logf("label values: %v", values)
	}
	for _, want := range []string{"Sw\uFFFD\\2", "H\uFFFD(ca4", "spine \\ \uFFFD", "Sw \\2"} {
		if !values[want] {
			t.Errorf("no label value %q in the scrape", want)
		}
	}

	// The text scrape passes promtool's checks. (promtool 2.42 reads the
	// text format only: OpenMetrics is checked by Prometheus itself
	// below, which asks for it first.)
	textFile := filepath.Join(dir, "scrape.prom")
	if err := os.WriteFile(textFile, text, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := promtest.CheckMetrics(ctx, textFile); err != nil {
		t.Error(err)
	}
	resp, err = get(ctx, addr, user, password, http.Header{"Accept": {"application/openmetrics-text;version=1.0.0"}})
	if err != nil {
		t.Fatal(err)
	}
	om, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/openmetrics-text") {
		t.Fatalf("OpenMetrics scrape: %v, Content-Type %q", err, resp.Header.Get("Content-Type"))
	}
	if !bytes.HasSuffix(om, []byte("# EOF\n")) {
		t.Errorf("OpenMetrics scrape does not end with # EOF")
	}

	// Prometheus itself, with the password and with a wrong one.
	good := promtest.StartForTest(t, promtest.Config{Targets: []string{addr}, ScrapeInterval: time.Second,
		CAFile: filepath.Join(dir, "ca.pem"), Username: user, Password: password})
	bad := promtest.StartForTest(t, promtest.Config{Targets: []string{addr}, ScrapeInterval: time.Second,
		CAFile: filepath.Join(dir, "ca.pem"), Username: user, Password: "wrong"})
	start := time.Now()
	targets, err := good.WaitScrape(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if tg.Health != promtest.HealthUp || tg.LastError != "" {
			t.Errorf("target %s with the password: health %q, last error %q; want up", tg.ScrapeURL, tg.Health, tg.LastError)
		}
	}
	targets, err = bad.WaitScrape(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if tg.Health != promtest.HealthDown || !strings.Contains(tg.LastError, "401") {
			t.Errorf("target %s with a wrong password: health %q, last error %q; want down with 401", tg.ScrapeURL, tg.Health, tg.LastError)
		}
	}
	// The samples of a scrape are committed just after it is reported.
	// The descriptions' bad bytes are U+FFFD; the names of nodes not in
	// the node name map are their descriptions cleaned as
	// infiniband-diags cleans them (a space for what is not printable).
	for _, q := range []string{`infiniband_port_info{description="Sw\uFFFD\\2",port="1"}`, `infiniband_switch_info{switch="Sw \\2"}`,
		`infiniband_port_info{description="H\uFFFD(ca4"}`, `infiniband_hca_info{hca="H (ca4"}`,
		`infiniband_port_info{name="spine \\ \uFFFD",port="1"}`} {
		for {
			samples, err := good.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(samples) == 1 {
				break
			}
			select {
			case <-ctx.Done():
				all, _ := good.Query(context.Background(), `{__name__=~"infiniband_(switch|hca)_info"}`)
				t.Fatalf("Prometheus has %d series of %s, want 1: %v; the info series: %+v", len(samples), q, samples, all)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}
