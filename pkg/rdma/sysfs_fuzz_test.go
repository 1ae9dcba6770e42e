package rdma

import "testing"

// FuzzParseSysfs feeds the same text to every sysfs value parser. None may
// panic; whatever parses must agree with itself when parsed again from
// the kernel's own format.
func FuzzParseSysfs(f *testing.F) {
	for _, s := range []string{
		"4: ACTIVE\n", "0xffff", "2.5 Gb/sec (1X SDR)", "40 Gb/sec (4X FDR10)", "-1", "0x",
		"0c42:a103:00a1:b2c4", "fe80:0000:0000:0000:0c42:a103:00a1:b2c4", "1::2", "\x00\n",
		"99999999999999999999999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		CString([]byte(s), 0)
		CString([]byte(s), umadNumBuf)
		ParseSysfsUint(s)
		(&Port{Rate: s}).FDR10()
		if g, err := ParseSysfsGUID(s); err == nil {
			again, err := ParseSysfsGUID(g.Colon())
			if err != nil || again != g {
				t.Errorf("GUID %v from %q does not round-trip through %q: %v, %v", g, s, g.Colon(), again, err)
			}
		}
		if g, err := ParseSysfsGID(s); err == nil {
			again, err := ParseSysfsGID(g.Long())
			if err != nil || again != g {
				t.Errorf("GID %v from %q does not round-trip through %q: %v, %v", g, s, g.Long(), again, err)
			}
		}
	})
}

// FuzzDevice reads a device whose files hold arbitrary bytes. Reading must
// return a device or an error, never panic.
func FuzzDevice(f *testing.F) {
	f.Add("1: CA\n", "0002:c903:0000:0001\n", "0x2\n", "4: ACTIVE\n", "100 Gb/sec (4X EDR)\n",
		"fe80:0000:0000:0000:0002:c903:0000:0002\n", "0xffff\n", "1")
	f.Add("", "", "", "", "", "", "", "")
	f.Add("3", "1:2:3:4", "-1", "99999999999", "0x", "::::::::", "0x1ffff", "01")
	f.Fuzz(func(t *testing.T, nodeType, guid, lid, state, rate, gid, pkey, portDir string) {
		m := minimalDevice()
		d := "class/infiniband/dev0/"
		setFile(m, d+"node_type", nodeType)
		setFile(m, d+"node_guid", guid)
		setFile(m, d+"fw_ver", rate)
		if !validName(portDir) {
			portDir = "1"
		}
		p := d + "ports/" + portDir + "/"
		for k, v := range map[string]string{
			"lid_mask_count": "0", "sm_lid": lid, "sm_sl": state, "lid": lid, "state": state,
			"phys_state": state, "rate": rate, "cap_mask": lid, "link_layer": rate,
			"gids/0": gid, "gids/1": rate, "gid_attrs/types/0": state, "pkeys/0": pkey,
		} {
			setFile(m, p+k, v)
		}
		if validName(pkey) {
			setFile(m, p+"pkeys/"+pkey, pkey) // a P_Key index named by the input
		}
		fsys := NewFS(m, "/sys")
		if dev, err := fsys.Device("dev0"); err == nil {
			for _, port := range dev.Ports {
				port.FDR10()
			}
			_ = dev.NodeType.String()
		}
		fsys.DeviceNames()
		fsys.Devices()
	})
}
