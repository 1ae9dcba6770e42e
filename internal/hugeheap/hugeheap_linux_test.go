package hugeheap

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestAdvisedOnly(t *testing.T) {
	for _, tc := range []struct {
		setting string
		want    bool
	}{
		{"always [madvise] never\n", true},
		{"[always] madvise never\n", false},
		{"always madvise [never]\n", false},
		{"", false},
	} {
		path := filepath.Join(t.TempDir(), "enabled")
		if err := os.WriteFile(path, []byte(tc.setting), 0o644); err != nil {
			t.Fatal(err)
		}
		old := thpSetting
		thpSetting = path
		if got := advisedOnly(); got != tc.want {
			t.Errorf("advisedOnly with %q = %v, want %v", tc.setting, got, tc.want)
		}
		thpSetting = old
	}
	old := thpSetting
	thpSetting = filepath.Join(t.TempDir(), "missing")
	defer func() { thpSetting = old }()
	if advisedOnly() {
		t.Error("advisedOnly without the setting file = true, want false")
	}
	if Advise(64 << 20) {
		t.Error("Advise without the setting file = true, want false")
	}
}

// fakeFile points *path at a file holding content for the test's length.
func fakeFile(t *testing.T, path *string, content string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	old := *path
	*path = f
	t.Cleanup(func() { *path = old })
}

func TestStrictOvercommitRefuses(t *testing.T) {
	fakeFile(t, &thpSetting, "always [madvise] never\n")
	fakeFile(t, &overcommit, "2\n")
	if !strictOvercommit() {
		t.Error("strictOvercommit with 2 = false")
	}
	if Advise(64 << 20) {
		t.Error("Advise under strict overcommit = true, want false")
	}
	fakeFile(t, &overcommit, "0\n")
	if strictOvercommit() {
		t.Error("strictOvercommit with 0 = true")
	}
}

func TestMemTotal(t *testing.T) {
	fakeFile(t, &meminfo, "MemTotal:       24576000 kB\nMemFree:        23000000 kB\n")
	if got, want := memTotal(), 24576000<<10; got != want {
		t.Errorf("memTotal = %d, want %d", got, want)
	}
	fakeFile(t, &meminfo, "MemFree: 1 kB\n")
	if got := memTotal(); got != 0 {
		t.Errorf("memTotal without MemTotal = %d, want 0", got)
	}
	// A machine of 8 MiB: a quarter is one huge page, too little.
	fakeFile(t, &thpSetting, "always [madvise] never\n")
	fakeFile(t, &overcommit, "0\n")
	fakeFile(t, &meminfo, "MemTotal: 8192 kB\n")
	if Advise(64 << 20) {
		t.Error("Advise on an 8 MiB machine = true, want false")
	}
}

// TestAdviseNextAllocation checks that the heap the program allocates
// next lies in memory the kernel marks as advised for huge pages ("hg" in
// the mapping's VmFlags).
func TestAdviseNextAllocation(t *testing.T) {
	if !advisedOnly() {
		t.Skipf("%s does not say [madvise]", thpSetting)
	}
	if Advise(hugePage) {
		t.Error("Advise of one huge page = true, want false (nothing aligned is sure to fit)")
	}
	if !Advise(32 << 20) {
		t.Fatal("Advise(32 MiB) = false")
	}
	// Again, as the exporter's rediscovery does: advised already, so
	// no 32 MiB object and no GC.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if !Advise(32 << 20) {
		t.Error("a second Advise(32 MiB) = false")
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d >= 1<<20 || after.NumGC != before.NumGC {
		t.Errorf("a second Advise(32 MiB) allocated %d bytes and ran %d GCs; want neither", d, after.NumGC-before.NumGC)
	}
	// The object's first huge page inside it: the part before lies in
	// the freed object's first, partial, huge page, which is not
	// advised.
	b := make([]byte, 8<<20)
	addr := (uintptr(unsafe.Pointer(&b[0])) + hugePage - 1) &^ (hugePage - 1)
	flags, err := vmFlags(addr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("mapping at %#x, inside the next 8 MiB object, has VmFlags %q, want hg among them", addr, flags)
	}
}

// vmFlags returns the VmFlags line of the mapping holding addr.
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	in := false
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if lo, hi, ok := strings.Cut(strings.Fields(line + " x")[0], "-"); ok {
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil {
				in = uint64(addr) >= l && uint64(addr) < h
				continue
			}
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	return "", os.ErrNotExist
}
