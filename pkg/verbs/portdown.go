package verbs

import (
	"context"
	"fmt"
)

// PortDownError says that a port went down (IBV_EVENT_PORT_ERR) or its
// device failed (IBV_EVENT_DEVICE_FATAL), as WaitPortDown reports it.
type PortDownError struct {
	Device string
	Port   int
	Event  EventType
}

// Error names the port and the event: "port 1 of rxe0 went down
// (IBV_EVENT_PORT_ERR)", or "device rxe0 failed (IBV_EVENT_DEVICE_FATAL)".
func (e *PortDownError) Error() string {
	if e.Event == EventDeviceFatal {
		return fmt.Sprintf("device %s failed (%s)", e.Device, e.Event)
	}
	return fmt.Sprintf("port %d of %s went down (%s)", e.Port, e.Device, e.Event)
}

// WaitPortDown waits until the device reports port down
// (IBV_EVENT_PORT_ERR on that port) or itself failed
// (IBV_EVENT_DEVICE_FATAL) and returns that as a *PortDownError. It
// returns nil when ctx ends first, and the error of an async event that
// cannot be read. It reads (and acknowledges) the context's async
// events, passing over those of other ports and objects: a program
// whose peer may vanish with the link runs it beside a wait that no CM
// event or completion would end.
func (c *Context) WaitPortDown(ctx context.Context, port int) error {
	for {
		ev, err := c.NextAsyncEvent(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if ev.Type == EventDeviceFatal || ev.Type == EventPortErr && ev.Port == port {
			return &PortDownError{Device: c.name, Port: port, Event: ev.Type}
		}
	}
}
