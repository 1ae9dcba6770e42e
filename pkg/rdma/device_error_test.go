package rdma

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// minimalDevice returns the files of a one-port CA "dev0" with every file
// libibumad requires and nothing else.
func minimalDevice() fstest.MapFS {
	d := "class/infiniband/dev0/"
	p := d + "ports/1/"
	m := fstest.MapFS{}
	for name, v := range map[string]string{
		d + "node_type":         "1: CA\n",
		d + "node_guid":         "0002:c903:0000:0001\n",
		d + "sys_image_guid":    "0002:c903:0000:0001\n",
		p + "lid_mask_count":    "0\n",
		p + "sm_lid":            "0x1\n",
		p + "sm_sl":             "0\n",
		p + "lid":               "0x2\n",
		p + "state":             "4: ACTIVE\n",
		p + "phys_state":        "5: LinkUp\n",
		p + "rate":              "100 Gb/sec (4X EDR)\n",
		p + "cap_mask":          "0x02514868\n",
		p + "gids/0":            "fe80:0000:0000:0000:0002:c903:0000:0002\n",
		p + "pkeys/0":           "0xffff\n",
		"class/infiniband/x/.k": "",
	} {
		m[name] = &fstest.MapFile{Data: []byte(v)}
	}
	return m
}

func TestDeviceErrors(t *testing.T) {
	const p = "class/infiniband/dev0/ports/1/"
	tests := []struct {
		name     string
		change   func(m fstest.MapFS)
		wantErr  string // "" for no error
		notExist bool   // the error matches fs.ErrNotExist
	}{
		{"complete", func(fstest.MapFS) {}, "", false},
		{"no node_type", func(m fstest.MapFS) { delete(m, "class/infiniband/dev0/node_type") },
			"open /sys/class/infiniband/dev0/node_type: file does not exist", true},
		{"garbage node_type", func(m fstest.MapFS) { setFile(m, "class/infiniband/dev0/node_type", "CA") },
			`parse /sys/class/infiniband/dev0/node_type: invalid sysfs number "CA"`, false},
		{"no node_guid", func(m fstest.MapFS) { delete(m, "class/infiniband/dev0/node_guid") },
			"open /sys/class/infiniband/dev0/node_guid: file does not exist", true},
		{"short sys_image_guid", func(m fstest.MapFS) { setFile(m, "class/infiniband/dev0/sys_image_guid", "0002:c903\n") },
			`parse /sys/class/infiniband/dev0/sys_image_guid: invalid sysfs GUID "0002:c903"`, false},
		{"no ports", func(m fstest.MapFS) {
			for k := range m {
				if strings.Contains(k, "/ports/") {
					delete(m, k)
				}
			}
		}, "readdir /sys/class/infiniband/dev0/ports: file does not exist", true},
		{"bad port name", func(m fstest.MapFS) { setFile(m, "class/infiniband/dev0/ports/one/lid", "0x1\n") },
			`parse /sys/class/infiniband/dev0/ports/one: invalid port directory "one"`, false},
		{"leading zero port", func(m fstest.MapFS) { setFile(m, "class/infiniband/dev0/ports/01/lid", "0x1\n") },
			`parse /sys/class/infiniband/dev0/ports/01: invalid port directory "01"`, false},
		{"no lid", func(m fstest.MapFS) { delete(m, p+"lid") },
			"open /sys/class/infiniband/dev0/ports/1/lid: file does not exist", true},
		{"lid out of range", func(m fstest.MapFS) { setFile(m, p+"lid", "0x10000\n") },
			`parse /sys/class/infiniband/dev0/ports/1/lid: invalid lid "65536": out of range 0 to 65535`, false},
		{"garbage state", func(m fstest.MapFS) { setFile(m, p+"state", "ACTIVE\n") },
			`parse /sys/class/infiniband/dev0/ports/1/state: invalid sysfs number "ACTIVE"`, false},
		{"empty rate", func(m fstest.MapFS) { setFile(m, p+"rate", "\n") },
			`parse /sys/class/infiniband/dev0/ports/1/rate: invalid sysfs number ""`, false},
		{"no gid 0", func(m fstest.MapFS) { delete(m, p+"gids/0") },
			"open /sys/class/infiniband/dev0/ports/1/gids/0: file does not exist", true},
		{"garbage gid 0", func(m fstest.MapFS) { setFile(m, p+"gids/0", "fe80::1\n") },
			`parse /sys/class/infiniband/dev0/ports/1/gids/0: invalid sysfs GID "fe80::1"`, false},
		{"no pkeys", func(m fstest.MapFS) { delete(m, p+"pkeys/0") },
			"readdir /sys/class/infiniband/dev0/ports/1/pkeys: file does not exist", true},
		{"only odd pkey names", func(m fstest.MapFS) { delete(m, p+"pkeys/0"); setFile(m, p+"pkeys/x", "0xffff\n") },
			`parse /sys/class/infiniband/dev0/ports/1/pkeys: invalid P_Key table`, false},
		{"pkey out of range", func(m fstest.MapFS) { setFile(m, p+"pkeys/0", "0x1ffff\n") },
			`parse /sys/class/infiniband/dev0/ports/1/pkeys/0: invalid P_Key "131071"`, false},
		{"bad extra gid is left out", func(m fstest.MapFS) { setFile(m, p+"gids/1", "garbage\n") }, "", false},
		{"optional files missing or odd", func(m fstest.MapFS) {
			setFile(m, p+"gid_attrs/types/0", "RoCE v2\n")
			m["class/infiniband/dev0/fw_ver"] = &fstest.MapFile{Mode: fs.ModeDir}
		}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := minimalDevice()
			tt.change(m)
			d, err := NewFS(m, "/sys").Device("dev0")
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if d.Port(1) == nil || d.Port(1).LID != 2 {
					t.Errorf("port 1 = %+v", d.Port(1))
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want prefix %q", err, tt.wantErr)
			}
			var se *SysError
			if !errors.As(err, &se) {
				t.Errorf("error %T is not a *SysError", err)
			}
			if got := errors.Is(err, fs.ErrNotExist); got != tt.notExist {
				t.Errorf("errors.Is(err, fs.ErrNotExist) = %v, want %v", got, tt.notExist)
			}
		})
	}
}

