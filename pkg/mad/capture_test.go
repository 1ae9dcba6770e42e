package mad

import (
	"encoding/hex"
	"strings"
	"testing"
)

// Captured on the bench (ibsim 0.10, net.2sw2path4hca from ibsim-utils'
// net-examples, no SM so every LID is 0): `smpquery -D nodeinfo 0,1` run
// with SIM_HOST=Hca1 under libumad2sim.so and traced with
// `strace -f -xx -e trace=write,read`. These are the MADs inside the
// 288-byte struct sim_request frames the shim wrote to and read from
// ibsim's data socket.
//
// The request is a directed-route SubnGet(NodeInfo) along path 0,1 (hop
// count 1). Its TID is libibmad's 0x6171b1e5 with the shim's agent ID (1) in
// bits 32-47. The response comes from Switch1 port 1: ibsim set the R and D
// bits, wrote its client number (2) into TID bits 48-63, filled in the
// return path and the NodeInfo data.
const (
	capturedDRNodeInfoGet = "" +
		"0181010100000001000000016171b1e500110000000000000000000000000000" +
		"ffffffff00000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000" +
		"0001000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000"

	capturedDRNodeInfoGetResp = "" +
		"0181018180000001000200016171b1e500110000000000000000000000000000" +
		"ffffffff00000000000000000000000000000000000000000000000000000000" +
		"0101020800000000002000000000000000200000000000000020000000080000" +
		"000000a101000000000000000000000000000000000000000000000000000000" +
		"0001000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000" +
		"0101000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000"
)

// attrNodeInfo is the SMP NodeInfo attribute ID, used by the captures.
const attrNodeInfo AttrID = 0x0011

// unhex decodes a hex literal, ignoring white space.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex literal: %v", err)
	}
	return b
}
