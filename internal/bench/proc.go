package bench

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// selfCPU returns the CPU time (user + system) this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ProcStats is what /proc says about a process at one instant.
type ProcStats struct {
	CPU      time.Duration // user + system
	RSS      int64         // resident set, bytes (VmRSS)
	PeakRSS  int64         // high-water mark of the resident set, bytes (VmHWM)
	Readable bool          // false when the process could not be read
}

// readProcs reads the processes pids (the members of an ensemble, or a
// single server) one after the other and combines them (combineProcs).
func readProcs(pids []int) ProcStats { return combineProcs(readEach(pids)) }

// readEach reads the processes pids, one reading each, in order.
func readEach(pids []int) []ProcStats {
	ps := make([]ProcStats, len(pids))
	for i, pid := range pids {
		ps[i] = readProc(pid)
	}
	return ps
}

// combineProcs combines readings of several processes into what the
// bench reports for the server as a whole: CPU is the sum (the
// ensemble's CPU time), RSS and PeakRSS are the largest member's (the
// memory targets hold for every member, so the worst one counts). The
// result is Readable only when every reading is, and there is at least
// one.
func combineProcs(ps []ProcStats) ProcStats {
	if len(ps) == 0 {
		return ProcStats{}
	}
	all := ProcStats{Readable: true}
	for _, p := range ps {
		if !p.Readable {
			return ProcStats{}
		}
		all.CPU += p.CPU
		all.RSS = max(all.RSS, p.RSS)
		all.PeakRSS = max(all.PeakRSS, p.PeakRSS)
	}
	return all
}

// maxRSSGrowth returns how much the resident set of the member that grew
// most grew from before to after (readings of the same processes, in the
// same order); ok is false unless every reading is readable.
func maxRSSGrowth(before, after []ProcStats) (growth int64, ok bool) {
	if len(before) == 0 || len(before) != len(after) {
		return 0, false
	}
	growth = math.MinInt64
	for i := range before {
		if !before[i].Readable || !after[i].Readable {
			return 0, false
		}
		growth = max(growth, after[i].RSS-before[i].RSS)
	}
	return growth, true
}

// readProc reads the CPU time and memory of process pid.
func readProc(pid int) ProcStats {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcStats{}
	}
	// The command name (field 2) may hold spaces: fields are counted
	// after its closing parenthesis. utime and stime are fields 14, 15.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return ProcStats{}
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return ProcStats{}
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	ps := ProcStats{CPU: time.Duration(ut+st) * time.Second / clockTicks, Readable: true}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ps
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch k {
		case "VmRSS":
			dst = &ps.RSS
		case "VmHWM":
			dst = &ps.PeakRSS
		default:
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		*dst = kb * 1024
	}
	return ps
}