func setFile(m fstest.MapFS, name, data string) { m[name] = &fstest.MapFile{Data: []byte(data)} }

func TestDeviceOptionalDefaults(t *testing.T) {
	d, err := NewFS(minimalDevice(), "/sys").Device("dev0")
	if err != nil {
		t.Fatal(err)
	}
	got := []string{d.CAType, d.FWVersion, d.HWRevision, d.Port(1).LinkLayer}
	if diff := cmp.Diff([]string{"", "", "", "IB"}, got); diff != "" {
		t.Errorf("unexpected defaults (-want +got):\n%s", diff)
	}
	if d.Unread != nil || d.Port(1).Unread != nil {
		t.Errorf("missing optional files are unread: %v, %v", d.Unread, d.Port(1).Unread)
	}
}

// TestDeviceUnread checks that an optional file that is there but does not
// read shows its default, as libibumad shows it, and leaves its error in
// Unread; one that is missing leaves none. A directory in place of the
// file is what fails the read (fstest.MapFS: EINVAL; the kernel gives
// EISDIR, or EIO, EINVAL from a driver).
func TestDeviceUnread(t *testing.T) {
	const d, p = "class/infiniband/dev0/", "class/infiniband/dev0/ports/1/"
	dir := func(m fstest.MapFS, name string) { m[name] = &fstest.MapFile{Mode: fs.ModeDir} }
	tests := []struct {
		name       string
		change     func(m fstest.MapFS)
		wantDevice []string // the messages of Device.Unread
		wantPort   []string // and of port 1's
	}{
		{"all there", func(m fstest.MapFS) {
			for _, f := range []string{d + "fw_ver", d + "hw_rev", d + "hca_type", p + "link_layer"} {
				setFile(m, f, "x\n")
			}
		}, nil, nil},
		{"fw_ver", func(m fstest.MapFS) { dir(m, d+"fw_ver") },
			[]string{"read /sys/class/infiniband/dev0/fw_ver: invalid argument"}, nil},
		{"all three", func(m fstest.MapFS) {
			dir(m, d+"fw_ver")
			dir(m, d+"hw_rev")
			dir(m, d+"hca_type")
		}, []string{
			"read /sys/class/infiniband/dev0/fw_ver: invalid argument",
			"read /sys/class/infiniband/dev0/hw_rev: invalid argument",
			"read /sys/class/infiniband/dev0/hca_type: invalid argument",
		}, nil},
		{"link_layer", func(m fstest.MapFS) { dir(m, p+"link_layer") },
			nil, []string{"read /sys/class/infiniband/dev0/ports/1/link_layer: invalid argument"}},
		// The kernel fails reads of gid_attrs for unused GID entries:
		// not a problem.
		{"gid_attrs", func(m fstest.MapFS) { dir(m, p+"gid_attrs/types/0") }, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := minimalDevice()
			tt.change(m)
			dev, err := NewFS(m, "/sys").Device("dev0")
			if err != nil {
				t.Fatal(err)
			}
			msgs := func(errs []error) []string {
				var s []string
				for _, err := range errs {
					s = append(s, err.Error())
				}
				return s
			}
			if diff := cmp.Diff(tt.wantDevice, msgs(dev.Unread)); diff != "" {
				t.Errorf("unexpected device Unread (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantPort, msgs(dev.Port(1).Unread)); diff != "" {
				t.Errorf("unexpected port Unread (-want +got):\n%s", diff)
			}
			if dev.FWVersion != "" && tt.name == "fw_ver" || dev.Port(1).LinkLayer != "IB" && tt.name == "link_layer" {
				t.Errorf("an unread file does not show its default: %+v", dev)
			}
		})
	}
}

