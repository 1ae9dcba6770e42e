package madrpc

import (
	"fmt"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
)

// TimeoutError reports a request that got no response after every try.
type TimeoutError struct {
	Request string        // what was asked: "SubnGet(NodeInfo)"
	To      string        // where: the Path's String, "Lid 12"
	Tries   int           // tries made (a request returned undelivered goes again within its try)
	Elapsed time.Duration // from the first send to giving up
	// Unsent counts the tries the transport could not send within the
	// timeout, because its peer took nothing (a stopped simulator).
	Unsent int
	// Class is the class the request went as and MKey the M_Key it
	// carried, when an SMP: a port whose M_Key check fails drops the SMP,
	// so a timeout may mean a missing or wrong key (MaybeMKeyProtected).
	Class mad.Class
	MKey  uint64
}

func (e *TimeoutError) Error() string {
	tries := "1 try"
	if e.Tries != 1 {
		tries = fmt.Sprintf("%d tries", e.Tries)
	}
	var unsent string
	switch {
	case e.Unsent == 0:
	case e.Unsent == e.Tries:
		unsent = "; none could be sent: the port's peer took nothing"
	default:
		unsent = fmt.Sprintf("; %d could not be sent: the port's peer took nothing", e.Unsent)
	}
	return fmt.Sprintf("%s to %s: no response after %s (%v%s)", e.Request, e.To, tries, e.Elapsed.Round(time.Millisecond), unsent)
}

// MaybeMKeyProtected reports whether the request was an SMP, which an
// M_Key protected port drops without an answer when the M_Key check
// fails (IBA 14.2.4): the timeout may come from the key, not the path.
func (e *TimeoutError) MaybeMKeyProtected() bool { return e.Class.IsSMP() }

// Timeout reports true, for errors.As users that test net.Error style.
func (e *TimeoutError) Timeout() bool { return true }

// RetryError reports a try that timed out when tries were left: the
// request goes again (TransactorOptions.Errors).
type RetryError struct {
	Request string        // what was asked: "SubnGet(NodeInfo)"
	To      string        // where: "Lid 12"
	Retry   int           // the resend about to go: 1 for the second try
	Timeout time.Duration // how long the try waited
}

func (e *RetryError) Error() string {
	return fmt.Sprintf("%s to %s: retry %d (timeout %d ms)", e.Request, e.To, e.Retry, e.Timeout.Milliseconds())
}

// StatusError reports a response whose MAD status is not zero.
type StatusError struct {
	Request string     // what was asked: "SubnGet(PortInfo)"
	To      string     // where: "Lid 12"
	Status  mad.Status // the status, the D bit cleared
	Class   mad.Class  // the response's class, which gives bits 8-14 their meaning
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s to %s: MAD status 0x%04x: %s", e.Request, e.To, uint16(e.Status), e.Status.Describe(e.Class))
}

// ReplyError reports a response that cannot be used: too short, or of the
// wrong class, method or attribute.
type ReplyError struct {
	Request string
	To      string
	Reason  string
}

func (e *ReplyError) Error() string {
	return fmt.Sprintf("%s to %s: bad response: %s", e.Request, e.To, e.Reason)
}
