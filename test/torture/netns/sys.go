package netns

import (
	"bufio"
	"errors"
	"fmt"
	"golang.org/x/sys/unix"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// netnsDir is where ip netns keeps its named namespaces.
const netnsDir = "/run/netns"

// listNamespaces returns the names of ip's named namespaces.
func listNamespaces() ([]string, error) {
	out, err := ip("netns", "list")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0]) // "name" or "name (id: 3)"
		}
	}
	return names, nil
}

func namespaceExists(ns string) bool {
	_, err := os.Stat(filepath.Join(netnsDir, ns))
	return err == nil
}

// killNamespace sends SIGKILL to every process in namespace ns, so that
// deleting the namespace really frees it.
func killNamespace(ns string) error {
	if !namespaceExists(ns) {
		return nil
	}
	out, err := ip("netns", "pids", ns)
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range strings.Fields(out) {
		pid, err := strconv.Atoi(f)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := unix.Kill(pid, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("netns: kill %d in %s: %w", pid, ns, err))
		}
	}
	return errors.Join(errs...)
}

// deleteNamespace deletes namespace ns if it exists.
func deleteNamespace(ns string) error {
	if !namespaceExists(ns) {
		return nil
	}
	return ipIgnoring([]string{"No such file"}, "netns", "delete", ns)
}

// listHostLinks returns the names of the interfaces in this process's
// (the host's) network namespace.
func listHostLinks() ([]string, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("netns: list interfaces: %w", err)
	}
	names := make([]string, len(ifs))
	for i, ifc := range ifs {
		names[i] = ifc.Name
	}
	return names, nil
}

// deleteHostLink deletes interface name in the host namespace if it
// exists. A veth end whose peer's namespace was just deleted may still
// be listed while the kernel tears it down; deleting it then answers
// "No such device", which also means it is gone.
func deleteHostLink(name string) error {
	return ipIgnoring([]string{"Cannot find device", "does not exist", "No such device"}, "link", "delete", name)
}

// mountEntry is one tmpfs mount of this process's mount namespace.
type mountEntry struct{ point, source string }

// listTmpfsMounts parses /proc/self/mountinfo for tmpfs mounts.
func listTmpfsMounts() ([]mountEntry, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("netns: %w", err)
	}
	defer f.Close()
	var out []mountEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		// id parent maj:min root point options [optional...] - fstype source superoptions
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, fl := range fields {
			if fl == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+2 >= len(fields) || fields[sep+1] != "tmpfs" {
			continue
		}
		out = append(out, mountEntry{point: unescapeMount(fields[4]), source: unescapeMount(fields[sep+2])})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("netns: read mountinfo: %w", err)
	}
	return out, nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, ...).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unmount unmounts the file system on point, lazily if it is busy (a
// process still has files open there). A point that is not mounted, or
// no longer exists, is not an error.
func unmount(point string) error {
	err := unix.Unmount(point, 0)
	if errors.Is(err, unix.EBUSY) {
		err = unix.Unmount(point, unix.MNT_DETACH)
	}
	if err == nil || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
		return nil
	}
	return fmt.Errorf("netns: unmount %s: %w", point, err)
}