// TestAbsent checks which errors mean a file is not there.
func TestAbsent(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"dir/x", "file"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte("1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("nowhere", filepath.Join(root, "dangling")); err != nil {
		t.Fatal(err)
	}
	fsys := NewFS(os.DirFS(root), root)
	tests := []struct {
		name   string
		absent bool
	}{
		{"missing", true},
		{"dangling", true}, // open follows the link: ENOENT
		{"dir", false},     // EISDIR on read
		{"file/x", false},  // ENOTDIR
	}
	for _, tt := range tests {
		_, err := fsys.ReadFile(tt.name)
		if err == nil || Absent(err) != tt.absent {
			t.Errorf("%s: %v, Absent %v; want %v", tt.name, err, Absent(err), tt.absent)
		}
	}
	if Absent(nil) || Absent(fs.ErrNotExist) || Absent(&SysError{Op: "read", Err: syscall.ENOENT}) {
		t.Error("Absent of nil, a bare error or a failed read")
	}
	if !Absent(&SysError{Op: "open", Err: fs.ErrNotExist}) || Absent(&SysError{Op: "open", Err: syscall.ENODEV}) {
		t.Error("Absent of ENOENT (fstest) or ENODEV")
	}
}

func TestNodeDesc(t *testing.T) {
	m := minimalDevice()
	setFile(m, "class/infiniband/dev0/node_desc", "node01 HCA-1\n")
	m["class/infiniband/dir0/node_desc"] = &fstest.MapFile{Mode: fs.ModeDir}
	fsys := NewFS(m, "/sys")
	tests := []struct{ dev, want, wantErr string }{
		{"dev0", "node01 HCA-1", ""},
		{"dir0", "", "read /sys/class/infiniband/dir0/node_desc: invalid argument"},
		{"nosuch", "", "open /sys/class/infiniband/nosuch/node_desc: file does not exist"},
		{"..", "", "open /sys/class/infiniband/..: file does not exist"},
	}
	for _, tt := range tests {
		got, err := fsys.NodeDesc(tt.dev)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tt.want || gotErr != tt.wantErr {
			t.Errorf("NodeDesc(%q) = %q, %q; want %q, %q", tt.dev, got, gotErr, tt.want, tt.wantErr)
		}
	}
}

func TestDeviceNamesEdges(t *testing.T) {
	m := fstest.MapFS{}
	for name, nt := range map[string]string{
		"mlx5_2": "1: CA", "mlx5_10": "1: CA", "Z0": "2: switch", "a0": "3: router",
		"iw0": "4: RNIC", "junk0": "junk", "zero0": "0", "usnic0": "5: usNIC",
		"big0": "4294967297", // strtoul then cut to 32 bits, as libibumad: 1
	} {
		setFile(m, "class/infiniband/"+name+"/node_type", nt+"\n")
	}
	setFile(m, "class/infiniband/nofile0/ports/1/lid", "0x1\n")
	got, err := NewFS(m, "/sys").DeviceNames()
	want := []string{"Z0", "a0", "big0", "mlx5_10", "mlx5_2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected names (-want +got):\n%s", diff)
	}
	// A node_type that does not read or parse leaves its device out, as
	// libibumad does, and says so.
	var skipped *SkippedError
	if !errors.As(err, &skipped) {
		t.Fatalf("error %v, want a *SkippedError", err)
	}
	wantSkipped := []DeviceError{
		{"junk0", &SysError{Op: "parse", Path: "/sys/class/infiniband/junk0/node_type", Err: &ParseError{Kind: "sysfs number", Input: "junk", Reason: `want a number such as 4, 0x1a or "4: ACTIVE"`}}},
		{"nofile0", &SysError{Op: "open", Path: "/sys/class/infiniband/nofile0/node_type", Err: fs.ErrNotExist}},
	}
	if diff := cmp.Diff(wantSkipped, skipped.Skipped, cmp.Comparer(func(a, b error) bool { return a.Error() == b.Error() })); diff != "" {
		t.Errorf("unexpected skipped devices (-want +got):\n%s", diff)
	}
	if skipped.Lookup("nofile0") == nil || skipped.Lookup("Z0") != nil {
		t.Errorf("Lookup: %v, %v", skipped.Lookup("nofile0"), skipped.Lookup("Z0"))
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(%v, fs.ErrNotExist) is false", err)
	}
	// Devices stops at the first device that does not read.
	if _, err := NewFS(m, "/sys").Devices(); err == nil || err.Error() != wantSkipped[0].Err.Error() {
		t.Errorf("Devices: %v, want %v", err, wantSkipped[0].Err)
	}

	// No class/infiniband: no devices and no error, as libibumad.
	got, err = NewFS(fstest.MapFS{}, "/sys").DeviceNames()
	if err != nil || got != nil {
		t.Errorf("empty tree: %q, %v", got, err)
	}
	devs, err := NewFS(fstest.MapFS{}, "/sys").Devices()
	if err != nil || len(devs) != 0 {
		t.Errorf("empty tree Devices: %v, %v", devs, err)
	}
	// class/infiniband that is a file, not a directory, is an error.
	m = fstest.MapFS{"class/infiniband": &fstest.MapFile{Data: []byte("x")}}
	if _, err := NewFS(m, "/sys").DeviceNames(); err == nil {
		t.Error("class/infiniband as a file: no error")
	}
}

