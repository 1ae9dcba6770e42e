package mad

import "errors"

// ErrNoPortInfoExtended is wrapped by Querier.PortInfoExtended's error when the
// port says it has no PortInfoExtended.
var ErrNoPortInfoExtended = errors.New("port info extended not supported")
