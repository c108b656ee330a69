package gcpace

import (
	"bufio"
	"bytes"
	"math"
	"strconv"
	"strings"
)

// MemoryMax is the most memory the process may use, from the first
// source that has one:
//
//  1. limit, the Go runtime's memory limit (GOMEMLIMIT or
//     debug.SetMemoryLimit), when set (below math.MaxInt64);
//  2. memory.max of the process's cgroup (v2), when readable and not "max";
//  3. MemTotal of /proc/meminfo: the machine's physical memory.
//
// It reports false when none is known (not Linux, no /proc). readFile
// reads the /proc and cgroup files (os.ReadFile; tests give their own).
// The metrics package reports it as jvm_memory_bytes_max{area="heap"}.
func MemoryMax(limit int64, readFile func(string) ([]byte, error)) (uint64, bool) {
	if limit > 0 && limit < math.MaxInt64 {
		return uint64(limit), true
	}
	if v, ok := cgroupMemoryMax(readFile); ok {
		return v, true
	}
	b, err := readFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// MemTotal:       16314396 kB
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			return kb * 1024, err == nil && kb > 0
		}
	}
	return 0, false
}

// cgroupMemoryMax reads the memory limit of the process's cgroup v2: the
// smallest memory.max of its cgroup (the "0::<path>" line of
// /proc/self/cgroup) and of the cgroups above it, up to the root the
// process sees (a container's own, in a cgroup namespace). "max" means no
// limit at that level.
func cgroupMemoryMax(readFile func(string) ([]byte, error)) (uint64, bool) {
	b, err := readFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	dir, found := "", false
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			dir, found = strings.TrimRight(strings.TrimSpace(p), "/"), true
		}
	}
	if !found {
		return 0, false // cgroup v1 only
	}
	var limit uint64
	for {
		if b, err := readFile("/sys/fs/cgroup" + dir + "/memory.max"); err == nil {
			if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 && (limit == 0 || v < limit) {
				limit = v
			}
		}
		if dir == "" {
			return limit, limit > 0
		}
		dir = dir[:max(strings.LastIndex(dir, "/"), 0)]
	}
}