func TestDeviceNotFound(t *testing.T) {
	fsys := fixtureFS("mlx5")
	for _, name := range []string{"nosuch", "", ".", "..", "a/b", "mlx5_0/ports"} {
		_, err := fsys.Device(name)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Device(%q) error = %v, want one matching fs.ErrNotExist", name, err)
		}
	}
	_, err := fsys.Device("nosuch")
	var se *SysError
	if !errors.As(err, &se) || se.Path != "/sys/class/infiniband/nosuch/node_type" || !errors.Is(se.Err, syscall.ENOENT) {
		t.Errorf("Device(nosuch) = %#v", err)
	}
}

// TestSymlinkedLayout reads a tree laid out like the real /sys, where
// class/infiniband/<dev> is a symbolic link into /sys/devices.
func TestSymlinkedLayout(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "devices/pci0000:00/0000:00:02.0/0000:01:00.0/infiniband/dev0")
	for name, f := range minimalDevice() {
		rel, ok := strings.CutPrefix(name, "class/infiniband/dev0/")
		if !ok {
			continue
		}
		path := filepath.Join(real, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	class := filepath.Join(root, "class/infiniband")
	if err := os.MkdirAll(class, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../devices/pci0000:00/0000:00:02.0/0000:01:00.0/infiniband/dev0", filepath.Join(class, "dev0")); err != nil {
		t.Fatal(err)
	}
	fsys := NewFS(os.DirFS(root), root)
	names, err := fsys.DeviceNames()
	if err != nil || len(names) != 1 || names[0] != "dev0" {
		t.Fatalf("DeviceNames = %q, %v", names, err)
	}
	d, err := fsys.Device("dev0")
	if err != nil {
		t.Fatal(err)
	}
	if d.NodeGUID != 0x0002c90300000001 || d.Port(1) == nil || d.Port(1).GUID != 0x0002c90300000002 {
		t.Errorf("device through a symlink = %+v", d)
	}
	if !fsys.IsDir("class/infiniband/dev0/ports") || fsys.IsDir("class/infiniband/dev0/node_type") {
		t.Error("IsDir does not follow the link or calls a file a directory")
	}
}

func TestPathAndRoot(t *testing.T) {
	tests := []struct{ root, name, want string }{
		{"/sys", "class/infiniband", "/sys/class/infiniband"},
		{"/sys/", "class/infiniband", "/sys/class/infiniband"},
		{"/", "class", "/class"},
		{"", "class", "class"},
		{"/sys", ".", "/sys"},
		{"testdata/x", "class/infiniband//ports", "testdata/x/class/infiniband//ports"},
	}
	for _, tt := range tests {
		if got := NewFS(fstest.MapFS{}, tt.root).Path(tt.name); got != tt.want {
			t.Errorf("Path(%q) with root %q = %q, want %q", tt.name, tt.root, got, tt.want)
		}
	}
	if got := NewFS(fstest.MapFS{}, "/sys").Root(); got != "/sys" {
		t.Errorf("Root() = %q", got)
	}
}

func TestReadFileLimit(t *testing.T) {
	m := fstest.MapFS{"big": &fstest.MapFile{Data: []byte(strings.Repeat("x", 10000))}}
	b, err := NewFS(m, "/sys").ReadFile("big")
	if err != nil || len(b) != 4096 {
		t.Errorf("ReadFile(big) = %d bytes, %v; want 4096", len(b), err)
	}
	if _, err := NewFS(m, "/sys").Stat("nosuch"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(nosuch) = %v", err)
	}
}
