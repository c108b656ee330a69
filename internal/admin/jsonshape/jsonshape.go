// Package jsonshape compares the shape of two decoded JSON values — their
// keys and value types, recursively — the way the AdminServer's tests
// compare Warden's replies with ZooKeeper's: values differ between two
// servers, shapes must not.
//
// Values are those encoding/json decodes into any with UseNumber: nil,
// bool, json.Number, string, []any and map[string]any.
package jsonshape

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Kind names a decoded JSON value's type: null, boolean, number, string,
// array or object.
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// Options tune Diff.
type Options struct {
	// DataMaps are the paths of objects whose keys are data (session ids,
	// paths, member ids): their entry counts and the shape of their
	// first entry (in key order) are compared, not their keys.
	DataMaps map[string]bool
	// NullMatches, when set, says whether a null at path matches a value
	// of any kind (such as the "error" field of a good reply).
	NullMatches func(path string) bool
}

// Diff returns the differences in keys and value types between
// ZooKeeper's value zk and Warden's wd, one line each ("path: what"),
// paths starting at root: objects add ".key", arrays and data maps "[]".
// Arrays are compared by emptiness and by the shape of their first
// element.
func Diff(root string, zk, wd any, opts Options) []string {
	var out []string
	opts.diff(root, zk, wd, &out)
	return out
}

func (o Options) diff(path string, zk, wd any, out *[]string) {
	if Kind(zk) != Kind(wd) {
		if (zk == nil || wd == nil) && o.NullMatches != nil && o.NullMatches(path) {
			return
		}
		*out = append(*out, fmt.Sprintf("%s: ZooKeeper %s, Warden %s", path, Kind(zk), Kind(wd)))
		return
	}
	switch z := zk.(type) {
	case map[string]any:
		w := wd.(map[string]any)
		if o.DataMaps[path] {
			if len(z) != len(w) {
				*out = append(*out, fmt.Sprintf("%s: ZooKeeper %d entries, Warden %d", path, len(z), len(w)))
			}
			if len(z) > 0 && len(w) > 0 {
				o.diff(path+"[]", z[sortedKeys(z)[0]], w[sortedKeys(w)[0]], out)
			}
			return
		}
		keys := sortedKeys(z)
		for k := range w {
			if _, ok := z[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			zv, inZ := z[k]
			wv, inW := w[k]
			switch {
			case !inW:
				*out = append(*out, fmt.Sprintf("%s.%s: only in ZooKeeper", path, k))
			case !inZ:
				*out = append(*out, fmt.Sprintf("%s.%s: only in Warden", path, k))
			default:
				o.diff(path+"."+k, zv, wv, out)
			}
		}
	case []any:
		w := wd.([]any)
		if (len(z) == 0) != (len(w) == 0) {
			*out = append(*out, fmt.Sprintf("%s: ZooKeeper %d elements, Warden %d", path, len(z), len(w)))
			return
		}
		if len(z) > 0 {
			o.diff(path+"[]", z[0], w[0], out)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
