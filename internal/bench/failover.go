package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wardenzk/warden/client"
)

// The failover workload.
//
// Config.Clients sessions, spread over the members, each write their own
// znode continuously (Config.Inflight writes in flight each). Then, for
// each of Config.Failovers rounds:
//
//  1. wait until every session has had a write acknowledged, then let the
//     load run steadily for Config.Duration;
//  2. ask every member for srvr and take the one answering "Mode: leader";
//  3. kill it (memberControl.Kill): with --kill-leader-pidfile the bench
//     sends SIGKILL itself and the kill instant is the return of kill(2);
//     with --kill-leader-cmd it is the moment the command exits;
//  4. measure, from the kill instant: the first acknowledged write sent
//     after it, by any session (the client-side failover time); the moment
//     every session has had such a write acknowledged; and, by polling srvr
//     on the surviving members, the moment one of them says it leads;
//  5. restart the killed member (--restart-cmd) and wait until it answers
//     srvr as a follower.
//
// After the last round the load runs for Duration more (at most
// timelineAfter), so that every kill's timeline ends in steady writes.
//
// Only writes *sent* after the kill count: a write sent just before it may
// have been committed before the leader died and be acknowledged just
// after, which says nothing about failing over.

// Failover settings.
const (
	// failoverTimeout bounds each wait of the failover workload: for the
	// sessions to write, for a leader, for the killed member to rejoin.
	failoverTimeout = 60 * time.Second
	// failoverBackoffMin and failoverBackoffMax bound the sessions'
	// reconnection backoff (package client's defaults are 50 ms to 5 s),
	// so that what is measured is the ensemble's failover, give or take
	// 200 ms, not a client backoff grown while the members elect.
	failoverBackoffMin = 10 * time.Millisecond
	failoverBackoffMax = 200 * time.Millisecond
	// failoverErrorPause is how long a writer waits after a failed write
	// before the next one (a lost connection fails writes at once).
	failoverErrorPause = time.Millisecond

	// The timeline of acknowledged writes around each kill: buckets of
	// timelineStep from timelineBefore before the kill to timelineAfter
	// after it (or to the next kill or the end of the load, if sooner),
	// counted in grains of timelineGrain.
	timelineStep   = 100 * time.Millisecond
	timelineBefore = time.Second
	timelineAfter  = 5 * time.Second
	timelineGrain  = 10 * time.Millisecond
)

// FailoverSample is one leader kill of the failover workload. Times are
// milliseconds from the kill instant.
type FailoverSample struct {
	// Leader is the client address of the member killed.
	Leader string `json:"leader"`
	// NewLeader is the surviving member that srvr showed leading next.
	NewLeader string `json:"new_leader,omitempty"`
	// KillMs is how long the kill took (with --kill-leader-cmd, the
	// uncertainty of the kill instant).
	KillMs float64 `json:"kill_ms"`
	// NewLeaderMs: until a surviving member answered srvr "Mode: leader".
	NewLeaderMs float64 `json:"new_leader_ms"`
	// FirstWriteMs: until the first acknowledged write sent after the
	// kill, by any session.
	FirstWriteMs float64 `json:"first_write_ms"`
	// AllClientsMs: until every session had such a write acknowledged.
	AllClientsMs float64 `json:"all_clients_ms"`
	// RejoinMs: from the start of the restart command until the killed
	// member answered srvr "Mode: follower" (0: not restarted).
	RejoinMs float64 `json:"rejoin_ms,omitempty"`
	// Timeline counts acknowledged writes per TimelineStepMs, the first
	// bucket starting TimelineBeforeMs before the kill.
	Timeline         []int64 `json:"timeline"`
	TimelineStepMs   float64 `json:"timeline_step_ms"`
	TimelineBeforeMs float64 `json:"timeline_before_ms"`

	// killedAt is the kill instant (for the timeline).
	killedAt time.Time
}

// failoverTracker is the measuring core of the failover workload: the
// writers report each acknowledged write, the workload marks instants
// (a kill) and asks when the sessions wrote again. It reads no clock.
// Safe for concurrent use.
type failoverTracker struct {
	mu sync.Mutex
	// mark is the instant of the current measurement (zero: none yet).
	mark time.Time
	// recovered[c] is when session c's first write sent at or after mark
	// was acknowledged; zero until then.
	recovered []time.Time
	// left is the number of zero entries of recovered.
	// Invariant: left == 0 ⇔ doneCh is closed (once a mark is set).
	left   int
	doneCh chan struct{}
	// acks counts acknowledged writes per timelineGrain of
	// acknowledgement time (Unix nanoseconds / timelineGrain).
	acks map[int64]int64
}

func newFailoverTracker(sessions int) *failoverTracker {
	return &failoverTracker{recovered: make([]time.Time, sessions), acks: map[int64]int64{}}
}

