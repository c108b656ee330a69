package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/wardenzk/warden/server"
)

// buildVersion is what the Go toolchain recorded about warden's build.
type buildVersion struct {
	// Version is the module version ("v1.2.3" for `go install ...@v1.2.3`),
	// or "devel" for a build from a checkout.
	Version string
	// Revision is the VCS commit, "" when not built from a checkout.
	Revision string
	// Modified reports uncommitted changes in the checkout.
	Modified bool
	// Time is the commit's time (RFC 3339), "" when unknown.
	Time string
	// Go is the toolchain's version; OS and Arch the target.
	Go, OS, Arch string
}

// readBuildVersion reads the running binary's build information.
func readBuildVersion() buildVersion {
	bi, _ := debug.ReadBuildInfo()
	return newBuildVersion(bi)
}

// newBuildVersion extracts the version from bi, which may be nil.
func newBuildVersion(bi *debug.BuildInfo) buildVersion {
	v := buildVersion{Version: "devel", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi == nil {
		return v
	}
	if mv := bi.Main.Version; mv != "" && mv != "(devel)" {
		v.Version = mv
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "vcs.time":
			v.Time = s.Value
		}
	}
	return v
}

// short is the version on one word, for scripts: the module version, or
// devel+<12 hex digits of the revision>[-dirty].
func (v buildVersion) short() string {
	s := v.Version
	if s == "devel" && v.Revision != "" {
		s += "+" + v.Revision[:min(12, len(v.Revision))]
		if v.Modified {
			s += "-dirty"
		}
	}
	return s
}

// write prints the full version report, one field a line.
func (v buildVersion) write(w io.Writer) {
	fmt.Fprintf(w, "warden     %s\n", v.Version)
	if v.Revision != "" {
		dirty := ""
		if v.Modified {
			dirty = " (modified)"
		}
		fmt.Fprintf(w, "revision   %s%s\n", v.Revision, dirty)
	}
	if v.Time != "" {
		fmt.Fprintf(w, "committed  %s\n", v.Time)
	}
	fmt.Fprintf(w, "go         %s %s/%s\n", v.Go, v.OS, v.Arch)
	fmt.Fprintf(w, "zookeeper  %s (the version clients are told: %s)\n", server.ZooKeeperVersion, server.VersionLine())
}

// versionFlags is `warden version [-short]`.
func versionFlags(fs *flag.FlagSet) func(args []string) error {
	short := fs.Bool("short", false, "print only Warden's version on one word (v1.2.3, or devel+<revision>[-dirty])")
	return func(args []string) error {
		if len(args) > 0 {
			return badUsage("unexpected arguments %q", args)
		}
		v := readBuildVersion()
		if *short {
			fmt.Fprintln(os.Stdout, v.short())
			return nil
		}
		v.write(os.Stdout)
		return nil
	}
}
