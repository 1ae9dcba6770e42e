package verbs

import "fmt"

// AHAttr is where an address handle sends: a port's peer by LID, and on
// RoCE (or across subnets) by GID through GRH.
type AHAttr struct {
	Port int // the local port, from 1
	DLID uint16
	SL   uint8
	GRH  *GRH // nil: no global route
}

// AH is an address handle (struct ibv_ah): the destination of a UD send.
type AH struct {
	pd     *PD
	h      handle
	attr   AHAttr
	closed bool
}

// CreateAH makes an address handle on pd.
func (pd *PD) CreateAH(a AHAttr) (*AH, error) {
	pd.use("CreateAH")
	object := fmt.Sprintf("%s (port %d, DLID %#x)", pd, a.Port, a.DLID)
	if a.Port < 1 || a.Port > 255 || a.SL > 15 || (a.GRH != nil && (a.GRH.SGIDIndex < 0 || a.GRH.SGIDIndex > 255)) {
		return nil, verbError("ibv_create_ah", object, fmt.Errorf("invalid attributes: port %d, SL %d", a.Port, a.SL))
	}
	h, err := drv.createAH(pd.h, a)
	if err != nil {
		return nil, verbError("ibv_create_ah", object, err)
	}
	pd.children++
	return &AH{pd: pd, h: h, attr: a}, nil
}

// String names the AH in messages.
func (ah *AH) String() string { return fmt.Sprintf("%s AH to DLID %#x", ah.pd, ah.attr.DLID) }

func (ah *AH) use(what string) {
	if ah.closed {
		panic(fmt.Sprintf("verbs: %s on destroyed %s", what, ah))
	}
}

// Close destroys the AH. Closing it again does nothing and returns nil.
func (ah *AH) Close() error {
	if ah.closed {
		return nil
	}
	if err := drv.destroyAH(ah.h); err != nil {
		return verbError("ibv_destroy_ah", ah.String(), err)
	}
	ah.closed = true
	ah.pd.children--
	return nil
}
