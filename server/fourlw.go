package server

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/node"
)

// ZooKeeperVersion is the ZooKeeper release whose protocol and behaviour
// Warden reproduces; srvr, stat, mntr and envi report it, because clients
// parse it.
const ZooKeeperVersion = "3.8.4"

// VersionLine is the first line of srvr and stat, in the form clients
// parse: "Zookeeper version: 3.8.4-<hex build id>, built on MM/DD/YYYY HH:MM GMT".
func VersionLine() string {
	rev, when := "0", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if len(s.Value) >= 7 {
					rev = s.Value[:7]
				}
			case "vcs.time":
				if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
					when = t.UTC()
				}
			}
		}
	}
	return fmt.Sprintf("Zookeeper version: %s-%s, built on %s GMT", ZooKeeperVersion, rev, when.Format("01/02/2006 15:04"))
}

// fullVersion is the version line without its label, as mntr's
// zk_version and envi's zookeeper.version print it.
func fullVersion() string {
	return strings.TrimPrefix(VersionLine(), "Zookeeper version: ")
}

// fourLetterWord answers a 4lw command and closes the connection, as
// ZooKeeper does: plain text, no framing.
func (c *conn) fourLetterWord(cmd string, br *bufio.Reader) {
	br.Discard(4)
	s := c.srv
	var out string
	if !s.cfg.FourLetterAllowed(cmd) {
		out = cmd + " is not executed because it is not in the whitelist.\n"
	} else {
		if cmd == "stmk" {
			// The mask follows as a big-endian long, as ZooKeeper reads it.
			var mask [8]byte
			if _, err := io.ReadFull(br, mask[:]); err == nil {
				s.SetTraceMask(int64(binary.BigEndian.Uint64(mask[:])))
			}
		}
		c.stats.received.Add(1)
		s.stats.received.Add(1)
		s.metrics.BytesReceived.Add(4) // as ZooKeeper: the word only
		out = s.fourLetterText(cmd)
	}
	c.nc.SetWriteDeadline(time.Now().Add(handshakeTimeout))
	io.WriteString(c.w, out)
}

// notServing is what a member without a leader answers most four-letter
// words with, as ZooKeeper does while it elects.
const notServing = "This ZooKeeper instance is not currently serving requests\n"

// fourLetterText builds the output of one 4lw command.
func (s *Server) fourLetterText(cmd string) string {
	var b strings.Builder
	if !s.Running() {
		switch cmd {
		case "ruok", "envi", "gtmk", "stmk", "conf":
		case "isro":
			return "null"
		default:
			return notServing
		}
	}
	switch cmd {
	case "ruok":
		return "imok"
	case "isro":
		if s.ReadOnly() {
			return "ro"
		}
		return "rw"
	case "gtmk", "stmk":
		return strconv.FormatInt(s.TraceMask(), 10)
	case "srvr":
		s.writeSrvr(&b, false)
	case "stat":
		s.writeSrvr(&b, true)
	case "cons":
		for _, c := range s.connList() {
			b.WriteString(c.consLine(true))
		}
		b.WriteString("\n")
	case "mntr":
		s.writeMntr(&b)
	case "conf":
		dataSize, logSize := s.dirSizes()
		b.WriteString(s.Config().ConfText(dataSize, logSize))
	case "envi":
		s.writeEnvi(&b)
	case "wchs":
		w := s.Watches()
		fmt.Fprintf(&b, "%d connections watching %d paths\nTotal watches:%d\n", w.Connections, w.Paths, w.Total)
	case "wchc":
		s.wmu.Lock()
		byWatcher := s.watches.DataPathsByWatcher()
		s.wmu.Unlock()
		for _, c := range s.connList() {
			paths, ok := byWatcher[c.id]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "%s\n", sessionHex(c.sessionID()))
			for _, p := range paths {
				fmt.Fprintf(&b, "\t%s\n", p)
			}
		}
		b.WriteString("\n")
	case "wchp":
		s.wmu.Lock()
		byPath := s.watches.DataWatchersByPath()
		s.wmu.Unlock()
		paths := make([]string, 0, len(byPath))
		for p := range byPath {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		s.connMu.Lock()
		for _, p := range paths {
			fmt.Fprintf(&b, "%s\n", p)
			for _, w := range byPath[p] {
				if c := s.conns[w]; c != nil {
					fmt.Fprintf(&b, "\t%s\n", sessionHex(c.sessionID()))
				}
			}
		}
		s.connMu.Unlock()
		b.WriteString("\n")
	case "dump":
		s.writeDump(&b)
	case "crst":
		s.ResetConnStats()
		return "Connection stats reset.\n"
	case "srst":
		s.ResetStats()
		return "Server stats reset.\n"
	case "dirs":
		dataSize, logSize := s.dirSizes()
		fmt.Fprintf(&b, "datadir_size: %d\nlogdir_size: %d\n", dataSize, logSize)
	case "hash":
		return ""
	default:
		return ""
	}
	return b.String()
}

