package ensemble

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/test/proc"
)

// Bounds of the tests' own waits (the process handling's are proc's).
const (
	fourLWTimeout = 500 * time.Millisecond // one four-letter word, dial to last byte
	pollInterval  = 10 * time.Millisecond
)

// notServing is srvr's whole answer from a member without a leader.
const notServing = "This ZooKeeper instance is not currently serving requests\n"

// TestMain removes the binary proc.Warden built.
func TestMain(m *testing.M) {
	code := m.Run()
	proc.RemoveBuild()
	os.Exit(code)
}

// member is one `warden server` child process on a fixed address, data
// directory and zoo.cfg, started, killed, paused and restarted any number
// of times (proc.Server). Its methods are called from the test goroutine
// only.
type member struct {
	proc.Server
	id      int    // myid
	host    string // the member's own loopback address
	dataDir string
	// observer is set while the ensemble's configuration makes the member
	// an observer.
	observer bool
}

// live reports whether the member is meant to answer: running and not
// paused.
func (m *member) live() bool { return m.Running() && !m.Paused() }

func (m *member) String() string { return fmt.Sprintf("server.%d", m.id) }

// memberStatus is what srvr says about a member.
type memberStatus struct {
	serving bool
	mode    string // leader, follower, observer; "" when not serving
	zxid    uint64
}

func (s memberStatus) String() string {
	if !s.serving {
		return "not serving"
	}
	return fmt.Sprintf("%s at zxid %#x", s.mode, s.zxid)
}

// status asks the member for srvr. An error means no (complete) answer:
// the process is down, paused, or starting.
func (m *member) status() (memberStatus, error) {
	out, err := proc.FourLetterWord(m.Addr, "srvr", fourLWTimeout)
	if err != nil {
		return memberStatus{}, err
	}
	if out == notServing {
		return memberStatus{}, nil
	}
	st := memberStatus{serving: true}
	var haveZxid bool
	for _, line := range strings.Split(out, "\n") {
		switch k, v, _ := strings.Cut(line, ": "); k {
		case "Mode":
			st.mode = v
		case "Zxid":
			st.zxid, err = strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 64)
			haveZxid = err == nil
		}
	}
	if st.mode == "" || !haveZxid {
		return memberStatus{}, fmt.Errorf("%v: srvr answer without Mode and Zxid: %q", m, out)
	}
	return st, nil
}

// mntr asks the member for mntr and returns its keys (zk_ prefix
// removed) and values.
func (m *member) mntr() (map[string]string, error) {
	out, err := proc.FourLetterWord(m.Addr, "mntr", fourLWTimeout)
	if err != nil {
		return nil, err
	}
	kv := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok {
			kv[strings.TrimPrefix(k, "zk_")] = v
		}
	}
	return kv, nil
}

// logCount returns how many times the member's log (every run's) holds s.
func (m *member) logCount(s string) int {
	b, err := os.ReadFile(m.Log)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), s)
}
