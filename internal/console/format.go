package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/wardenzk/warden/wire"
)

// maxShown bounds the bytes of a node's data rendered as text, JSON and
// hex; the rest is reported as truncated (a znode holds up to
// jute.maxbuffer, 1 MiB by default, far more than a page should show).
const maxShown = 64 << 10

// dataView is a node's data in the three forms the console shows. Text
// is absent when the data is not valid UTF-8; JSON is absent when it does
// not parse as JSON.
type dataView struct {
	Size      int     `json:"size"`
	Truncated bool    `json:"truncated"`
	Text      *string `json:"text"`
	JSON      *string `json:"json"`
	Hex       string  `json:"hex"`
	// Format is the form to show first: "json", "text" or "hex" ("text"
	// for empty data).
	Format string `json:"format"`
}

// viewData renders data as text, pretty-printed JSON and a hex dump, each
// of at most maxShown bytes of it.
func viewData(data []byte) dataView {
	v := dataView{Size: len(data), Format: "hex"}
	shown := data
	if len(shown) > maxShown {
		shown, v.Truncated = shown[:maxShown], true
	}
	v.Hex = hexDump(shown)
	if v.Truncated {
		if text := trimPartialRune(shown); utf8.Valid(text) {
			shown = text // the text ends before a rune cut at maxShown
		}
	}
	if utf8.Valid(shown) {
		s := string(shown)
		v.Text, v.Format = &s, "text"
	}
	if !v.Truncated && len(bytes.TrimSpace(data)) > 0 && json.Valid(data) {
		var b bytes.Buffer
		if err := json.Indent(&b, data, "", "  "); err == nil {
			s := b.String()
			v.JSON, v.Format = &s, "json"
		}
	}
	return v
}

// trimPartialRune drops an incomplete UTF-8 sequence cut at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if utf8.Valid(b) {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}

// hexDump is the classic 16-bytes-per-line dump: offset, bytes in hex,
// printable ASCII (others as '.').
func hexDump(b []byte) string {
	var sb strings.Builder
	for off := 0; off < len(b); off += 16 {
		line := b[off:min(off+16, len(b))]
		fmt.Fprintf(&sb, "%08x  ", off)
		for i := range 16 {
			switch {
			case i < len(line):
				fmt.Fprintf(&sb, "%02x ", line[i])
			default:
				sb.WriteString("   ")
			}
			if i == 7 {
				sb.WriteByte(' ')
			}
		}
		sb.WriteString(" |")
		for _, c := range line {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			sb.WriteByte(c)
		}
		sb.WriteString("|\n")
	}
	return sb.String()
}

// statView is a znode's stat as the API returns it: zxids in hex as
// ZooKeeper's tools print them, times in Unix milliseconds.
type statView struct {
	Czxid          string `json:"czxid"`
	Mzxid          string `json:"mzxid"`
	Pzxid          string `json:"pzxid"`
	Ctime          int64  `json:"ctime"`
	Mtime          int64  `json:"mtime"`
	Version        int32  `json:"version"`
	Cversion       int32  `json:"cversion"`
	Aversion       int32  `json:"aversion"`
	EphemeralOwner string `json:"ephemeralOwner"`
	DataLength     int32  `json:"dataLength"`
	NumChildren    int32  `json:"numChildren"`
}

func viewStat(s wire.Stat) statView {
	return statView{
		Czxid: hex64(s.Czxid), Mzxid: hex64(s.Mzxid), Pzxid: hex64(s.Pzxid),
		Ctime: s.Ctime, Mtime: s.Mtime,
		Version: s.Version, Cversion: s.Cversion, Aversion: s.Aversion,
		EphemeralOwner: hex64(s.EphemeralOwner),
		DataLength:     s.DataLength, NumChildren: s.NumChildren,
	}
}

func hex64(v int64) string { return fmt.Sprintf("0x%x", uint64(v)) }

// aclView is one ACL entry: scheme, id, and the permissions as
// ZooKeeper's CLI letters (cdrwa) and as names.
type aclView struct {
	Scheme string   `json:"scheme"`
	ID     string   `json:"id"`
	Perms  string   `json:"perms"`
	Names  []string `json:"names"`
}

func viewACL(acl []wire.ACL) []aclView {
	out := make([]aclView, 0, len(acl))
	for _, a := range acl {
		out = append(out, aclView{Scheme: a.ID.Scheme, ID: a.ID.ID, Perms: a.Perms.Letters(), Names: permNames(a.Perms)})
	}
	return out
}

// perms name the permission bits in ZooKeeper's CLI order (cdrwa).
var perms = []struct {
	p    wire.Perm
	name string
}{
	{wire.PermCreate, "CREATE"}, {wire.PermDelete, "DELETE"}, {wire.PermRead, "READ"},
	{wire.PermWrite, "WRITE"}, {wire.PermAdmin, "ADMIN"},
}

func permNames(p wire.Perm) []string {
	out := []string{}
	for _, x := range perms {
		if p&x.p != 0 {
			out = append(out, x.name)
		}
	}
	return out
}
