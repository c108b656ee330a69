package cli

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/wire"
)

// javaDate is the layout of java.util.Date.toString, which zkCli.sh uses
// for ctime and mtime.
const javaDate = "Mon Jan 02 15:04:05 MST 2006"

// writeStat prints a Stat the way zkCli.sh's StatPrinter does.
func writeStat(w io.Writer, st client.Stat) {
	fmt.Fprintf(w, "cZxid = 0x%x\n", uint64(st.Czxid))
	fmt.Fprintf(w, "ctime = %s\n", time.UnixMilli(st.Ctime).Format(javaDate))
	fmt.Fprintf(w, "mZxid = 0x%x\n", uint64(st.Mzxid))
	fmt.Fprintf(w, "mtime = %s\n", time.UnixMilli(st.Mtime).Format(javaDate))
	fmt.Fprintf(w, "pZxid = 0x%x\n", uint64(st.Pzxid))
	fmt.Fprintf(w, "cversion = %d\n", st.Cversion)
	fmt.Fprintf(w, "dataVersion = %d\n", st.Version)
	fmt.Fprintf(w, "aclVersion = %d\n", st.Aversion)
	fmt.Fprintf(w, "ephemeralOwner = 0x%x\n", uint64(st.EphemeralOwner))
	fmt.Fprintf(w, "dataLength = %d\n", st.DataLength)
	fmt.Fprintf(w, "numChildren = %d\n", st.NumChildren)
}

// writeACL prints an ACL list as zkCli.sh's getAcl does.
func writeACL(w io.Writer, acl []client.ACL) {
	for _, a := range acl {
		fmt.Fprintf(w, "'%s,'%s\n: %s\n", a.ID.Scheme, a.ID.ID, a.Perms.Letters())
	}
}

// parseACL parses zkCli.sh's ACL syntax, "scheme:id:perms[,...]" (the id
// may contain colons). Malformed entries are reported on errw and skipped,
// as zkCli.sh does; the caller treats an empty result as an invalid ACL.
func parseACL(errw io.Writer, s string) []client.ACL {
	var out []client.ACL
	for _, part := range strings.Split(s, ",") {
		first, last := strings.IndexByte(part, ':'), strings.LastIndexByte(part, ':')
		if first < 0 || first == last {
			fmt.Fprintf(errw, "%s does not have the form scheme:id:perm\n", part)
			continue
		}
		var perms wire.Perm
		for _, c := range part[last+1:] {
			switch c {
			case 'r', 'R':
				perms |= wire.PermRead
			case 'w', 'W':
				perms |= wire.PermWrite
			case 'c', 'C':
				perms |= wire.PermCreate
			case 'd', 'D':
				perms |= wire.PermDelete
			case 'a', 'A':
				perms |= wire.PermAdmin
			default:
				fmt.Fprintf(errw, "Unknown perm type: %c\n", c)
			}
		}
		out = append(out, client.ACL{Perms: perms, ID: client.ID{Scheme: part[:first], ID: part[first+1 : last]}})
	}
	return out
}

// eventTypeName is Watcher.Event.EventType's name for t.
func eventTypeName(t wire.EventType) string {
	switch t {
	case wire.EventNone:
		return "None"
	case wire.EventNodeCreated:
		return "NodeCreated"
	case wire.EventNodeDeleted:
		return "NodeDeleted"
	case wire.EventNodeDataChanged:
		return "NodeDataChanged"
	case wire.EventNodeChildrenChanged:
		return "NodeChildrenChanged"
	case wire.EventDataWatchRemoved:
		return "DataWatchRemoved"
	case wire.EventChildWatchRemoved:
		return "ChildWatchRemoved"
	case wire.EventPersistentWatchRemoved:
		return "PersistentWatchRemoved"
	}
	return fmt.Sprintf("Unknown(%d)", int32(t))
}

// stateName is Watcher.Event.KeeperState's name for a client session state.
func stateName(s client.State) string {
	switch s {
	case client.StateConnected:
		return "SyncConnected"
	case client.StateDisconnected, client.StateConnecting:
		return "Disconnected"
	case client.StateExpired:
		return "Expired"
	case client.StateAuthFailed:
		return "AuthFailed"
	case client.StateClosed:
		return "Closed"
	}
	return "Unknown"
}

// promptState is ZooKeeper.States' name for s, as zkCli.sh's prompt shows it.
func promptState(s client.State) string {
	switch s {
	case client.StateConnected:
		return "CONNECTED"
	case client.StateConnecting, client.StateDisconnected:
		return "CONNECTING"
	case client.StateAuthFailed:
		return "AUTH_FAILED"
	case client.StateExpired, client.StateClosed:
		return "CLOSED"
	}
	return "NOT_CONNECTED"
}

