package madrpc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// failingSends is a madtest transport whose Sends fail with what sendErr
// returns for the nth send (from 1), nil letting it through.
type failingSends struct {
	*madtest.Transport
	n       atomic.Int64
	sendErr func(n int) error
}

func (f *failingSends) Send(ctx context.Context, p *mad.Packet) error {
	if err := f.sendErr(int(f.n.Add(1))); err != nil {
		return err
	}
	return f.Transport.Send(ctx, p)
}

// goneRecorder keeps what a Transactor's Gone was called with.
type goneRecorder struct {
	mu   sync.Mutex
	errs []error
}

func (g *goneRecorder) gone(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.errs = append(g.errs, err)
}

func (g *goneRecorder) calls() []error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]error(nil), g.errs...)
}

// TestTransactorGone: a send that finds the transport gone fails that
// request and every waiting and later one at once, and Gone hears of it
// once, with the request it was sending.
func TestTransactorGone(t *testing.T) {
	gone := fmt.Errorf("ibsim has gone: %w", mad.ErrGone)
	silent := madtest.New(func(*mad.Packet) []mad.Packet { return nil })
	tr := &failingSends{Transport: silent, sendErr: func(n int) error {
		if n > 1 {
			return gone
		}
		return nil
	}}
	var g goneRecorder
	x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{Timeout: 10 * time.Second, Gone: g.gone})
	defer x.Close()
	waiting := make(chan error, 1)
	go func() { // sent, then waits for an answer that never comes
		_, err := x.Do(context.Background(), request(mad.LIDPath(11)))
		waiting <- err
	}()
	for tr.n.Load() < 1 {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	_, err := x.Do(context.Background(), request(mad.LIDPath(12)))
	if !errors.Is(err, mad.ErrGone) || !strings.Contains(err.Error(), "to Lid 12") {
		t.Fatalf("Do = %v, want mad.ErrGone naming Lid 12", err)
	}
	if err := <-waiting; !errors.Is(err, mad.ErrGone) {
		t.Errorf("the waiting request: %v, want mad.ErrGone", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the waiting request ended %v after the failure, want at once", d)
	}
	if _, err := x.Do(context.Background(), request(mad.LIDPath(13))); !errors.Is(err, mad.ErrGone) {
		t.Errorf("a later request: %v, want mad.ErrGone", err)
	}
	if calls := g.calls(); len(calls) != 1 || !strings.Contains(calls[0].Error(), "to Lid 12") {
		t.Errorf("Gone called with %v, want once with the Lid 12 request's failure", calls)
	}
}

// TestTransactorUnsent: a try the transport could not send within the
// timeout counts as a timed-out try, and a request that had one fails the
// transactor (its peer reads nothing) with the usual TimeoutError.
func TestTransactorUnsent(t *testing.T) {
	tr := &failingSends{Transport: madtest.New(answer), sendErr: func(n int) error {
		return fmt.Errorf("ibsim read no frame for 20ms: %w", os.ErrDeadlineExceeded)
	}}
	var g goneRecorder
	x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{Timeout: 20 * time.Millisecond, Retries: 2, Gone: g.gone})
	defer x.Close()
	_, err := x.Do(context.Background(), request(mad.LIDPath(12)))
	var te *madrpc.TimeoutError
	if !errors.As(err, &te) || te.Tries != 3 || te.Unsent != 3 {
		t.Fatalf("Do = %v, want a TimeoutError of 3 tries, 3 unsent", err)
	}
	want := "SubnGet(NodeInfo) to Lid 12: no response after 3 tries"
	if !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "none could be sent: the port's peer took nothing)") {
		t.Errorf("error %q, want %q... none could be sent...", err, want)
	}
	if calls := g.calls(); len(calls) != 1 || !errors.As(calls[0], &te) {
		t.Errorf("Gone called with %v, want the TimeoutError once", calls)
	}
}

// TestTransactorUnsentOnce: a stall on one try only still fails the
// transactor once the request runs out of tries, and the error says how
// many tries could not be sent.
func TestTransactorUnsentOnce(t *testing.T) {
	tr := &failingSends{Transport: madtest.New(func(*mad.Packet) []mad.Packet { return nil }), sendErr: func(n int) error {
		if n == 2 {
			return os.ErrDeadlineExceeded
		}
		return nil
	}}
	x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{Timeout: 10 * time.Millisecond, Retries: 2})
	defer x.Close()
	_, err := x.Do(context.Background(), request(mad.LIDPath(12)))
	if err == nil || !strings.Contains(err.Error(), "; 1 could not be sent") {
		t.Errorf("Do = %v, want a timeout saying 1 could not be sent", err)
	}
}

// TestTransactorGoneOnACK: an RMPP ACK the reader sends into a transport
// that is gone ends the transfer and the transactor at once, not a
// timeout later.
func TestTransactorGoneOnACK(t *testing.T) {
	gone := fmt.Errorf("ibsim has gone: %w", mad.ErrGone)
	resp := &madtest.RMPPResponder{HdrLen: 56, Respond: func(req *mad.Packet) []byte {
		return madtest.SAResponse(req, mad.StatusOK, 80, lossRecords...)
	}}
	tr := &failingSends{Transport: madtest.New(resp.Handle), sendErr: func(n int) error {
		if n > 1 { // the request goes, the first ACK does not
			return gone
		}
		return nil
	}}
	defer resp.Stop()
	var g goneRecorder
	x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{SA: &madrpc.SAAddress{SMLID: 1}, Timeout: 10 * time.Second, Gone: g.gone})
	defer x.Close()
	start := time.Now()
	r := getTable
	if _, err := x.Do(context.Background(), &r); !errors.Is(err, mad.ErrGone) {
		t.Fatalf("Do = %v, want mad.ErrGone", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Do failed after %v, want at once", d)
	}
	if calls := g.calls(); len(calls) != 1 || !strings.Contains(calls[0].Error(), "sending ACK") {
		t.Errorf("Gone called with %v, want once, naming the ACK", calls)
	}
}
