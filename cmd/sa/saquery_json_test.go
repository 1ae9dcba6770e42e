package sa

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/internal/jsonkeys"
)

// prefixed returns the paths with "records[]." before each.
func prefixed(paths ...string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = "records[]." + p
	}
	slices.Sort(out)
	return out
}

var (
	nodeRecordKeys = []string{"lid", "reserved", "nodeDescription",
		"nodeInfo.baseVersion", "nodeInfo.classVersion", "nodeInfo.nodeType", "nodeInfo.numPorts",
		"nodeInfo.systemImageGUID", "nodeInfo.nodeGUID", "nodeInfo.portGUID", "nodeInfo.partitionCap",
		"nodeInfo.deviceID", "nodeInfo.revision", "nodeInfo.localPortNum", "nodeInfo.vendorID"}
	pathRecordKeys = []string{"serviceID", "dgid", "sgid", "dlid", "slid", "hopFlowRaw", "tClass",
		"numPathReversible", "pKey", "qosClass", "sl", "mtu", "rate", "packetLifeTime", "preference"}
	mcMemberKeys = []string{"mgid", "portGID", "qKey", "mlid", "mtu", "tClass", "pKey", "rate",
		"packetLifeTime", "sl", "flowLabel", "hopLimit", "scope", "joinState", "proxyJoin"}
	portInfoRecordKeys = append([]string{"endPortLID", "portNum", "options"}, portInfoKeys("portInfo.")...)
)

// portInfoKeys are PortInfo's JSON keys under the prefix.
func portInfoKeys(prefix string) []string {
	keys := []string{"mKey", "gidPrefix", "lid", "smlid", "capabilityMask", "diagCode", "mKeyLeasePeriod",
		"localPortNum", "linkWidthEnabled", "linkWidthSupported", "linkWidthActive", "linkSpeedSupported",
		"linkState", "physLinkState", "linkDownDefState", "protectBits", "lmc", "linkSpeedActive",
		"linkSpeedEnabled", "neighborMTU", "smsl", "vlCap", "initType", "vlHighLimit", "vlArbHighCap",
		"vlArbLowCap", "initTypeReply", "mtuCap", "vlStallCount", "hoqLife", "operationalVLs",
		"partitionEnforcementInbound", "partitionEnforcementOutbound", "filterRawInbound", "filterRawOutbound",
		"mKeyViolations", "pKeyViolations", "qKeyViolations", "guidCap", "clientReregister",
		"mcastPkeyTrapSuppressionEnabled", "subnetTimeout", "respTimeValue", "localPhyErrors", "overrunErrors",
		"maxCreditHint", "roundTrip", "capabilityMask2", "linkSpeedExtActive", "linkSpeedExtSupported",
		"linkSpeedExtEnabled"}
	for i, k := range keys {
		keys[i] = prefix + k
	}
	return keys
}

// TestSaqueryJSONKeys pins the keys of saquery's --json document for
// every record type and print mode (docs/saquery.md's schema), so that a
// change of the records' Go types shows here.
func TestSaqueryJSONKeys(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"NR"}, prefixed(nodeRecordKeys...)},
		{[]string{"-N"}, prefixed(nodeRecordKeys...)},
		{[]string{"-D"}, prefixed(nodeRecordKeys...)},
		{[]string{"-L", "Hca1"}, prefixed(nodeRecordKeys...)},
		{[]string{"PIR"}, prefixed(portInfoRecordKeys...)},
		{[]string{"-s"}, prefixed(portInfoRecordKeys...)},
		{[]string{"PR"}, prefixed(pathRecordKeys...)},
		{[]string{"MCMR"}, prefixed(mcMemberKeys...)},
		{[]string{"-g"}, prefixed(mcMemberKeys...)},
		{[]string{"-m"}, prefixed(append([]string{"nodeDescription"}, mcMemberKeys...)...)},
		{[]string{"CPI"}, prefixed("baseVersion", "classVersion", "capabilityMask", "capabilityMask2",
			"respTimeValue", "redirectGID", "redirectTCSLFL", "redirectLID", "redirectPKey", "redirectQP",
			"redirectQKey", "trapGID", "trapTCSLFL", "trapLID", "trapPKey", "trapHLQP", "trapQKey")},
		{[]string{"SR"}, prefixed("serviceID", "serviceGID", "servicePKey", "serviceLease", "serviceName",
			"serviceData8[]", "serviceData16[]", "serviceData32[]", "serviceData64[]")},
		{[]string{"SMIR"}, prefixed("lid", "guid", "smKey", "actCount", "priority", "smState")},
		{[]string{"SWIR"}, prefixed("lid", "linearFDBCap", "randomFDBCap", "multicastFDBCap", "linearFDBTop",
			"defaultPort", "defaultMulticastPrimaryPort", "defaultMulticastNotPrimaryPort",
			"lifeTimePortStateChangeOptSL2VL", "lidsPerPort", "partitionEnforcementCap", "flags", "multicastFDBTop")},
		{[]string{"IIR"}, prefixed("subscriberGID", "subscriberEnum", "gid", "lidRangeBegin", "lidRangeEnd",
			"isGeneric", "subscribe", "type", "trapNumberOrDeviceID", "qpn", "respTimeValue", "producerTypeOrVendorID")},
		{[]string{"LR"}, prefixed("fromLID", "fromPort", "toPort", "toLID")},
		{[]string{"SL2VL"}, prefixed("lid", "inPort", "outPort", "vlBySL[]")},
		{[]string{"VLAR"}, prefixed("lid", "port", "block", "vl[]", "weight[]")},
		{[]string{"PKTR"}, prefixed("lid", "block", "port", "pKeys[]")},
		{[]string{"LFTR"}, prefixed("lid", "block", "ports[]")},
		{[]string{"GIR"}, prefixed("lid", "block", "guids[]")},
		{[]string{"MFTR"}, prefixed("lid", "position", "block", "portMasks[]")},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			sa := newFakeSA()
			sa.every = true
			out, err := runSaquery(t, sa, append([]string{"--json"}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			var doc any
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if diff := cmp.Diff(tt.want, jsonkeys.Leaves(doc)); diff != "" {
				t.Errorf("JSON keys (-want +got):\n%s", diff)
			}
		})
	}
}