// watchedEvent renders an event as zkCli.sh's watcher prints it: a blank
// line, "WATCHER::", a blank line, then WatchedEvent.toString.
func watchedEvent(state, typ, path string) string {
	return "\nWATCHER::\n\nWatchedEvent state:" + state + " type:" + typ + " path:" + path + "\n"
}

// errorText is zkCli.sh's message for a failed operation on path
// (CliWrapperException, ZooKeeper 3.8.0 wording).
func errorText(err error, path string) string {
	var code wire.Code
	if !errors.As(err, &code) {
		return err.Error()
	}
	switch code {
	case wire.ErrNoNode:
		return "Node does not exist: " + path
	case wire.ErrNoChildrenForEphemerals:
		return "Ephemerals cannot have children: " + path
	case wire.ErrNodeExists:
		return "Node already exists: " + path
	case wire.ErrNotEmpty:
		return "Node not empty: " + path
	case wire.ErrNotReadOnly:
		return "Not a read-only call: " + path
	case wire.ErrInvalidACL:
		return "Acl is not valid : " + path
	case wire.ErrNoAuth:
		return "Insufficient permission : " + path
	case wire.ErrBadArguments:
		return "Arguments are not valid : " + path
	case wire.ErrBadVersion:
		return "version No is not valid : " + path
	case wire.ErrReconfigInProgress:
		return "Another reconfiguration is in progress -- concurrent reconfigs not supported (yet)"
	case wire.ErrNewConfigNoQuorum:
		return "No quorum of new config is connected and up-to-date with the leader of last commmitted config - try invoking reconfiguration after new servers are connected and synced"
	case wire.ErrQuotaExceeded:
		return "Quota has exceeded : " + path
	}
	return keeperText(code, path)
}

// keeperText is KeeperException.getMessage: "KeeperErrorCode = X for path".
func keeperText(code wire.Code, path string) string {
	s := strings.TrimPrefix(code.Error(), "zk: ")
	if path != "" {
		s += " for " + path
	}
	return s
}

// jsonData is znode data in JSON: UTF-8 text as a string, anything else
// base64 (with Encoding saying which).
type jsonData struct {
	Data     *string `json:"data"`
	Encoding string  `json:"encoding,omitempty"`
}

func encodeData(b []byte) jsonData {
	if b == nil {
		return jsonData{}
	}
	if utf8.Valid(b) {
		s := string(b)
		return jsonData{Data: &s, Encoding: "utf8"}
	}
	s := base64.StdEncoding.EncodeToString(b)
	return jsonData{Data: &s, Encoding: "base64"}
}

func (d jsonData) decode() ([]byte, error) {
	if d.Data == nil {
		return nil, nil
	}
	if d.Encoding == "base64" {
		return base64.StdEncoding.DecodeString(*d.Data)
	}
	return []byte(*d.Data), nil
}

// jsonStat is a Stat in JSON, with zkCli.sh's field names.
type jsonStat struct {
	Czxid          int64 `json:"cZxid"`
	Ctime          int64 `json:"ctime"`
	Mzxid          int64 `json:"mZxid"`
	Mtime          int64 `json:"mtime"`
	Pzxid          int64 `json:"pZxid"`
	Cversion       int32 `json:"cversion"`
	DataVersion    int32 `json:"dataVersion"`
	AclVersion     int32 `json:"aclVersion"`
	EphemeralOwner int64 `json:"ephemeralOwner"`
	DataLength     int32 `json:"dataLength"`
	NumChildren    int32 `json:"numChildren"`
}

func statJSON(st client.Stat) *jsonStat {
	return &jsonStat{st.Czxid, st.Ctime, st.Mzxid, st.Mtime, st.Pzxid, st.Cversion, st.Version,
		st.Aversion, st.EphemeralOwner, st.DataLength, st.NumChildren}
}

// jsonACL is one ACL entry in JSON.
type jsonACL struct {
	Scheme string `json:"scheme"`
	ID     string `json:"id"`
	Perms  string `json:"perms"`
}

func aclJSON(acl []client.ACL) []jsonACL {
	out := make([]jsonACL, len(acl))
	for i, a := range acl {
		out[i] = jsonACL{a.ID.Scheme, a.ID.ID, a.Perms.Letters()}
	}
	return out
}

func aclFromJSON(in []jsonACL) []client.ACL {
	out := make([]client.ACL, len(in))
	for i, a := range in {
		perms := parseACL(io.Discard, "x:y:"+a.Perms)[0].Perms
		out[i] = client.ACL{Perms: perms, ID: client.ID{Scheme: a.Scheme, ID: a.ID}}
	}
	return out
}

// writeJSON writes v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
