package rdma

import (
	"errors"
	"io/fs"
	"sort"
	"strconv"
)

// Device is one RDMA device as sysfs shows it under
// class/infiniband/<name>, read the way libibumad's umad_get_ca reads it.
//
// Required files: node_type, node_guid, sys_image_guid and the ports
// directory; a device without them does not read. Optional files, empty
// when missing or unreadable: fw_ver, hw_rev and hca_type (libibumad has no
// other source for the CA type and leaves it empty; drivers such as rxe
// do not write it). node_desc, which libibumad does not read, is read
// apart by NodeDesc.
type Device struct {
	Name         string   // directory name under class/infiniband, e.g. "mlx5_0"
	NodeType     NodeType // node_type
	CAType       string   // hca_type, e.g. "MT4123"; "" when missing
	FWVersion    string   // fw_ver, e.g. "20.31.1014"; "" when missing
	HWRevision   string   // hw_rev, e.g. "0"; "" when missing
	NodeGUID     GUID     // node_guid
	SysImageGUID GUID     // sys_image_guid
	// NumPorts is the highest port number under ports/ (0 for a switch,
	// whose only port in sysfs is the management port 0).
	NumPorts int
	// Ports holds every port under ports/, by increasing number.
	Ports []*Port
	// Unread holds the errors of the optional files above that are there
	// but did not read: their fields are empty as if the files were
	// missing, which is what libibumad shows, and a tool that prints them
	// says so. Files that are simply missing leave no error.
	Unread []error
}

// Port returns port n of d, or nil when d has no such port.
func (d *Device) Port(n int) *Port {
	for _, p := range d.Ports {
		if p.Number == n {
			return p
		}
	}
	return nil
}

// DeviceNames returns the names of the InfiniBand devices (node type CA,
// switch or router) under class/infiniband, sorted by strcmp: the list
// libibumad's umad_get_ca_device_list and umad_sort_ca_device_list give.
// A tree without class/infiniband has no devices and no error.
//
// A device whose node_type does not read or parse is left out, as
// libibumad leaves it out, but not silently: the names of the others come
// back together with a *SkippedError that names it. Any other error
// comes with no names.
func (f *FS) DeviceNames() ([]string, error) {
	entries, err := f.ReadDir(classInfiniBand)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	var skipped []DeviceError
	for _, e := range entries {
		name := e.Name()
		if !validName(name) {
			continue
		}
		t, err := f.readUint(classInfiniBand + "/" + name + "/node_type")
		switch {
		case err != nil:
			skipped = append(skipped, DeviceError{Name: name, Err: err})
		case NodeType(uint32(t)).IsIB():
			names = append(names, name)
		}
	}
	sort.Strings(names) // ReadDir sorts already; strcmp order is the contract
	if skipped != nil {
		return names, &SkippedError{Skipped: skipped}
	}
	return names, nil
}

// Devices reads every device DeviceNames lists, in that order. The first
// device that does not read, one DeviceNames had to leave out included,
// stops the listing with its error.
func (f *FS) Devices() ([]*Device, error) {
	names, err := f.DeviceNames()
	var skipped *SkippedError
	if errors.As(err, &skipped) {
		return nil, skipped.Skipped[0].Err
	}
	if err != nil {
		return nil, err
	}
	devs := make([]*Device, 0, len(names))
	for _, n := range names {
		d, err := f.Device(n)
		if err != nil {
			return nil, err
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// Device reads the device called name, of any node type. A name with no
// directory gives an error that matches fs.ErrNotExist.
func (f *FS) Device(name string) (*Device, error) {
	dir := classInfiniBand + "/" + name
	if !validName(name) {
		return nil, &SysError{Op: "open", Path: f.Path(dir), Err: fs.ErrNotExist}
	}
	d := &Device{Name: name}
	t, err := f.readUint(dir + "/node_type")
	if err != nil {
		return nil, err
	}
	d.NodeType = NodeType(uint32(t))
	d.FWVersion = f.readOptional(dir+"/fw_ver", "", &d.Unread)
	d.HWRevision = f.readOptional(dir+"/hw_rev", "", &d.Unread)
	d.CAType = f.readOptional(dir+"/hca_type", "", &d.Unread)
	if d.NodeGUID, err = f.readGUID(dir + "/node_guid"); err != nil {
		return nil, err
	}
	if d.SysImageGUID, err = f.readGUID(dir + "/sys_image_guid"); err != nil {
		return nil, err
	}
	if d.Ports, err = f.ports(dir + "/ports"); err != nil {
		return nil, err
	}
	for _, p := range d.Ports {
		d.NumPorts = max(d.NumPorts, p.Number)
	}
	return d, nil
}

// NodeDesc returns the node description of device name (the SM and the
// diagnostics show it): node_desc read as the other string files are, cut
// at a NUL and before the last newline. The kernel writes node_desc for
// every device, so a missing file is an error too.
func (f *FS) NodeDesc(name string) (string, error) {
	dir := classInfiniBand + "/" + name
	if !validName(name) {
		return "", &SysError{Op: "open", Path: f.Path(dir), Err: fs.ErrNotExist}
	}
	return f.readString(dir+"/node_desc", 0)
}

// ports reads every port directory under dir. Entry names must be port
// numbers; libibumad fails on any other name too.
func (f *FS) ports(dir string) ([]*Port, error) {
	entries, err := f.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ports []*Port
	for _, e := range entries {
		n, ok := portNumber(e.Name())
		if !ok {
			return nil, f.parseError(dir+"/"+e.Name(), &ParseError{Kind: "port directory", Input: e.Name(), Reason: "want a port number"})
		}
		p, err := f.port(dir, n)
		if err != nil {
			return nil, err
		}
		ports = append(ports, p)
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i].Number < ports[j].Number })
	return ports, nil
}

// portNumber parses a port directory name: decimal, no leading zero, at
// most 255 (IBA port numbers are 8 bits).
func portNumber(s string) (int, bool) {
	if s == "" || len(s) > 3 || (s[0] == '0' && s != "0") || !isDecimal(s) {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n <= 255
}

// readGUID reads a GUID file as libibumad's sys_read_guid does.
func (f *FS) readGUID(name string) (GUID, error) {
	s, err := f.readString(name, umadNumBuf)
	if err != nil {
		return 0, err
	}
	g, err := ParseSysfsGUID(s)
	if err != nil {
		return 0, f.parseError(name, err)
	}
	return g, nil
}

// readGID reads a GID file as libibumad's sys_read_gid does.
func (f *FS) readGID(name string) (GID, error) {
	s, err := f.readString(name, umadGIDBuf)
	if err != nil {
		return GID{}, err
	}
	g, err := ParseSysfsGID(s)
	if err != nil {
		return GID{}, f.parseError(name, err)
	}
	return g, nil
}
