package rdma

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/internal/jsonkeys"
)

// bwDefaults are the options of a client with no flags.
var bwDefaults = rdmaBwOptions{Server: "h", IBPort: 1, GIDIndex: -1, Size: 65536, Iters: 5000, TCPPort: 18515,
	TxDepth: 128, CQMod: 1, Inline: 220, QPTimeout: 14, NumSGE: 1}

func TestRdmaBwArgs(t *testing.T) {
	with := func(f func(o *rdmaBwOptions)) rdmaBwOptions { o := bwDefaults; f(&o); return o }
	tests := []argsCase[rdmaBwOptions]{
		{"client defaults: one completion a message above 8 KiB", []string{"h"}, bwDefaults, ""},
		{"server", nil, with(func(o *rdmaBwOptions) { o.Server, o.CQMod = "", 100 }), ""},
		{"perftest's flags", []string{"-d", "rxe0", "-i", "2", "-x", "3", "-s", "4K", "-n", "50", "-b", "-p", "7000", "--report_gbits", "-F",
			"-t", "64", "-Q", "10", "-m", "1024", "-I", "0", "-N", "-u", "20", "-S", "3", "--json", "h"},
			with(func(o *rdmaBwOptions) {
				o.Device, o.IBPort, o.GIDIndex, o.Size, o.Iters, o.Bidir, o.TCPPort, o.Gbits = "rxe0", 2, 3, 4096, 50, true, 7000, true
				o.TxDepth, o.CQMod, o.MTU, o.Inline, o.NoPeak, o.QPTimeout, o.SL, o.JSON = 50, 10, 3, 0, true, 20, 3, true
			}), ""},
		{"tx depth no deeper than the iterations", []string{"-n", "20", "-s", "64", "h"}, with(func(o *rdmaBwOptions) { o.Iters, o.Size, o.TxDepth, o.CQMod = 20, 64, 20, 20 }), ""},
		{"-Q kept above 8 KiB", []string{"-Q", "50", "h"}, with(func(o *rdmaBwOptions) { o.CQMod = 50 }), ""},
		{"-a keeps -Q", []string{"-a", "h"}, with(func(o *rdmaBwOptions) { o.All, o.CQMod = true, 100 }), ""},
		{"duration", []string{"-D", "3", "-e", "h"}, with(func(o *rdmaBwOptions) { o.Duration, o.Events, o.CQMod = 3, true, 100 }), ""},
		{"size in hex and M", []string{"-s", "0x2M", "h"}, with(func(o *rdmaBwOptions) { o.Size = 2 << 20 }), ""},
		{"size 0", []string{"-s", "0"}, rdmaBwOptions{}, `invalid message size "0": want 1 to 2147483647 bytes (K and M suffixes allowed)`},
		{"size too big", []string{"-s", "2048M"}, rdmaBwOptions{}, `invalid message size "2048M"`},
		{"size not a number", []string{"-s", "lots"}, rdmaBwOptions{}, `invalid message size "lots"`},
		{"too few iterations", []string{"-n", "4"}, rdmaBwOptions{}, "invalid -n iterations 4: want 5 to 100000000"},
		{"bad MTU", []string{"-m", "1500"}, rdmaBwOptions{}, "invalid MTU 1500: want 256, 512, 1024, 2048 or 4096"},
		{"bad port", []string{"-i", "0"}, rdmaBwOptions{}, "invalid -i port 0: want 1 to 255"},
		{"bad CQ moderation", []string{"-Q", "2000"}, rdmaBwOptions{}, "invalid -Q CQ moderation 2000: want 1 to 1024"},
		{"bad TCP port", []string{"-p", "70000"}, rdmaBwOptions{}, "invalid -p TCP port 70000: want 1 to 65535"},
		{"duration and all sizes", []string{"-D", "2", "-a"}, rdmaBwOptions{}, "duration mode (-D) does not run all sizes (-a)"},
		{"two hosts", []string{"a", "b"}, rdmaBwOptions{}, "expected at most 1 argument(s)"},
		{"rdma_cm client", []string{"-R", "h"}, with(func(o *rdmaBwOptions) { o.RDMACM = true }), ""},
		{"rdma_cm exchange, long name", []string{"--comm_rdma_cm", "h"}, with(func(o *rdmaBwOptions) { o.CommCM = true }), ""},
		{"rdma_cm server runs its own flags", []string{"--rdma_cm", "-n", "20", "-s", "64"},
			with(func(o *rdmaBwOptions) {
				o.Server, o.RDMACM, o.Iters, o.Size, o.TxDepth, o.CQMod = "", true, 20, 64, 20, 20
			}), ""},
		{"rdma_cm is IPv4", []string{"-R", "-6", "h"}, rdmaBwOptions{}, "perftest's rdma_cm exchange (-R, -z) is IPv4 only, not with -6"},
	}
	testArgs(t, "rdma_bw", newRdmaBwCmd, tests, cmpopts.IgnoreUnexported(rdmaBwOptions{}), cmpopts.IgnoreFields(rdmaBwOptions{}, "IO"))
}