// ack records that a write of session c sent at sent was acknowledged
// at acked.
func (t *failoverTracker) ack(c int, sent, acked time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.acks[acked.UnixNano()/int64(timelineGrain)]++
	if t.mark.IsZero() || sent.Before(t.mark) || !t.recovered[c].IsZero() {
		return
	}
	t.recovered[c] = acked
	t.left--
	if t.left == 0 {
		close(t.doneCh)
	}
}

// start begins a measurement from mark: every session has to have a
// write sent at or after mark acknowledged. The returned channel is
// closed once all have.
func (t *failoverTracker) start(mark time.Time) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mark = mark
	clear(t.recovered)
	t.left = len(t.recovered)
	t.doneCh = make(chan struct{})
	if t.left == 0 {
		close(t.doneCh)
	}
	return t.doneCh
}

// sessions is the number of sessions tracked.
func (t *failoverTracker) sessions() int { return len(t.recovered) }

// recovery returns, for the measurement begun by the last start, the
// time from its mark to the first session's recovery and to the last
// one's, and how many sessions have recovered (all is meaningful only
// when n is every session).
func (t *failoverTracker) recovery() (first, all time.Duration, n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, at := range t.recovered {
		if at.IsZero() {
			continue
		}
		d := at.Sub(t.mark)
		if n == 0 || d < first {
			first = d
		}
		all = max(all, d)
		n++
	}
	return first, all, n
}

// timeline returns the acknowledged writes per timelineStep from
// mark-before to mark+after.
func (t *failoverTracker) timeline(mark time.Time, before, after time.Duration) []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	g0 := mark.Add(-before).UnixNano() / int64(timelineGrain)
	perStep := int64(timelineStep / timelineGrain)
	out := make([]int64, (before+after)/timelineStep)
	for b := range out {
		for k := range perStep {
			out[b] += t.acks[g0+int64(b)*perStep+k]
		}
	}
	return out
}

// memberControl kills and restarts ensemble members (failover). Kill
// returns once the member's process is dead; Restart once the member has
// been launched (not necessarily serving yet). addr is the member's
// client address as the connection string spells it.
type memberControl interface {
	Kill(ctx context.Context, addr string) error
	Restart(ctx context.Context, addr string) error
}

// errNoRestart is Restart's error when there is no way to restart a
// member (no --restart-cmd): the workload then leaves it dead.
var errNoRestart = errors.New("bench: no restart command")

// shellControl runs --kill-leader-cmd and --restart-cmd.
type shellControl struct{ kill, restart string }

func (s shellControl) Kill(ctx context.Context, addr string) error {
	return runShell(ctx, s.kill, addr)
}

func (s shellControl) Restart(ctx context.Context, addr string) error {
	if s.restart == "" {
		return errNoRestart
	}
	return runShell(ctx, s.restart, addr)
}

// pidFileControl kills a member with SIGKILL itself, its pid read from a
// file (--kill-leader-pidfile): the kill instant is then the return of
// kill(2), not the exit of a shell. Restarts run a command, as
// shellControl's.
type pidFileControl struct {
	// pidFile names the member's pid file, with {addr}, {host}, {port}.
	pidFile string
	restart shellControl
}

func (p pidFileControl) Kill(_ context.Context, addr string) error {
	name := expandAddr(p.pidFile, addr)
	b, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("bench: the leader's pid: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return fmt.Errorf("bench: %s holds no pid: %q", name, b)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("bench: kill -9 %d (%s, from %s): %w", pid, addr, name, err)
	}
	return nil
}

func (p pidFileControl) Restart(ctx context.Context, addr string) error {
	return p.restart.Restart(ctx, addr)
}

// expandAddr replaces {addr}, {host} and {port} in cmd with addr and its
// parts.
func expandAddr(cmd, addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, ""
	}
	return strings.NewReplacer("{addr}", addr, "{host}", host, "{port}", port).Replace(cmd)
}

// runShell runs cmd, expanded for addr, with sh -c and returns its
// output in the error when it fails. A command that leaves a process
// behind holding its output (a member started without redirecting it)
// costs a 100 ms wait, not a hang.
func runShell(ctx context.Context, cmd, addr string) error {
	line := expandAddr(cmd, addr)
	c := exec.CommandContext(ctx, "sh", "-c", line)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	c.WaitDelay = 100 * time.Millisecond
	if err := c.Run(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return fmt.Errorf("bench: %s: %w: %s", line, err, strings.TrimSpace(out.String()))
	}
	return nil
}

