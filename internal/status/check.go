package status

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultTimeout is Config.Timeout's default.
const DefaultTimeout = 2 * time.Second

// maxReply bounds the text read from one word's reply (mntr of a busy
// ZooKeeper is a few KiB).
const maxReply = 1 << 20

// Config says whom Check asks.
type Config struct {
	// Members are the members to ask, "host:port", in the order of the
	// report (ParseMembers reads them from the command line).
	Members []string
	// Timeout bounds all the questions to one member (srvr, then mntr),
	// from dialling to the end of the last reply. Default DefaultTimeout.
	Timeout time.Duration
	// Dial opens a connection. Default: a net.Dialer's DialContext.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Validate reports the first unusable setting.
func (c Config) Validate() error {
	if len(c.Members) == 0 {
		return errors.New("status: no members to ask (want host:port[,host:port...])")
	}
	if c.Timeout < 0 {
		return errors.New("status: negative timeout")
	}
	for _, m := range c.Members {
		if _, _, err := net.SplitHostPort(m); err != nil {
			return fmt.Errorf("status: member %q: %w", m, err)
		}
	}
	return nil
}

// ParseMembers reads members from command-line arguments: each argument is
// one member or a comma-separated list, a ZooKeeper connect string is
// accepted (its "/chroot" is ignored), and a member without a port gets
// 2181. The order is kept; an empty member is an error.
func ParseMembers(args []string) ([]string, error) {
	var out []string
	for _, arg := range args {
		if i := strings.IndexByte(arg, '/'); i >= 0 {
			arg = arg[:i]
		}
		for _, m := range strings.Split(arg, ",") {
			m = strings.TrimSpace(m)
			if m == "" {
				return nil, fmt.Errorf("status: empty member in %q", arg)
			}
			_, port, err := net.SplitHostPort(m)
			switch {
			case err == nil && port == "":
				return nil, fmt.Errorf("status: member %q has no port", m)
			case err != nil && strings.Count(m, ":") > 1 && !strings.HasPrefix(m, "["):
				return nil, fmt.Errorf("status: member %q: write an IPv6 address as [addr]:port", m)
			case err != nil:
				m = net.JoinHostPort(strings.Trim(m, "[]"), "2181")
			}
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("status: no members to ask (want host:port[,host:port...])")
	}
	return out, nil
}

// Check asks every member of cfg, in parallel, for srvr and, when it is
// serving, mntr; each member within cfg.Timeout. It returns one Member per
// cfg.Members, in order, for Summarize. A member that refuses mntr has
// MntrErr ErrNotAllowed and is otherwise reported from srvr. Cancelling ctx
// ends every question at once.
func Check(ctx context.Context, cfg Config) ([]Member, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Dial == nil {
		cfg.Dial = (&net.Dialer{}).DialContext
	}
	out := make([]Member, len(cfg.Members))
	var wg sync.WaitGroup
	for i, addr := range cfg.Members {
		wg.Go(func() { out[i] = checkMember(ctx, cfg, addr) })
	}
	wg.Wait()
	return out, nil
}

// checkMember asks one member srvr, then mntr.
func checkMember(ctx context.Context, cfg Config, addr string) Member {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	m := Member{Addr: addr}
	text, err := ask(ctx, cfg.Dial, addr, "srvr")
	if err == nil {
		m.Srvr, err = ParseSrvr(text)
	}
	if err != nil {
		m.Err = explain(ctx, err, cfg.Timeout)
		return m
	}
	text, err = ask(ctx, cfg.Dial, addr, "mntr")
	if err == nil {
		m.Mntr, err = ParseMntr(text)
	}
	if err != nil {
		m.MntrErr = explain(ctx, err, cfg.Timeout)
	}
	return m
}

// ask sends a four-letter word on a new connection and returns the reply:
// everything the server writes before it closes the connection.
func ask(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), addr, word string) (string, error) {
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	// Cancelling ctx unblocks the read and write below.
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := io.WriteString(c, word); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(c, maxReply))
	if err != nil && !(len(b) > 0 && errors.Is(err, syscall.ECONNRESET)) {
		// A reset after the reply is a server closing with our bytes
		// unread; anything else loses (part of) the reply.
		return "", err
	}
	return string(b), nil
}

// explain makes a timeout or an interruption (ctx, the member's context,
// is done) say so plainly; other errors are kept.
func explain(ctx context.Context, err error, timeout time.Duration) error {
	var ne net.Error
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return errors.New("interrupted")
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("no answer within %v", timeout)
	}
	return err
}
