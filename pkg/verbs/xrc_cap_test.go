package verbs

import "testing"

func TestAttrXRC(t *testing.T) {
	for _, c := range []struct {
		name  string
		flags uint32
		want  bool
	}{
		{"rxe in kernel 6.1 (ibv_devinfo -v in the VM)", 0x01223c76, false},
		{"siw in kernel 6.1", 0x00200000, false},
		{"rxe's flags with XRC", 0x01223c76 | DeviceCapXRC, true},
		{"XRC alone", DeviceCapXRC, true},
	} {
		if got := (Attr{DeviceCapFlags: c.flags}).XRC(); got != c.want {
			t.Errorf("%s: device_cap_flags %#08x: XRC %v, want %v", c.name, c.flags, got, c.want)
		}
	}
}
