package tree

import (
	"iter"
	"maps"
	"slices"
	"strings"
	"unsafe"
)

// children is a node's children by name: a slice sorted by name while
// there are at most maxListedKids of them, a map beyond. Go's maps are
// between half and seven-eighths full, so the slice takes about a third
// of the memory of a map for the same children; a lookup is a binary
// search, and an insert or delete moves at most maxListedKids entries.
// Children created in name order (sequential nodes, a snapshot being
// loaded) are appended.
//
// A listed child's name lies in text, the names end to end, not in a
// string of its own: an entry is 16 bytes, not 24, and a name costs its
// bytes rather than an allocation (a thousand children named n0 to n999:
// some 20 KiB with text, against 34 KiB for strings and their entries).
// Invariant: the bytes of text below len(text) never change once written,
// so the strings nameOf hands out stay valid after the set changes; only
// a set that owns the capacity past len(text) appends there (clone hands
// out a full one), and a set with many names deleted copies the rest into
// a new text.
type children struct {
	list []child          // sorted by name; nil once m is in use
	text []byte           // the listed children's names, end to end
	m    map[string]*node // nil while list is in use
	dead uint32           // bytes of text that no listed child names
}

// child is one entry of a children list: the node and where its name
// lies in the set's text.
type child struct {
	n        *node
	off, len uint32
}

// maxListedKids is the most children kept in a sorted slice.
const maxListedKids = 1024

// nameOf returns e's name, sharing the set's text.
func (c *children) nameOf(e child) string {
	if e.len == 0 {
		return ""
	}
	return unsafe.String(&c.text[e.off], e.len)
}

// search finds name in the list: its index, or where it would go.
func (c *children) search(name string) (int, bool) {
	return slices.BinarySearchFunc(c.list, name, func(e child, name string) int {
		return strings.Compare(c.nameOf(e), name)
	})
}

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
	if i, ok := c.search(name); ok {
		return c.list[i].n
	}
	return nil
}

// put sets the child called name to n and reports whether it was new.
// The set keeps a copy of name, never name itself.
func (c *children) put(name string, n *node) (added bool) {
	if c.m != nil {
		_, had := c.m[name]
		c.m[strings.Clone(name)] = n
		return !had
	}
	i, ok := len(c.list), false
	if i > 0 && c.nameOf(c.list[i-1]) >= name {
		if i, ok = c.search(name); ok {
			c.list[i].n = n
			return false
		}
	}
	e := child{n: n, off: uint32(len(c.text)), len: uint32(len(name))}
	c.text = append(c.text, name...)
	c.list = slices.Insert(c.list, i, e) // in name order: appended
	if len(c.list) > maxListedKids {
		c.m = make(map[string]*node, len(c.list))
		for _, e := range c.list {
			c.m[string(c.text[e.off:e.off+e.len])] = e.n
		}
		c.list, c.text, c.dead = nil, nil, 0
	}
	return true
}

// del removes the child called name, if present.
func (c *children) del(name string) {
	if c.m != nil {
		delete(c.m, name)
		return
	}
	i, ok := c.search(name)
	if !ok {
		return
	}
	c.dead += c.list[i].len
	c.list = slices.Delete(c.list, i, i+1)
	switch {
	case len(c.list) == 0:
		c.list, c.text, c.dead = nil, nil, 0
	case int(c.dead) > len(c.text)/2:
		c.compact()
	}
}

// compact copies the listed names into a new text, without the deleted
// ones (the old text stays as it is for the strings already handed out).
func (c *children) compact() {
	text := make([]byte, 0, len(c.text)-int(c.dead))
	for i, e := range c.list {
		c.list[i].off = uint32(len(text))
		text = append(text, c.text[e.off:e.off+e.len]...)
	}
	c.text, c.dead = text, 0
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
			if !yield(c.nameOf(e), e.n) {
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
		out[i] = c.nameOf(e)
	}
	return out
}

// clone returns a copy that changes to either do not affect. The copy's
// text is shared but full, so its first new name moves it to a text of
// its own.
func (c *children) clone() children {
	if c.m != nil {
		return children{m: maps.Clone(c.m)}
	}
	return children{list: slices.Clone(c.list), text: slices.Clip(c.text), dead: c.dead}
}
