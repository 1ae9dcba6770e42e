package mad

import "fmt"

// Method is the MAD method byte (byte 3 of the header) including its top
// bit, the R (response) bit: GetResp is Get with R set.
type Method uint8

// Methods (IBA 13.4.5 and 15.2.2). Not every class supports every method.
const (
	MethodGet               Method = 0x01
	MethodSet               Method = 0x02
	MethodSend              Method = 0x03
	MethodTrap              Method = 0x05
	MethodReport            Method = 0x06
	MethodTrapRepress       Method = 0x07
	MethodGetTable          Method = 0x12
	MethodGetTraceTable     Method = 0x13
	MethodGetMulti          Method = 0x14
	MethodDelete            Method = 0x15
	MethodGetResp           Method = 0x81
	MethodReportResp        Method = 0x86
	MethodGetTableResp      Method = 0x92
	MethodGetTraceTableResp Method = 0x93
	MethodGetMultiResp      Method = 0x94
	MethodDeleteResp        Method = 0x95
)

// ResponseBit is the R bit of the method byte.
const ResponseBit Method = 0x80

// methodName is the name of a method that has one (a switch, as
// className).
func methodName(m Method) (string, bool) {
	switch m {
	case MethodGet:
		return "Get", true
	case MethodSet:
		return "Set", true
	case MethodSend:
		return "Send", true
	case MethodTrap:
		return "Trap", true
	case MethodReport:
		return "Report", true
	case MethodTrapRepress:
		return "TrapRepress", true
	case MethodGetTable:
		return "GetTable", true
	case MethodGetTraceTable:
		return "GetTraceTable", true
	case MethodGetMulti:
		return "GetMulti", true
	case MethodDelete:
		return "Delete", true
	case MethodGetResp:
		return "GetResp", true
	case MethodReportResp:
		return "ReportResp", true
	case MethodGetTableResp:
		return "GetTableResp", true
	case MethodGetTraceTableResp:
		return "GetTraceTableResp", true
	case MethodGetMultiResp:
		return "GetMultiResp", true
	case MethodDeleteResp:
		return "DeleteResp", true
	}
	return "", false
}

// String names the method ("Get", "GetResp", ...) or gives "Method(0x..)".
func (m Method) String() string {
	if s, ok := methodName(m); ok {
		return s
	}
	return fmt.Sprintf("Method(%#02x)", uint8(m))
}

// IsResponse reports whether the R bit is set. TrapRepress answers a Trap
// but is not a response in this sense.
func (m Method) IsResponse() bool { return m&ResponseBit != 0 }

// ChangesState reports whether a request of method m may change something
// at its receiver or set it acting: every method but the Gets (Get,
// GetTable, GetTraceTable, GetMulti) and the responses. A method without a
// name counts as one that changes state, so a dry run never sends it.
func (m Method) ChangesState() bool {
	switch m {
	case MethodGet, MethodGetTable, MethodGetTraceTable, MethodGetMulti:
		return false
	}
	return !m.IsResponse()
}
