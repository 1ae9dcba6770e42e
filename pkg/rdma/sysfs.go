package rdma

import (
	"errors"
	"io"
	"io/fs"
	"strings"
)

// Directories under the sysfs mount point that the readers use.
const (
	classInfiniBand = "class/infiniband"
	classMAD        = "class/infiniband_mad"
	classVerbs      = "class/infiniband_verbs"
)

// maxAttrSize bounds how much of one file is read. A sysfs attribute is at
// most one page; anything longer is not sysfs and is cut, not trusted.
const maxAttrSize = 4096

// FS reads RDMA devices from a tree laid out like /sys. Real use passes
// os.DirFS("/sys"); tests pass a fixture tree under testdata/ or an
// fstest.MapFS. os.DirFS follows symbolic links, so the real layout
// (class/infiniband/<dev> linking into /sys/devices/...) reads as plain
// directories.
type FS struct {
	fsys fs.FS
	root string
}

// NewFS returns an FS over fsys. root is the path fsys stands for, such as
// "/sys"; it is used only to name files in errors and messages.
func NewFS(fsys fs.FS, root string) *FS {
	return &FS{fsys: fsys, root: root}
}

// Root returns the path the tree stands for, as given to NewFS.
func (f *FS) Root() string { return f.root }

// Tree returns the file tree f reads, as given to NewFS.
func (f *FS) Tree() fs.FS { return f.fsys }

// Path returns the full path of name (relative to the root, slash-separated)
// as operators know it, e.g. "/sys/class/infiniband/mlx5_0". It joins the
// two literally, without cleaning, so messages show what was looked up.
func (f *FS) Path(name string) string {
	if f.root == "" {
		return name
	}
	if name == "" || name == "." {
		return f.root
	}
	return strings.TrimSuffix(f.root, "/") + "/" + name
}

// ReadFile returns the contents of name, at most one page (4096 bytes) of
// it. Errors are *SysError values naming the full path.
func (f *FS) ReadFile(name string) ([]byte, error) {
	file, err := f.fsys.Open(name)
	if err != nil {
		return nil, f.sysError("open", name, err)
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, maxAttrSize))
	if err != nil {
		return nil, f.sysError("read", name, err)
	}
	return b, nil
}

// ReadDir returns the entries of directory name sorted by file name, which
// is byte order: the order of strcmp, of alphasort in the C locale and of
// the shell's glob in the C and C.UTF-8 locales.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(f.fsys, name)
	if err != nil {
		return nil, f.sysError("readdir", name, err)
	}
	return entries, nil
}

// Stat returns the file information of name, following symbolic links.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	fi, err := fs.Stat(f.fsys, name)
	if err != nil {
		return nil, f.sysError("stat", name, err)
	}
	return fi, nil
}

// IsDir reports whether name exists and is a directory (after following
// symbolic links), like test -d.
func (f *FS) IsDir(name string) bool {
	fi, err := fs.Stat(f.fsys, name)
	return err == nil && fi.IsDir()
}

// sysError wraps err from an fs call on name into a *SysError with the full
// path. A *fs.PathError is unwrapped so the errno stays reachable for
// SysError.Is.
func (f *FS) sysError(op, name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &SysError{Op: op, Path: f.Path(name), Err: err}
}

// parseError reports a file whose contents do not parse.
func (f *FS) parseError(name string, err error) error {
	return &SysError{Op: "parse", Path: f.Path(name), Err: err}
}

// validName reports whether s can name one directory entry.
func validName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsRune(s, '/') && fs.ValidPath(s)
}

// readString reads name as libibumad's sys_read_string does into a buffer of
// bufSize bytes (bufSize <= 0: no limit beyond one page).
func (f *FS) readString(name string, bufSize int) (string, error) {
	b, err := f.ReadFile(name)
	if err != nil {
		return "", err
	}
	return CString(b, bufSize), nil
}

// readOptional reads an optional string file, one some drivers or kernels
// do not write. Either way it yields def, as libibumad does; but only a file
// that is not there is simply absent. The error of one that is there and
// does not read (EIO, EISDIR, a value the driver cannot give) is added to
// unread, when unread is not nil, so that a tool can say what it could not
// show instead of showing def as if it were the value.
func (f *FS) readOptional(name, def string, unread *[]error) string {
	s, err := f.readString(name, 0)
	switch {
	case err == nil:
		return s
	case unread != nil && !Absent(err):
		*unread = append(*unread, err)
	}
	return def
}

// Absent reports whether err says that a file is not there at all: opening
// it failed with ENOENT. A file that is there but does not read (EIO,
// EISDIR, EINVAL from a driver), a path through something that is not a
// directory (ENOTDIR) and a device that went away (ENODEV) are not absent.
func Absent(err error) bool {
	var se *SysError
	return errors.As(err, &se) && se.Op == "open" && errors.Is(se.Err, fs.ErrNotExist)
}

// readUint reads a number file as libibumad's sys_read_uint does.
func (f *FS) readUint(name string) (uint64, error) {
	s, err := f.readString(name, umadNumBuf)
	if err != nil {
		return 0, err
	}
	v, err := ParseSysfsUint(s)
	if err != nil {
		return 0, f.parseError(name, err)
	}
	return v, nil
}
