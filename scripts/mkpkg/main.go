// Command mkpkg builds ibtool's .deb and .rpm from the one description
// packaging/nfpm.yaml with goreleaser's nfpm, as a library:
//
//	go run ./scripts/mkpkg -format deb -out bin/ibtool_1.0_amd64.deb
//
// The description's ${IBTOOL_*} variables come from the environment
// (scripts/mkdeb.sh stages the tree and sets them). Dependencies left
// empty by a variable (IBTOOL_LIBC_DEP of a static binary) are dropped.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
	_ "github.com/goreleaser/nfpm/v2/rpm" // registers the rpm packager
)

func main() {
	config := flag.String("config", "packaging/nfpm.yaml", "nfpm description")
	format := flag.String("format", "deb", "package format: deb or rpm")
	out := flag.String("out", "", "package file to write")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: mkpkg [-config FILE] -format deb|rpm -out FILE")
		os.Exit(2)
	}
	if err := build(*config, *format, *out, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "mkpkg:", err)
		os.Exit(1)
	}
}

// build writes the package of format described by config to out, with
// getenv giving the description's variables.
func build(config, format, out string, getenv func(string) string) error {
	info, err := packageInfo(config, format, getenv)
	if err != nil {
		return err
	}
	pkgr, err := nfpm.Get(format)
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := writePackage(pkgr, info, f); err != nil {
		f.Close()
		os.Remove(out)
		return fmt.Errorf("%s: %w", out, err)
	}
	return f.Close()
}

// packageInfo reads the description for format.
func packageInfo(config, format string, getenv func(string) string) (*nfpm.Info, error) {
	cfg, err := nfpm.ParseFileWithEnvMapping(config, getenv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config, err)
	}
	info, err := cfg.Get(format)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config, err)
	}
	info.Depends = slices.DeleteFunc(info.Depends, func(d string) bool { return d == "" })
	info = nfpm.WithDefaults(info)
	if err := nfpm.PrepareForPackager(info, format); err != nil {
		return nil, fmt.Errorf("%s: %w", config, err)
	}
	return info, nil
}

func writePackage(p nfpm.Packager, info *nfpm.Info, w io.Writer) error {
	return p.Package(info, w)
}
