package gcpace

import (
	"io/fs"
	"math"
	"testing"
)

func TestMemoryMax(t *testing.T) {
	const meminfo = "MemTotal:       16000000 kB\nMemFree:         100 kB\n"
	tests := []struct {
		name  string
		limit int64
		files map[string]string
		want  uint64
		ok    bool
	}{
		{"go memory limit", 1 << 30, map[string]string{"/proc/meminfo": meminfo}, 1 << 30, true},
		{"own cgroup", math.MaxInt64, map[string]string{
			"/proc/self/cgroup":                    "0::/svc/warden\n",
			"/sys/fs/cgroup/svc/warden/memory.max": "536870912\n",
			"/sys/fs/cgroup/svc/memory.max":        "max\n",
			"/proc/meminfo":                        meminfo,
		}, 536870912, true},
		{"a parent cgroup's is lower", math.MaxInt64, map[string]string{
			"/proc/self/cgroup":                    "0::/svc/warden\n",
			"/sys/fs/cgroup/svc/warden/memory.max": "max\n",
			"/sys/fs/cgroup/svc/memory.max":        "268435456\n",
			"/proc/meminfo":                        meminfo,
		}, 268435456, true},
		{"container root cgroup", math.MaxInt64, map[string]string{
			"/proc/self/cgroup":         "0::/\n",
			"/sys/fs/cgroup/memory.max": "1073741824\n",
			"/proc/meminfo":             meminfo,
		}, 1073741824, true},
		{"cgroup without a limit", math.MaxInt64, map[string]string{
			"/proc/self/cgroup":         "0::/\n",
			"/sys/fs/cgroup/memory.max": "max\n",
			"/proc/meminfo":             meminfo,
		}, 16000000 * 1024, true},
		{"cgroup v1 only", math.MaxInt64, map[string]string{
			"/proc/self/cgroup": "4:memory:/x\n",
			"/proc/meminfo":     meminfo,
		}, 16000000 * 1024, true},
		{"nothing known", math.MaxInt64, nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := func(p string) ([]byte, error) {
				if s, ok := tt.files[p]; ok {
					return []byte(s), nil
				}
				return nil, fs.ErrNotExist
			}
			got, ok := MemoryMax(tt.limit, read)
			if got != tt.want || ok != tt.ok {
				t.Errorf("MemoryMax = %d, %v; want %d, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
