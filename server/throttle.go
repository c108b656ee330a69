package server

import (
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/metrics"
	"github.com/wardenzk/warden/internal/throttle"
	"github.com/wardenzk/warden/wire"
)

// connThrottleLogEvery is how often at most a refused session is logged;
// the others are counted into the next line.
const connThrottleLogEvery = 10 * time.Second

// connThrottle is ZooKeeper's connection throttler (BlueThrottle): every
// session establishment takes tokens from a bucket, at the point
// ZooKeeper's processConnectRequest checks it — the ConnectRequest has
// been read, before any other check. A refused one is closed without a
// reply (ZooKeeper's ClientCnxnLimitException), counted in
// connection_rejected and logged at most once per connThrottleLogEvery.
type connThrottle struct {
	now           func() time.Time
	log           *slog.Logger
	metrics       *metrics.Set
	rejected      func()
	weights       throttle.Weights
	localSessions bool

	mu sync.Mutex
	// bucket is the token bucket; guarded by mu.
	bucket *throttle.Bucket
	// suppressed counts refusals not logged since lastLog.
	suppressed int
	lastLog    time.Time
}

func newConnThrottle(s *Server) *connThrottle {
	cfg := s.cfg.Limits
	w, fixes := cfg.ConnectionWeights.Effective()
	for _, f := range fixes {
		s.log.Warn(f)
	}
	t := &connThrottle{
		now:           s.now,
		log:           s.log,
		metrics:       s.metrics,
		rejected:      func() { s.stats.rejected.Add(1) },
		weights:       w,
		localSessions: s.cfg.LocalSessionsEnabled,
		bucket:        throttle.NewBucket(w.Scale(cfg.Connection), s.now(), rand.Float64),
	}
	if t.bucket.Enabled() && w.Enabled {
		s.log.Info("weighed connection throttling is enabled", "global", w.Global, "renew", w.Renew, "local", w.Local)
	}
	return t
}

// admit takes the tokens req needs and reports whether its session may be
// established; a refused connection must be closed without a reply.
func (t *connThrottle) admit(c *conn, req *wire.ConnectRequest) bool {
	need := t.weights.Need(req.SessionID, t.localSessions)
	now := t.now()
	t.mu.Lock()
	ok := t.bucket.Check(now, need)
	deficit := t.bucket.Deficit()
	var logNow bool
	var suppressed int
	if !ok {
		if now.Sub(t.lastLog) >= connThrottleLogEvery || t.lastLog.IsZero() {
			logNow, suppressed = true, t.suppressed
			t.lastLog, t.suppressed = now, 0
		} else {
			t.suppressed++
		}
	}
	t.mu.Unlock()
	if !ok {
		t.rejected()
		if logNow {
			c.log.Warn("connection throttled: closing it before its session is established (connectionMaxTokens, connectionTokenFillTime, connectionTokenFillCount in zoo.cfg)",
				"session", sessionHex(fsm.SessionID(req.SessionID)), "tokens_needed", need, "refused_since_last_line", suppressed)
		}
		return false
	}
	t.metrics.ConnectionTokenDeficit.Observe(int64(deficit))
	t.metrics.ConnectionRequestCount.Inc()
	return true
}

// dropChance returns the throttler's drop probability (mntr's
// connection_drop_probability).
func (t *connThrottle) dropChance() float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bucket.DropChance()
}