// connList returns every open connection in id order: like ZooKeeper's,
// the lists include connections without a session, such as the one asking
// for a four-letter word.
func (s *Server) connList() []*conn {
	s.connMu.Lock()
	list := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		list = append(list, c)
	}
	s.connMu.Unlock()
	sort.Slice(list, func(i, j int) bool { return list[i].id < list[j].id })
	return list
}

// outstanding returns the client requests in flight (srvr's Outstanding).
func (s *Server) outstanding() int { return s.limits.outstanding() }

func (s *Server) writeSrvr(b *strings.Builder, withClients bool) {
	fmt.Fprintf(b, "%s\n", VersionLine())
	if s.ReadOnly() {
		b.WriteString("READ-ONLY mode; serving only read-only clients\n")
	}
	if withClients {
		b.WriteString("Clients:\n")
		for _, c := range s.connList() {
			b.WriteString(c.consLine(false))
		}
		b.WriteString("\n")
	}
	lmin, lavg, lmax := s.stats.lat.get()
	fmt.Fprintf(b, "Latency min/avg/max: %d/%s/%d\n", lmin, javaDouble(lavg), lmax)
	fmt.Fprintf(b, "Received: %d\n", s.stats.received.Load())
	fmt.Fprintf(b, "Sent: %d\n", s.stats.sent.Load())
	fmt.Fprintf(b, "Connections: %d\n", len(s.connList()))
	fmt.Fprintf(b, "Outstanding: %d\n", s.outstanding())
	fmt.Fprintf(b, "Zxid: 0x%x\n", s.lastZxid.Load())
	fmt.Fprintf(b, "Mode: %s\n", s.Mode())
	s.node.RLock()
	// ZooKeeper's node map holds the root twice ("" and "/"): count it so.
	nodes := s.node.FSM().Tree().NodeCount() + 1
	s.node.RUnlock()
	fmt.Fprintf(b, "Node count: %d\n", nodes)
	if s.node.Role() == node.Leading {
		last, lo, hi := s.node.ProposalSizes()
		fmt.Fprintf(b, "Proposal sizes last/min/max: %d/%d/%d\n", last, lo, hi)
	}
}

// consLine is one connection's line in stat (short) and cons (long).
func (c *conn) consLine(long bool) string {
	var b strings.Builder
	// The bracket holds Java NIO's interest ops: 1 (read) for a session
	// connection, 0 for one answering a four-letter word.
	in := c.info()
	fmt.Fprintf(&b, " /%s[%d](queued=%d,recved=%d,sent=%d", in.Remote, in.Interest, in.Queued, in.Received, in.Sent)
	if long && in.Session != 0 {
		fmt.Fprintf(&b, ",sid=%s,lop=%s,est=%d,to=%d", sessionHex(fsm.SessionID(in.Session)), in.LastOp,
			in.Established.UnixMilli(), in.Timeout)
		if in.LastCxid >= 0 {
			fmt.Fprintf(&b, ",lcxid=0x%x", in.LastCxid)
		}
		// avglat is an integer in 3.8 (a long division), and
		// go-zookeeper's parser requires that.
		fmt.Fprintf(&b, ",lzxid=0x%x,lresp=%d,llat=%d,minlat=%d,avglat=%d,maxlat=%d",
			uint64(in.LastZxid), in.LastResponse, in.LastLatency, in.MinLatency, in.AvgLatency, in.MaxLatency)
	}
	b.WriteString(")\n")
	return b.String()
}