func runFailover(ctx context.Context, e *env) error {
	if len(e.members) < 3 {
		return fmt.Errorf("bench: failover needs the connection string of an ensemble of 3 or more members, have %d", len(e.members))
	}
	if e.control == nil {
		return errors.New("bench: failover needs --kill-leader-pidfile or --kill-leader-cmd")
	}
	conns, err := e.connect(ctx, e.cfg.Clients, client.WithBackoff(failoverBackoffMin, failoverBackoffMax))
	if err != nil {
		return err
	}
	e.extra = append(e.extra, conns...)
	dir := e.cfg.Root + "/failover"
	if err := e.resetPath(ctx, conns, dir); err != nil {
		return err
	}
	defer e.removeTree(context.WithoutCancel(ctx), conns, e.cfg.Root)
	keys := make([]string, len(conns))
	for i := range keys {
		keys[i] = dir + "/c" + strconv.Itoa(i)
	}
	if err := e.bulk(ctx, conns, int64(len(keys)), func(ctx context.Context, c *client.Conn, i int64) error {
		_, err := c.Create(ctx, keys[i], nil, client.Persistent, client.OpenACL)
		return err
	}); err != nil {
		return err
	}

	tr := newFailoverTracker(len(conns))
	load := e.startWrites(ctx, conns, keys, tr)
	samples, runErr := e.failovers(ctx, tr)
	if runErr == nil {
		// A tail of steady writes, so the last kill's timeline shows the
		// load back, as the others do.
		runErr = sleepCtx(ctx, min(e.cfg.Duration, timelineAfter))
	}
	load.stop()
	stopped := load.start.Add(load.elapsed)
	e.recordPhase("failover writes", len(conns), load.hist(), load.errors(), load.elapsed)
	ph := &e.res.Phases[len(e.res.Phases)-1]
	ph.Inflight, ph.FirstError = e.cfg.Inflight, load.firstError()
	for i := range samples {
		// Up to the next kill or the end of the load, whichever is first.
		after := min(timelineAfter, stopped.Sub(samples[i].killedAt))
		if i+1 < len(samples) {
			after = min(after, samples[i+1].killedAt.Sub(samples[i].killedAt))
		}
		after = after.Truncate(timelineStep)
		samples[i].Timeline = tr.timeline(samples[i].killedAt, timelineBefore, after)
		samples[i].TimelineStepMs = millis(timelineStep)
		samples[i].TimelineBeforeMs = millis(timelineBefore)
	}
	e.res.Failovers = samples
	e.failoverMetrics(samples)
	e.note("failover: times run from the kill instant (" + e.killInstant() + "); a session has failed over at the reply to its first write sent after it")
	return runErr
}

// killInstant says what the kill instant is.
func (e *env) killInstant() string {
	if e.cfg.KillLeaderPIDFile != "" {
		return "the return of the bench's kill(2) of the pid in --kill-leader-pidfile"
	}
	return "the exit of --kill-leader-cmd"
}

// failovers runs the kill rounds and returns a sample for each completed
// one.
func (e *env) failovers(ctx context.Context, tr *failoverTracker) ([]FailoverSample, error) {
	clk := e.clock
	var samples []FailoverSample
	for k := 1; k <= e.cfg.Failovers; k++ {
		s, err := e.failover(ctx, tr, clk)
		if err != nil {
			return samples, fmt.Errorf("bench: failover %d of %d: %w", k, e.cfg.Failovers, err)
		}
		samples = append(samples, s)
	}
	return samples, nil
}

// failover is one round: steady load, kill the leader, measure, restart.
// Each wait is bounded by failoverTimeout.
func (e *env) failover(ctx context.Context, tr *failoverTracker, clk Clock) (FailoverSample, error) {
	var s FailoverSample
	if err := awaitRecovery(ctx, tr, tr.start(clk.Now())); err != nil {
		return s, fmt.Errorf("before the kill: %w", err)
	}
	if err := sleepCtx(ctx, e.cfg.Duration); err != nil {
		return s, err
	}
	lctx, cancel := context.WithTimeout(ctx, failoverTimeout)
	leader, err := findLeader(lctx, e.members)
	cancel()
	if err != nil {
		return s, err
	}
	s.Leader = leader
	t0 := clk.Now()
	if err := e.control.Kill(ctx, leader); err != nil {
		return s, err
	}
	killed := clk.Now()
	s.killedAt = killed
	s.KillMs = millis(killed.Sub(t0))
	done := tr.start(killed)

	type found struct {
		addr string
		at   time.Time
		err  error
	}
	others := slices.DeleteFunc(slices.Clone(e.members), func(m string) bool { return m == leader })
	nctx, cancel := context.WithTimeout(ctx, failoverTimeout)
	defer cancel()
	newLeader := make(chan found, 1)
	go func() {
		a, err := findLeader(nctx, others)
		newLeader <- found{a, clk.Now(), err}
	}()
	if err := awaitRecovery(ctx, tr, done); err != nil {
		return s, fmt.Errorf("after killing %s: %w", leader, err)
	}
	first, all, _ := tr.recovery()
	s.FirstWriteMs, s.AllClientsMs = millis(first), millis(all)
	nl := <-newLeader
	if nl.err != nil {
		return s, nl.err
	}
	s.NewLeader, s.NewLeaderMs = nl.addr, millis(nl.at.Sub(killed))

	r0 := clk.Now()
	if err := e.control.Restart(ctx, leader); errors.Is(err, errNoRestart) {
		return s, nil
	} else if err != nil {
		return s, err
	}
	rctx, cancel := context.WithTimeout(ctx, failoverTimeout)
	defer cancel()
	if err := waitMode(rctx, leader, "follower"); err != nil {
		return s, err
	}
	s.RejoinMs = millis(clk.Now().Sub(r0))
	return s, nil
}

