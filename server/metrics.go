package server

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wardenzk/warden/internal/config"
	"github.com/wardenzk/warden/internal/metrics"
	"github.com/wardenzk/warden/internal/storage"
	"github.com/wardenzk/warden/wire"
)

// Metrics returns the server's metrics: serve them with metrics.Serve or
// metrics.Handler. They exist whatever metricsProvider.className says;
// the class only decides whether cmd/warden serves /metrics.
func (s *Server) Metrics() *metrics.Set { return s.metrics }

// newMetrics reads the metricsProvider.* and fsync.warningthresholdms
// keys and builds the server's metrics. An unknown provider class or a
// bad threshold stops the server, as they stop ZooKeeper.
func newMetrics(cfg *config.Config) (*metrics.Set, error) {
	p, err := metrics.ParseProvider(cfg.Lookup)
	if err != nil {
		return nil, err
	}
	return metrics.New(metrics.Options{Runtime: p.Runtime}), nil
}

// slowSync reads fsync.warningthresholdms (default 1000) as the node's
// SlowSync: a WAL fsync longer than that many milliseconds is logged and
// counted (fsync_threshold_exceed_count); 0 reports every fsync.
func slowSync(cfg *config.Config) (time.Duration, error) {
	v, ok := cfg.Lookup("fsync.warningthresholdms")
	if !ok {
		return storage.DefaultSlowSync, nil
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || ms < 0 {
		return 0, fmt.Errorf("server: fsync.warningthresholdms=%q is not a number of milliseconds: use a whole number, e.g. 1000", v)
	}
	if ms == 0 {
		return -1, nil // storage.WALOptions: every fsync
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// exportMetrics has /metrics export the server's mntr values at each
// scrape, and the raft state.
func (s *Server) exportMetrics() {
	s.metrics.ExportMonitor(func() []metrics.Value {
		m := s.serverMonitor()
		out := make([]metrics.Value, len(m))
		for i, v := range m {
			out[i] = metrics.Value{Name: v.Name, Value: v.Value}
		}
		return out
	}, "connection_rejected", "throttled_ops", "session_expired_count", "watch_events_sent")
	s.metrics.ExportRaft(func() metrics.RaftState {
		return metrics.RaftState{Term: s.node.Term(), Commit: s.node.Commit(), Applied: s.node.Applied(), LogBytes: s.node.LogBytes()}
	})
}

// opName names an opcode in warden_request_duration_seconds{op}, after
// ZooKeeper's OpCode constants in snake case.
func opName(op wire.OpCode) string {
	switch op {
	case wire.OpCreate:
		return "create"
	case wire.OpCreate2:
		return "create2"
	case wire.OpCreateContainer:
		return "create_container"
	case wire.OpCreateTTL:
		return "create_ttl"
	case wire.OpDelete:
		return "delete"
	case wire.OpDeleteContainer:
		return "delete_container"
	case wire.OpExists:
		return "exists"
	case wire.OpGetData:
		return "get_data"
	case wire.OpSetData:
		return "set_data"
	case wire.OpGetACL:
		return "get_acl"
	case wire.OpSetACL:
		return "set_acl"
	case wire.OpGetChildren:
		return "get_children"
	case wire.OpGetChildren2:
		return "get_children2"
	case wire.OpSync:
		return "sync"
	case wire.OpPing:
		return "ping"
	case wire.OpCheck:
		return "check"
	case wire.OpMulti:
		return "multi"
	case wire.OpMultiRead:
		return "multi_read"
	case wire.OpReconfig:
		return "reconfig"
	case wire.OpCheckWatches:
		return "check_watches"
	case wire.OpRemoveWatches:
		return "remove_watches"
	case wire.OpAuth:
		return "auth"
	case wire.OpSASL:
		return "sasl"
	case wire.OpSetWatches:
		return "set_watches"
	case wire.OpSetWatches2:
		return "set_watches2"
	case wire.OpAddWatch:
		return "add_watch"
	case wire.OpGetEphemerals:
		return "get_ephemerals"
	case wire.OpGetAllChildrenNumber:
		return "get_all_children_number"
	case wire.OpWhoAmI:
		return "who_am_i"
	case wire.OpCreateSession:
		return "create_session"
	case wire.OpCloseSession:
		return "close_session"
	}
	return "unknown"
}