func (s *Server) writeMntr(b *strings.Builder) {
	for _, m := range s.Monitor() {
		fmt.Fprintf(b, "zk_%s\t%v\n", m.Name, m.Value)
	}
}

func (s *Server) writeEnvi(b *strings.Builder) {
	b.WriteString("Environment:\n")
	for _, kv := range Environment() {
		fmt.Fprintf(b, "%s=%s\n", kv[0], kv[1])
	}
}

// Environment returns what envi lists, in its order: the name and value of
// each entry, named as ZooKeeper names them (the java.* entries describe
// the Go runtime).
func Environment() [][2]string {
	host, _ := os.Hostname()
	exe, _ := os.Executable()
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	user := os.Getenv("USER")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return [][2]string{
		{"zookeeper.version", fullVersion()},
		{"host.name", host},
		{"java.version", runtime.Version()},
		{"java.vendor", "Warden (Go)"},
		{"java.home", filepath.Dir(exe)},
		{"java.class.path", ""},
		{"java.library.path", ""},
		{"java.io.tmpdir", os.TempDir()},
		{"java.compiler", "<NA>"},
		{"os.name", runtime.GOOS},
		{"os.arch", runtime.GOARCH},
		{"os.version", ""},
		{"user.name", user},
		{"user.home", home},
		{"user.dir", wd},
		{"os.memory.free", fmt.Sprintf("%dMB", (ms.Sys-ms.HeapInuse)>>20)},
		{"os.memory.max", fmt.Sprintf("%dMB", ms.Sys>>20)},
		{"os.memory.total", fmt.Sprintf("%dMB", ms.Sys>>20)},
	}
}

func (s *Server) writeDump(b *strings.Builder) {
	s.sessMu.Lock()
	type bucket struct {
		at  time.Time
		ids []fsm.SessionID
	}
	byTime := map[int64]*bucket{}
	for id, ls := range s.live {
		k := ls.expireAt.UnixMilli()
		if byTime[k] == nil {
			byTime[k] = &bucket{at: ls.expireAt}
		}
		byTime[k].ids = append(byTime[k].ids, id)
	}
	total := len(s.live)
	s.sessMu.Unlock()
	keys := make([]int64, 0, len(byTime))
	for k := range byTime {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	b.WriteString("SessionTracker dump:\n")
	fmt.Fprintf(b, "Session Sets (%d)/(%d):\n", len(keys), total)
	for _, k := range keys {
		bk := byTime[k]
		sort.Slice(bk.ids, func(i, j int) bool { return bk.ids[i] < bk.ids[j] })
		fmt.Fprintf(b, "%d expire at %s:\n", len(bk.ids), bk.at.UTC().Format("Mon Jan 02 15:04:05 MST 2006"))
		for _, id := range bk.ids {
			fmt.Fprintf(b, "\t%s\n", sessionHex(id))
		}
	}
	s.node.RLock()
	bySession := s.node.FSM().Tree().EphemeralsBySession()
	s.node.RUnlock()
	ids := make([]int64, 0, len(bySession))
	for id := range bySession {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	b.WriteString("ephemeral nodes dump:\n")
	fmt.Fprintf(b, "Sessions with Ephemerals (%d):\n", len(ids))
	for _, id := range ids {
		fmt.Fprintf(b, "%s:\n", sessionHex(fsm.SessionID(id)))
		for _, p := range bySession[id] {
			fmt.Fprintf(b, "\t%s\n", p)
		}
	}
	b.WriteString("Connections dump:\n")
}

// dirSizes returns the bytes used under dataDir and dataLogDir.
func (s *Server) dirSizes() (data, log int64) {
	return dirSize(s.cfg.DataDir), dirSize(s.cfg.DataLogDir)
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

func countOpenFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(ents)
}

func maxFDs() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return r.Cur
}