// awaitRecovery waits, for at most failoverTimeout, until every session
// has written since the tracker's mark (done is closed).
func awaitRecovery(ctx context.Context, tr *failoverTracker, done <-chan struct{}) error {
	t := time.NewTimer(failoverTimeout)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		_, _, n := tr.recovery()
		return fmt.Errorf("%d of %d sessions got no write acknowledged in %v", tr.sessions()-n, tr.sessions(), failoverTimeout)
	}
}

// failoverMetrics summarises the samples.
func (e *env) failoverMetrics(samples []FailoverSample) {
	if len(samples) == 0 {
		return
	}
	pick := func(f func(FailoverSample) float64) []float64 {
		vs := make([]float64, 0, len(samples))
		for _, s := range samples {
			vs = append(vs, f(s))
		}
		return vs
	}
	for _, m := range []struct {
		name string
		vs   []float64
	}{
		{"failover: kill to first write", pick(func(s FailoverSample) float64 { return s.FirstWriteMs })},
		{"failover: kill to every client writing", pick(func(s FailoverSample) float64 { return s.AllClientsMs })},
	} {
		e.metric(m.name+", min", slices.Min(m.vs), "ms")
		e.metric(m.name+", median", median(m.vs), "ms")
		e.metric(m.name+", max", slices.Max(m.vs), "ms")
	}
	e.metric("failover: kill to new leader in srvr, median", median(pick(func(s FailoverSample) float64 { return s.NewLeaderMs })), "ms")
	if samples[0].RejoinMs > 0 {
		e.metric("failover: restart to follower, median", median(pick(func(s FailoverSample) float64 { return s.RejoinMs }))/1000, "s")
	}
	e.metric("failover: time the kill took, max", slices.Max(pick(func(s FailoverSample) float64 { return s.KillMs })), "ms")
}

func millis(d time.Duration) float64 { return round3(float64(d) / float64(time.Millisecond)) }

// writeLoad is the failover workload's steady writers.
type writeLoad struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	clk     Clock
	start   time.Time
	elapsed time.Duration
	stats   []workerStats
}

// startWrites starts cfg.Inflight writers per session: session c sets
// keys[c] over and over and reports each acknowledged write to tr.
func (e *env) startWrites(ctx context.Context, conns []*client.Conn, keys []string, tr *failoverTracker) *writeLoad {
	ctx, cancel := context.WithCancel(ctx)
	clk := e.clock
	l := &writeLoad{cancel: cancel, clk: clk, start: clk.Now(), stats: make([]workerStats, len(conns)*e.cfg.Inflight)}
	data := payload(e.cfg.Payload)
	for w := range l.stats {
		c := w % len(conns)
		st := &l.stats[w]
		st.hist = NewHistogram()
		l.wg.Go(func() {
			for ctx.Err() == nil {
				sent := clk.Now()
				_, err := conns[c].Set(ctx, keys[c], data, -1)
				acked := clk.Now()
				if err == nil {
					st.hist.Record(acked.Sub(sent))
					tr.ack(c, sent, acked)
					continue
				}
				if ctx.Err() != nil {
					return
				}
				if st.errors == 0 {
					st.firstErr = err
				}
				st.errors++
				if errors.Is(err, client.ErrSessionExpired) || errors.Is(err, client.ErrClosed) {
					return // the session is gone: the round times out and says so
				}
				sleepCtx(ctx, failoverErrorPause)
			}
		})
	}
	return l
}

// stop stops the writers and waits for them.
func (l *writeLoad) stop() {
	l.cancel()
	l.wg.Wait()
	l.elapsed = l.clk.Now().Sub(l.start)
}

func (l *writeLoad) hist() *Histogram {
	all := NewHistogram()
	for _, st := range l.stats {
		all.Merge(st.hist)
	}
	return all
}

func (l *writeLoad) errors() int64 {
	var n int64
	for _, st := range l.stats {
		n += st.errors
	}
	return n
}

func (l *writeLoad) firstError() string {
	for _, st := range l.stats {
		if st.firstErr != nil {
			return st.firstErr.Error()
		}
	}
	return ""
}
