package tree

import (
	"iter"
	"maps"
	"slices"
	"strings"
)

// children is a node's children by name: a slice sorted by name while
// there are at most maxListedKids of them, a map beyond. Go's maps are
// between half and seven-eighths full, so a slice of name and pointer
// takes about half the memory of a map for the same children (a thousand
// children: 24 KiB rather than 51 KiB); a lookup is a binary search, and
// an insert or delete moves at most maxListedKids entries. Children
// created in name order (sequential nodes, a snapshot being loaded) are
// appended.
type children struct {
	list []child          // sorted by name; nil once m is in use
	m    map[string]*node // nil while list is in use
}

// child is one entry of a children list.
type child struct {
	name string
	n    *node
}

// maxListedKids is the most children kept in a sorted slice.
const maxListedKids = 1024

func cmpChild(c child, name string) int { return strings.Compare(c.name, name) }

// len returns the number of children; a nil set has none.
func (c *children) len() int {
	if c == nil {
		return 0
	}
	if c.m != nil {
		return len(c.m)
	}
	return len(c.list)
}

// get returns the child called name, or nil.
func (c *children) get(name string) *node {
	if c == nil {
		return nil
	}
	if c.m != nil {
		return c.m[name]
	}
	if i, ok := slices.BinarySearchFunc(c.list, name, cmpChild); ok {
		return c.list[i].n
	}
	return nil
}

// put sets the child called name to n and reports whether it was new.
// The set may keep name as the key (the caller passes a string of its own).
func (c *children) put(name string, n *node) (added bool) {
	if c.m != nil {
		_, had := c.m[name]
		c.m[name] = n
		return !had
	}
	if k := len(c.list); k == 0 || c.list[k-1].name < name {
		c.list = append(c.list, child{name, n}) // in name order: appended
	} else {
		i, ok := slices.BinarySearchFunc(c.list, name, cmpChild)
		if ok {
			c.list[i].n = n
			return false
		}
		c.list = slices.Insert(c.list, i, child{name, n})
	}
	if len(c.list) > maxListedKids {
		c.m = make(map[string]*node, len(c.list))
		for _, e := range c.list {
			c.m[e.name] = e.n
		}
		c.list = nil
	}
	return true
}

// del removes the child called name, if present.
func (c *children) del(name string) {
	if c.m != nil {
		delete(c.m, name)
		return
	}
	if i, ok := slices.BinarySearchFunc(c.list, name, cmpChild); ok {
		c.list = slices.Delete(c.list, i, i+1)
	}
}

// all yields every child with its name, in no particular order.
func (c *children) all() iter.Seq2[string, *node] {
	return func(yield func(string, *node) bool) {
		if c == nil {
			return
		}
		if c.m != nil {
			for k, n := range c.m {
				if !yield(k, n) {
					return
				}
			}
			return
		}
		for _, e := range c.list {
			if !yield(e.name, e.n) {
				return
			}
		}
	}
}

// names returns the children's names, sorted, in a new slice.
func (c *children) names() []string {
	if c == nil {
		return nil
	}
	if c.m != nil {
		return slices.Sorted(maps.Keys(c.m))
	}
	out := make([]string, len(c.list))
	for i, e := range c.list {
		out[i] = e.name
	}
	return out
}

// clone returns a copy that changes to either do not affect.
func (c *children) clone() children {
	if c.m != nil {
		return children{m: maps.Clone(c.m)}
	}
	return children{list: slices.Clone(c.list)}
}
