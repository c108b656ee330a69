package quota

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// Path is the node under which quotas live (Quotas.quotaZookeeper).
const Path = "/zookeeper/quota"

// Names of the two nodes of a quota, children of Path+<p>.
const (
	LimitsNode = "zookeeper_limits"
	StatsNode  = "zookeeper_stats"
)

// Keys of the quota text.
const (
	KeyCount          = "count"          // soft node-count limit, or the node count
	KeyBytes          = "bytes"          // soft byte limit, or the data size
	KeyCountHardLimit = "countHardLimit" // hard node-count limit
	KeyByteHardLimit  = "byteHardLimit"  // hard byte limit
)

// LimitsPath is the limits node of a quota on p: Path+p+"/zookeeper_limits"
// (Quotas.limitPath; p is used as given, not validated).
func LimitsPath(p string) string { return Path + p + "/" + LimitsNode }

// StatsPath is the stats node of a quota on p (Quotas.statPath).
func StatsPath(p string) string { return Path + p + "/" + StatsNode }

// ErrSyntax is the class of Parse's errors: text ZooKeeper's StatsTrack
// cannot read (it throws, failing the request or the command).
var ErrSyntax = errors.New("quota: text is not key=value pairs separated by ',' or ';'")

// Stats is a parsed quota text (ZooKeeper's StatsTrack): limits or usage
// by key. A missing key reads as -1.
type Stats map[string]int64

// Parse reads quota text as StatsTrack does: pairs separated by runs of
// ',' and ';' (trailing empty parts dropped), each split on '='; a
// present but empty value reads -1 and a later key wins. It fails, with
// an error wrapping ErrSyntax, where ZooKeeper throws: nil data, a pair
// without '=' (or a leading separator), a value that is not a decimal
// int64.
func Parse(data []byte) (Stats, error) {
	if data == nil {
		return nil, fmt.Errorf("%w: the node holds no data (null)", ErrSyntax)
	}
	s := Stats{}
	pairs := splitJava(string(data), func(c byte) bool { return c == ',' || c == ';' }, true)
	for _, pair := range pairs {
		kv := splitJava(pair, func(c byte) bool { return c == '=' }, false)
		if len(kv) < 2 {
			return nil, fmt.Errorf("%w: %q has no value", ErrSyntax, pair)
		}
		v := int64(-1)
		if kv[1] != "" {
			n, err := strconv.ParseInt(kv[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: %q is not a number", ErrSyntax, kv[1])
			}
			v = n
		}
		s[kv[0]] = v
	}
	return s, nil
}

// splitJava splits s as Java's String.split does: the parts between
// separators, a leading empty part kept, trailing empty parts dropped.
// With runs set, a run of separators counts as one (a "[x]+" pattern).
func splitJava(s string, isSep func(byte) bool, runs bool) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if !isSep(s[i]) {
			continue
		}
		parts = append(parts, s[start:i])
		for runs && i+1 < len(s) && isSep(s[i+1]) {
			i++
		}
		start = i + 1
	}
	parts = append(parts, s[start:])
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// Get returns the value of key, -1 when it is missing.
func (s Stats) Get(key string) int64 {
	if v, ok := s[key]; ok {
		return v
	}
	return -1
}

// Bytes renders s as StatsTrack.toString: "count=<n>,bytes=<n>" and, when
// other keys exist, "=" followed by ";key=value" for each in sorted order.
func (s Stats) Bytes() []byte {
	b := []byte(KeyCount + "=")
	b = strconv.AppendInt(b, s.Get(KeyCount), 10)
	b = append(b, ","+KeyBytes+"="...)
	b = strconv.AppendInt(b, s.Get(KeyBytes), 10)
	var extra []string
	for k := range s {
		if k != KeyCount && k != KeyBytes {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return b
	}
	slices.Sort(extra)
	b = append(b, '=')
	for _, k := range extra {
		b = append(b, ';')
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendInt(b, s[k], 10)
	}
	return b
}

// String is Bytes as a string.
func (s Stats) String() string { return string(s.Bytes()) }
