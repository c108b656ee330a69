package console

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/wardenzk/warden/client"
)

// Errors of the console's client sessions.
var (
	// errLoginLimit: every login slot is in use by a request right now.
	errLoginLimit = errors.New("console: too many console logins at once; try again in a moment, or raise Options.MaxLogins")
	// errShutdown: the console is closed.
	errShutdown = errors.New("console: shutting down")
)

// pool holds the console's ZooKeeper sessions, all to the server's own
// client address: one shared anonymous session (world identity) for the
// reads of viewers who are not logged in, and one session per login,
// authenticated with addAuth("digest", user:password) at login and
// found again by the login's random token (the session cookie).
//
// A login lives until logout, until it was unused for idle, or until it
// is the least recently used one when a new login needs its slot; its
// session is closed then. Idle logins are reaped lazily, on the next
// login or acquire, so the pool needs no goroutine. Passwords are not
// kept: the client session remembers its credentials for its reconnects,
// and a login whose session ends must log in again.
type pool struct {
	addr    string
	timeout time.Duration // session timeout asked for
	idle    time.Duration
	max     int
	now     func() time.Time
	log     *slog.Logger

	worldMu sync.Mutex
	// world is the anonymous session, nil until first used or after it
	// ended (it is then made again).
	world *client.Conn

	mu sync.Mutex
	// logins by token. Invariant: len(logins) <= max.
	logins map[string]*login
	closed bool
}

// login is one logged-in viewer.
type login struct {
	token string
	user  string
	conn  *client.Conn
	// Guarded by pool.mu:
	lastUsed time.Time
	refs     int  // requests using conn now
	gone     bool // removed from the pool; close conn when refs drops to 0
}

func newPool(addr string, timeout, idle time.Duration, max int, now func() time.Time, log *slog.Logger) *pool {
	return &pool{addr: addr, timeout: timeout, idle: idle, max: max, now: now, log: log, logins: map[string]*login{}}
}

// anonymous returns the shared world-identity session, connecting it
// first when needed.
func (p *pool) anonymous(ctx context.Context) (*client.Conn, error) {
	p.worldMu.Lock()
	defer p.worldMu.Unlock()
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, errShutdown
	}
	if p.world != nil && terminal(p.world.State()) {
		p.world.Close()
		p.world = nil
	}
	if p.world == nil {
		c, err := client.Connect(ctx, p.addr, client.WithSessionTimeout(p.timeout), client.WithLogger(p.log))
		if err != nil {
			return nil, fmt.Errorf("console: connect to the server's client address %s: %w", p.addr, err)
		}
		p.world = c
	}
	return p.world, nil
}

// terminal reports whether a session state is final.
func terminal(s client.State) bool {
	return s == client.StateExpired || s == client.StateAuthFailed || s == client.StateClosed
}

// login opens a session authenticated as user:password and returns its
// token. Digest credentials are not checked by ZooKeeper (any
// user:password is an identity; ACLs decide what it may do), so login
// fails only when the server cannot be reached or refuses the session.
func (p *pool) login(ctx context.Context, user, password string) (*login, error) {
	c, err := client.Connect(ctx, p.addr, client.WithSessionTimeout(p.timeout), client.WithLogger(p.log))
	if err != nil {
		return nil, fmt.Errorf("console: connect to the server's client address %s: %w", p.addr, err)
	}
	if err := c.AddAuth(ctx, "digest", []byte(user+":"+password)); err != nil {
		c.Close()
		return nil, fmt.Errorf("console: addAuth digest for %q: %w", user, err)
	}
	l := &login{token: newToken(), user: user, conn: c}

	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close()
		return nil, errShutdown
	}
	now := p.now()
	drop := p.reapLocked(now)
	if len(p.logins) >= p.max {
		var lru *login
		for _, o := range p.logins {
			if o.refs == 0 && (lru == nil || o.lastUsed.Before(lru.lastUsed)) {
				lru = o
			}
		}
		if lru == nil {
			p.mu.Unlock()
			closeAll(drop)
			c.Close()
			return nil, errLoginLimit
		}
		drop = append(drop, p.removeLocked(lru)...)
	}
	l.lastUsed = now
	p.logins[l.token] = l
	p.mu.Unlock()
	closeAll(drop)
	return l, nil
}

// acquire finds the login of token and marks it in use; release must be
// called when the request is done. It returns nil when the token names
// no live login (never issued, logged out, idle too long, or its session
// ended).
func (p *pool) acquire(token string) (l *login, release func()) {
	p.mu.Lock()
	drop := p.reapLocked(p.now())
	l = p.logins[token]
	if l != nil && terminal(l.conn.State()) {
		drop = append(drop, p.removeLocked(l)...)
		l = nil
	}
	if l != nil {
		l.refs++
		l.lastUsed = p.now()
	}
	p.mu.Unlock()
	closeAll(drop)
	if l == nil {
		return nil, func() {}
	}
	return l, func() {
		p.mu.Lock()
		l.refs--
		l.lastUsed = p.now()
		var drop []*client.Conn
		if l.gone && l.refs == 0 {
			drop = []*client.Conn{l.conn}
		}
		p.mu.Unlock()
		closeAll(drop)
	}
}

// logout ends the login of token, if any.
func (p *pool) logout(token string) {
	p.mu.Lock()
	var drop []*client.Conn
	if l := p.logins[token]; l != nil {
		drop = p.removeLocked(l)
	}
	p.mu.Unlock()
	closeAll(drop)
}

// reapLocked removes the logins unused for longer than idle and returns
// the sessions to close once the lock is released.
func (p *pool) reapLocked(now time.Time) []*client.Conn {
	var drop []*client.Conn
	for _, l := range p.logins {
		if l.refs == 0 && now.Sub(l.lastUsed) > p.idle {
			drop = append(drop, p.removeLocked(l)...)
		}
	}
	return drop
}

// removeLocked takes l out of the pool and returns its session to close
// when no request uses it.
func (p *pool) removeLocked(l *login) []*client.Conn {
	delete(p.logins, l.token)
	l.gone = true
	if l.refs == 0 {
		return []*client.Conn{l.conn}
	}
	return nil
}

// owners names the console's own sessions, by session id: "anonymous"
// for the shared one, the user for a login.
func (p *pool) owners() map[int64]string {
	out := map[int64]string{}
	p.worldMu.Lock()
	if p.world != nil {
		out[p.world.SessionID()] = "anonymous"
	}
	p.worldMu.Unlock()
	p.mu.Lock()
	for _, l := range p.logins {
		out[l.conn.SessionID()] = l.user
	}
	p.mu.Unlock()
	return out
}

// count is the number of logins in the pool.
func (p *pool) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.logins)
}

// close ends every session. Requests still using a login's session see
// it closed.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	var drop []*client.Conn
	for _, l := range p.logins {
		delete(p.logins, l.token)
		l.gone = true
		drop = append(drop, l.conn)
	}
	p.mu.Unlock()
	p.worldMu.Lock()
	if p.world != nil {
		drop = append(drop, p.world)
		p.world = nil
	}
	p.worldMu.Unlock()
	closeAll(drop)
}

func closeAll(cs []*client.Conn) {
	for _, c := range cs {
		c.Close()
	}
}

// newToken is a login's random token (128 bits, base32).
func newToken() string { return rand.Text() }