// TestBwVerify checks the data errors both ways.
func TestBwVerify(t *testing.T) {
	s := &bwSession{}
	p := bwParams{Seed: 1}
	client := &rdmaBwOptions{Server: "h"}
	err := bwVerify(client, p, s, 64, true, false, bwResultMsg{SentSum: "aaaaaaaaaaaaaaaaaaaa"}, bwResultMsg{}, bwCheckMsg{}, bwCheckMsg{RecvSum: "bbbbbbbbbbbbbbbbbbbb"})
	want := "data check failed at size 64 (client to server): sent bytes with SHA-256 aaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbb arrived"
	if diff := cmp.Diff(want, fmt.Sprint(err)); diff != "" {
		t.Errorf("unexpected error (-want +got):\n%s", diff)
	}
	if cmdutil.ExitCode(err) != cmdutil.ExitFailure {
		t.Errorf("exit %d, want 3", cmdutil.ExitCode(err))
	}
	if err := bwVerify(client, p, s, 64, true, false, bwResultMsg{SentSum: "x"}, bwResultMsg{}, bwCheckMsg{}, bwCheckMsg{RecvSum: "x"}); err != nil {
		t.Errorf("equal checksums: %v", err)
	}
}

// TestBwPeer runs the exchange over a loopback TCP connection.
func TestBwPeer(t *testing.T) {
	a, b := tcpPair(t)
	client, server := newBwPeer(a, "server"), newBwPeer(b, "client")
	done := make(chan error, 1)
	go func() {
		var got bwDest
		err := server.exchange("dest", bwDest{QPN: 2}, &got)
		if err == nil && got.QPN != 1 {
			err = fmt.Errorf("server got %+v", got)
		}
		if err == nil {
			err = server.send("go", bwGo{Size: 8})
		}
		done <- err
	}()
	var got bwDest
	if err := client.exchange("dest", bwDest{QPN: 1}, &got); err != nil || got.QPN != 2 {
		t.Fatalf("client got %+v, %v", got, err)
	}
	var r bwResultMsg
	err := client.recv("result", &r)
	if want := `the server sent "go" where this side expected "result": are both rdma_bw of the same version?`; fmt.Sprint(err) != want {
		t.Errorf("out of step: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b.Close()
	err = client.recv("check", &r)
	if want := "the server closed the connection while this side waited for its check"; fmt.Sprint(err) != want {
		t.Errorf("closed: %v", err)
	}
}

func TestBwParamsSizes(t *testing.T) {
	if got := (bwParams{Size: 77}).sizes(); !cmp.Equal(got, []int{77}) {
		t.Errorf("sizes %v", got)
	}
	got := (bwParams{All: true}).sizes()
	if len(got) != 23 || got[0] != 2 || got[22] != 1<<23 {
		t.Errorf("all sizes %v", got)
	}
	for _, p := range []bwParams{
		{Size: 0, TxDepth: 1, CQMod: 1, Iters: 5},
		{Size: 8, TxDepth: 15001, CQMod: 1, Iters: 5},
		{Size: 8, TxDepth: 4, CQMod: 5, Iters: 5}, // no completion would ever come
		{Size: 8, TxDepth: 4, CQMod: 1},
	} {
		if err := checkBwParams(p); err == nil {
			t.Errorf("%+v from a client accepted", p)
		}
	}
	if err := checkBwParams(bwParams{Size: 8, TxDepth: 4, CQMod: 4, Duration: 2}); err != nil {
		t.Errorf("good parameters refused: %v", err)
	}
}

// TestBwPeerWatch checks the watch over a run: a peer that dies ends the
// run's context with the reason, and one that sends early loses nothing.
func TestBwPeerWatch(t *testing.T) {
	pair := func() (*bwPeer, net.Conn) {
		a, b := tcpPair(t)
		return newBwPeer(a, "server"), b
	}

	// The peer sends its result at once (it writes nothing), then dies.
	p, other := pair()
	ctx, stop := p.watch(context.Background())
	if err := newBwPeer(other, "client").send("result", bwResultMsg{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	other.Close()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the run's context did not end when the peer went")
	}
	want := "the server closed the connection during the run"
	if got := fmt.Sprint(context.Cause(ctx)); got != want {
		t.Errorf("cause %q, want %q", got, want)
	}
	if got := fmt.Sprint(stop()); got != want {
		t.Errorf("stop says %q, want %q", got, want)
	}

	p, other = pair()
	ctx, stop = p.watch(context.Background())
	if err := newBwPeer(other, "client").send("result", bwResultMsg{SentSum: "abc"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // let the watch see the message
	if ctx.Err() != nil {
		t.Fatalf("a message ended the run: %v", context.Cause(ctx))
	}
	if err := stop(); err != nil || ctx.Err() == nil {
		t.Errorf("stop: %v, context %v", err, ctx.Err())
	}
	var r bwResultMsg
	if err := p.recv("result", &r); err != nil || r.SentSum != "abc" {
		t.Errorf("after the watch: %+v, %v", r, err)
	}
}

// tcpPair returns the two ends of a TCP connection on the loopback, closed
// when the test ends: both sides of rdma_bw send before they read, which
// an unbuffered net.Pipe would deadlock.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	defer ln.Close()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ln.Accept()
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// bwFakeReport is a client's report of one size, for --json, on a
// session that was never opened.
func bwFakeReport(out *strings.Builder) *bwReport {
	o := &rdmaBwOptions{Server: "h", IBPort: 1, JSON: true, IO: cmdutil.IOStreams{Out: out}}
	r := &bwReport{o: o, p: bwParams{Size: 65536, Iters: 5000, TxDepth: 128, CQMod: 1, Seed: 7},
		s: &bwSession{gidIndex: -1, inline: 220}, device: "mlx5_0",
		local: bwDest{LID: 1, QPN: 0x11}, remote: bwDest{LID: 2, QPN: 0x12}, mtu: 5}
	st := bwStats{Size: 65536, Iters: 5000, Elapsed: time.Second, PeakPerMsg: 100000}
	r.add(bwJSONResult{bwResult: st.result(nil, false), DataVerified: true, SentSHA256: "ab", ReceivedSHA256: "cd"})
	return r
}

// TestRdmaBwJSONKeys pins the keys of --json.
func TestRdmaBwJSONKeys(t *testing.T) {
	var out strings.Builder
	if err := bwFakeReport(&out).end(); err != nil {
		t.Fatal(err)
	}
	want := []string{"bidirectional", "connectionType", "cqModeration", "device", "duration", "gidIndex", "ibPort",
		"local.gid[]", "local.lid", "local.mtu", "local.psn", "local.qpn", "local.rkey", "local.vaddr",
		"maxInlineData", "mtu", "remote.gid[]", "remote.lid", "remote.mtu", "remote.psn", "remote.qpn",
		"remote.rkey", "remote.vaddr", "results[].bwAverage", "results[].bwPeak", "results[].dataVerified",
		"results[].iterations", "results[].msgRateMpps", "results[].receivedSHA256", "results[].sentSHA256",
		"results[].size", "results[].unit", "role", "test", "txDepth"}
	var doc any
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, jsonkeys.Leaves(doc)); diff != "" {
		t.Errorf("unexpected keys (-want +got):\n%s", diff)
	}
}
