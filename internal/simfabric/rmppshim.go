package simfabric

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// The RMPP layer: Debian's umad2sim shim copies at most 256 bytes of a MAD
// and does none of the kernel's RMPP, so opensm's multi-segment SA answers
// (SubnAdmGetTable) reached the C tools cut to their first segment. The
// bench preloads a small library of its own ahead of the shim that
// segments, acknowledges and reassembles as the kernel's MAD layer does;
// rmppshim/rmppshim.c says how. It is compiled from the sources embedded
// here on first use, into a cache directory named after their hash.

//go:embed rmppshim/rmpp.c rmppshim/rmpp.h rmppshim/rmppshim.c
var rmppShimSrc embed.FS

// rmppShimSources are the files compiled into the library, the rest (the
// header) only read.
var rmppShimSources = []string{"rmppshim.c", "rmpp.c"}

// rmppShimName is the library's file name in its cache directory.
const rmppShimName = "librmppshim.so"

// rmppShimCFlags are the compiler's flags; they are part of the cache key.
var rmppShimCFlags = []string{"-shared", "-fPIC", "-O2", "-Wall", "-Wextra"}

// rmppShimLibs are linked after the sources.
var rmppShimLibs = []string{"-ldl", "-lpthread"}

// rmppShimBuild memoizes the build for the process: its result, error
// included (a failed build would fail again).
var rmppShimBuild struct {
	sync.Mutex
	done bool
	path string
	err  error
}

// rmppShimCacheDirs are where builds go, in order of preference: the
// user's cache directory, then the temporary directory (no home, or a home
// not writable).
func rmppShimCacheDirs() []string {
	var dirs []string
	if d, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(d, "ibtool"))
	}
	return append(dirs, filepath.Join(os.TempDir(), fmt.Sprintf("ibtool-cache-%d", os.Getuid())))
}

// Preload returns the LD_PRELOAD value that runs opensm and the
// infiniband-diags tools on the bench: the RMPP layer, then Debian's
// umad2sim shim. The first call in a process compiles the layer (with gcc)
// unless a build of the same sources is in the cache.
func Preload() (string, error) {
	lib, err := RMPPShim()
	if err != nil {
		return "", err
	}
	return lib + " " + shimPath, nil
}

// RMPPShim returns the path of the compiled RMPP layer, building it on
// first use; see Preload.
func RMPPShim() (string, error) {
	b := &rmppShimBuild
	b.Lock()
	defer b.Unlock()
	if !b.done {
		for i, dir := range rmppShimCacheDirs() {
			path, err := buildRMPPShim(dir)
			if i == 0 || err == nil {
				b.path, b.err = path, err
			}
			if err == nil || errors.Is(err, ErrNotInstalled) {
				break // a compiler problem is the same in any directory
			}
		}
		b.done = true
	}
	return b.path, b.err
}

// rmppShimKey hashes the sources and the compiler's flags.
func rmppShimKey() (string, error) {
	h := sha256.New()
	names, err := fs.Glob(rmppShimSrc, "rmppshim/*")
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	for _, name := range names {
		data, err := rmppShimSrc.ReadFile(name)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", name, len(data))
		h.Write(data)
	}
	fmt.Fprintf(h, "%q %q\n", rmppShimCFlags, rmppShimLibs)
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// buildRMPPShim compiles the layer into cacheDir/rmppshim-<key>/ unless it
// is there. Concurrent builders (test binaries of several packages) each
// compile into a temporary name and rename it into place, which is atomic:
// whoever renames last wins with an identical file.
func buildRMPPShim(cacheDir string) (string, error) {
	key, err := rmppShimKey()
	if err != nil {
		return "", fmt.Errorf("simfabric: RMPP layer sources: %w", err)
	}
	dir := filepath.Join(cacheDir, "rmppshim-"+key)
	lib := filepath.Join(dir, rmppShimName)
	if strings.ContainsAny(lib, " :") {
		// LD_PRELOAD splits on both.
		return "", fmt.Errorf("simfabric: RMPP layer path %q: no spaces or colons in an LD_PRELOAD entry", lib)
	}
	if st, err := os.Stat(lib); err == nil && st.Mode().IsRegular() {
		return lib, nil
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		return "", fmt.Errorf("%w: gcc missing, needed to build the RMPP layer (apt-get install gcc libc6-dev, or make deps)", ErrNotInstalled)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("simfabric: RMPP layer cache: %w", err)
	}
	src, err := os.MkdirTemp(dir, "src-")
	if err != nil {
		return "", fmt.Errorf("simfabric: RMPP layer cache: %w", err)
	}
	defer os.RemoveAll(src)
	names, err := fs.Glob(rmppShimSrc, "rmppshim/*")
	if err != nil {
		return "", err
	}
	for _, name := range names {
		data, err := rmppShimSrc.ReadFile(name)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(src, filepath.Base(name)), data, 0o644); err != nil {
			return "", fmt.Errorf("simfabric: RMPP layer sources: %w", err)
		}
	}
	tmp := filepath.Join(src, rmppShimName)
	args := append(append([]string{}, rmppShimCFlags...), "-o", tmp)
	args = append(append(args, rmppShimSources...), rmppShimLibs...)
	cmd := exec.Command(gcc, args...)
	cmd.Dir = src
	cmd.Env = childEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: building the RMPP layer: gcc %s: %v\n%s(are libc6-dev's headers installed? apt-get install gcc libc6-dev)",
			ErrNotInstalled, strings.Join(args, " "), err, out.String())
	}
	if err := os.Rename(tmp, lib); err != nil {
		return "", fmt.Errorf("simfabric: RMPP layer cache: %w", err)
	}
	return lib, nil
}
