package trace

import (
	"errors"
	"fmt"
	"io"
)

// ReadOptions are the options of ReadAll.
type ReadOptions struct {
	// Decode is passed to Decode for every frame.
	Decode DecodeOptions
	// Packet, when set, is called with every decoded frame in capture
	// order, RDMA or not, before it is reassembled.
	Packet func(*Packet)
}

// TruncatedError reports a capture that ends in the middle of a record, or
// whose record could not be read: the frames before it were decoded.
type TruncatedError struct {
	Frames int   // the frames read before it
	Err    error // what the capture reader said
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("after frame %d: %v (the frames before it are decoded)", e.Frames, e.Err)
}

func (e *TruncatedError) Unwrap() error { return e.Err }

// ReadAll reads a whole capture (pcap, pcapng or ERF), decodes every frame
// and reassembles the messages of each queue pair, RoCE, InfiniBand and
// iWARP alike, with their connections: what the trace command prints.
//
// An unreadable capture header is an error and no result. A capture that
// breaks off later gives the result of the frames before the break and a
// *TruncatedError.
func ReadAll(r io.Reader, o ReadOptions) (*Result, error) {
	c, err := ReadCapture(r)
	if err != nil {
		return nil, err
	}
	ra, iw := NewReassembler(), NewIWARPReassembler()
	frames := 0
	var readErr error
	for {
		f, err := c.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			readErr = &TruncatedError{Frames: frames, Err: err}
			break
		}
		frames++
		p := Decode(f, o.Decode)
		if o.Packet != nil {
			o.Packet(p)
		}
		ra.Add(p)
		iw.Add(f)
	}
	return MergeResults(ra.Finish(), iw.Finish()), readErr
}
