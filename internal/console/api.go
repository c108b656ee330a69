package console

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/internal/status"
	"github.com/wardenzk/warden/wire"
)

// cookieName is the login cookie: the token of a login in the pool.
const cookieName = "warden_console"

// csrfHeader must be on every state-changing request. A page of another
// origin cannot send a custom header without a CORS preflight, which the
// console never grants.
const csrfHeader = "X-Warden-Console"

// maxBody bounds a request body: 1 MiB of data (jute.maxbuffer's
// default), base64 and JSON around it.
const maxBody = 2 << 20

// maxChildren bounds the children one listing returns.
const maxChildren = 1000

// apiError is the body of every error reply.
type apiError struct {
	Error string `json:"error"`
	// Code is ZooKeeper's error name when the error came from the server
	// ("NoAuth", "NoNode", ...).
	Code string `json:"code,omitempty"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, apiError{Error: msg})
}

// zkErrors maps the server's errors to HTTP: status, ZooKeeper's name,
// and what to tell the viewer.
var zkErrors = []struct {
	err    error
	status int
	name   string
	msg    string
}{
	{wire.ErrNoNode, http.StatusNotFound, "NoNode", "the node does not exist (deleted meanwhile?)"},
	{wire.ErrNoAuth, http.StatusForbidden, "NoAuth", "the node's ACL does not allow this to your identity (log in as one it allows)"},
	{wire.ErrBadVersion, http.StatusConflict, "BadVersion", "the node changed since you loaded it; reload and try again"},
	{wire.ErrNodeExists, http.StatusConflict, "NodeExists", "a node with this path exists already"},
	{wire.ErrNotEmpty, http.StatusConflict, "NotEmpty", "the node has children; delete them first"},
	{wire.ErrNoChildrenForEphemerals, http.StatusConflict, "NoChildrenForEphemerals", "ephemeral nodes cannot have children"},
	{wire.ErrInvalidACL, http.StatusBadRequest, "InvalidACL", "the ACL is not valid (creator ACLs need a login)"},
	{wire.ErrBadArguments, http.StatusBadRequest, "BadArguments", "the server refused the arguments (path or data too large?)"},
	{wire.ErrQuotaExceeded, http.StatusConflict, "QuotaExceeded", "the write would exceed the subtree's quota"},
	{wire.ErrConnectionLoss, http.StatusServiceUnavailable, "ConnectionLoss", "the console lost its connection to the server; try again"},
	{wire.ErrSessionExpired, http.StatusServiceUnavailable, "SessionExpired", "the console's session expired; log in again"},
	{client.ErrClosed, http.StatusServiceUnavailable, "", "the console is shutting down"},
	{errShutdown, http.StatusServiceUnavailable, "", "the console is shutting down"},
	{errLoginLimit, http.StatusServiceUnavailable, "", errLoginLimit.Error()},
	{context.DeadlineExceeded, http.StatusGatewayTimeout, "", "the server did not answer in time; is it serving?"},
}

// writeZKErr answers with the HTTP status of a failed ZooKeeper call.
func writeZKErr(w http.ResponseWriter, op, path string, err error) {
	for _, e := range zkErrors {
		if errors.Is(err, e.err) {
			writeJSON(w, e.status, apiError{Error: fmt.Sprintf("%s %s: %s", op, path, e.msg), Code: e.name})
			return
		}
	}
	writeJSON(w, http.StatusBadGateway, apiError{Error: fmt.Sprintf("%s %s: %v", op, path, err)})
}

// ctx bounds the ZooKeeper calls of one request.
func (c *Console) ctx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), c.opts.RequestTimeout)
}

// conn returns the session a request reads through: the viewer's login
// when the cookie names a live one, the anonymous session otherwise.
// release must be called when done.
func (c *Console) conn(ctx context.Context, r *http.Request) (conn *client.Conn, user string, release func(), err error) {
	if ck, err := r.Cookie(cookieName); err == nil {
		if l, rel := c.pool.acquire(ck.Value); l != nil {
			return l.conn, l.user, rel, nil
		}
	}
	conn, err = c.pool.anonymous(ctx)
	return conn, "", func() {}, err
}

// sameOrigin rejects requests that a page of another origin could have
// made: the custom header must be present, and Origin (or Sec-Fetch-Site)
// when the browser sends it must say same origin.
func sameOrigin(r *http.Request) error {
	if r.Header.Get(csrfHeader) == "" {
		return fmt.Errorf("missing the %s header: state-changing requests must come from the console page (scripts: add %s: 1)", csrfHeader, csrfHeader)
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return fmt.Errorf("cross-site request refused (Sec-Fetch-Site: %s)", site)
	}
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return fmt.Errorf("cross-origin request refused (Origin %s, Host %s)", o, r.Host)
		}
	}
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			return fmt.Errorf("the body must be JSON (Content-Type: application/json), not %q", ct)
		}
	}
	return nil
}

// write wraps a state-changing endpoint: same origin, and a login. Writes
// without a login are refused whatever the node's ACL says, so anonymous
// viewers can only look.
func (c *Console) write(h func(w http.ResponseWriter, r *http.Request, conn *client.Conn, user string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := sameOrigin(r); err != nil {
			writeErr(w, http.StatusForbidden, err.Error())
			return
		}
		ck, err := r.Cookie(cookieName)
		if err != nil {
			writeErr(w, http.StatusUnauthorized, "read-only: log in with a digest identity (user:password) to change nodes")
			return
		}
		l, release := c.pool.acquire(ck.Value)
		defer release()
		if l == nil {
			writeErr(w, http.StatusUnauthorized, "your login ended (logged out, idle too long, or its session closed): log in again")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h(w, r, l.conn, l.user)
	}
}

// me is who the viewer is.
type me struct {
	User     string `json:"user"`
	Writable bool   `json:"writable"`
	Server   string `json:"server"`
	Mode     string `json:"mode"`
}

func (c *Console) handleMe(w http.ResponseWriter, r *http.Request) {
	m := me{Server: c.opts.ClientAddr, Mode: c.srv.Mode()}
	if ck, err := r.Cookie(cookieName); err == nil {
		if l, release := c.pool.acquire(ck.Value); l != nil {
			m.User, m.Writable = l.user, true
			release()
		}
	}
	writeJSON(w, http.StatusOK, m)
}

type loginRequest struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

func (c *Console) handleLogin(w http.ResponseWriter, r *http.Request) {
	if err := sameOrigin(r); err != nil {
		writeErr(w, http.StatusForbidden, err.Error())
		return
	}
	var req loginRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		writeErr(w, http.StatusBadRequest, "login: want JSON {\"user\": ..., \"password\": ...}: "+err.Error())
		return
	}
	if req.User == "" || req.Password == "" || strings.Contains(req.User, ":") {
		writeErr(w, http.StatusBadRequest, "login: give a user (without ':') and a password: the digest identity user:password")
		return
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	if ck, err := r.Cookie(cookieName); err == nil {
		c.pool.logout(ck.Value)
	}
	l, err := c.pool.login(ctx, req.User, req.Password)
	if err != nil {
		writeZKErr(w, "login", req.User, err)
		return
	}
	c.log.Info("console login", "user", req.User, "remote", r.RemoteAddr)
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: l.token, Path: c.opts.Prefix,
		HttpOnly: true, Secure: c.opts.SecureCookie, SameSite: http.SameSiteStrictMode,
	})
	writeJSON(w, http.StatusOK, me{User: l.user, Writable: true, Server: c.opts.ClientAddr, Mode: c.srv.Mode()})
}

func (c *Console) handleLogout(w http.ResponseWriter, r *http.Request) {
	if err := sameOrigin(r); err != nil {
		writeErr(w, http.StatusForbidden, err.Error())
		return
	}
	if ck, err := r.Cookie(cookieName); err == nil {
		c.pool.logout(ck.Value)
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: "", Path: c.opts.Prefix, MaxAge: -1,
		HttpOnly: true, Secure: c.opts.SecureCookie, SameSite: http.SameSiteStrictMode,
	})
	writeJSON(w, http.StatusOK, me{Server: c.opts.ClientAddr, Mode: c.srv.Mode()})
}

// queryPath reads and checks the path parameter.
func queryPath(r *http.Request) (string, error) {
	p := r.URL.Query().Get("path")
	if p == "" {
		return "", errNoPath
	}
	return p, checkPath(p)
}

// checkPath accepts absolute znode paths: no empty, "." or ".."
// component, no trailing slash (except "/"), no NUL.
func checkPath(p string) error {
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("path %q must start with /", p)
	}
	if p == "/" {
		return nil
	}
	if strings.HasSuffix(p, "/") {
		return fmt.Errorf("path %q must not end with /", p)
	}
	if strings.ContainsRune(p, 0) {
		return fmt.Errorf("path %q contains a NUL character", p)
	}
	for _, part := range strings.Split(p[1:], "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("path %q has an empty, '.' or '..' component", p)
		}
	}
	return nil
}

// child is one entry of a children listing. Locked: the viewer may not
// read it (its counts are then -1).
type child struct {
	Name        string `json:"name"`
	Path        string `json:"path"`
	NumChildren int32  `json:"numChildren"`
	DataLength  int32  `json:"dataLength"`
	Ephemeral   bool   `json:"ephemeral"`
	Locked      bool   `json:"locked"`
}

type childrenReply struct {
	Path      string  `json:"path"`
	Children  []child `json:"children"`
	Total     int     `json:"total"`
	Truncated bool    `json:"truncated"`
}

func (c *Console) handleChildren(w http.ResponseWriter, r *http.Request) {
	path, err := queryPath(r)
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	conn, _, release, err := c.conn(ctx, r)
	if err != nil {
		writeZKErr(w, "children", path, err)
		return
	}
	defer release()
	names, _, err := conn.Children(ctx, path)
	if err != nil {
		writeZKErr(w, "children", path, err)
		return
	}
	slices.Sort(names)
	rep := childrenReply{Path: path, Children: []child{}, Total: len(names)}
	if len(names) > maxChildren {
		names, rep.Truncated = names[:maxChildren], true
	}
	for _, n := range names {
		p := join(path, n)
		st, ok, err := conn.Exists(ctx, p)
		switch {
		case errors.Is(err, wire.ErrNoAuth):
			rep.Children = append(rep.Children, child{Name: n, Path: p, NumChildren: -1, DataLength: -1, Locked: true})
			continue
		case err != nil:
			writeZKErr(w, "exists", p, err)
			return
		case !ok:
			continue // deleted since the listing
		}
		rep.Children = append(rep.Children, child{Name: n, Path: p, NumChildren: st.NumChildren, DataLength: st.DataLength, Ephemeral: st.EphemeralOwner != 0})
	}
	writeJSON(w, http.StatusOK, rep)
}

// nodeReply is a node: stat, ACL and data. ACLError says why the ACL is
// missing when the viewer may read the node but not its ACL.
type nodeReply struct {
	Path     string    `json:"path"`
	Stat     statView  `json:"stat"`
	Data     *dataView `json:"data"`
	ACL      []aclView `json:"acl"`
	ACLError string    `json:"aclError,omitempty"`
}

func (c *Console) handleGetNode(w http.ResponseWriter, r *http.Request) {
	path, err := queryPath(r)
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	conn, _, release, err := c.conn(ctx, r)
	if err != nil {
		writeZKErr(w, "get", path, err)
		return
	}
	defer release()
	rep := nodeReply{Path: path, ACL: []aclView{}}
	// exists and getData both need READ (ZooKeeper's rule): a node the
	// viewer may not read is a 403, stat included.
	data, st, err := conn.Get(ctx, path)
	if err != nil {
		writeZKErr(w, "get", path, err)
		return
	}
	v := viewData(data)
	rep.Data = &v
	rep.Stat = viewStat(st)
	acl, _, err := conn.GetACL(ctx, path)
	switch {
	case errors.Is(err, wire.ErrNoAuth):
		rep.ACLError = "no permission to read this node's ACL"
	case err != nil:
		writeZKErr(w, "getACL", path, err)
		return
	default:
		rep.ACL = viewACL(acl)
	}
	writeJSON(w, http.StatusOK, rep)
}

// writeRequest is the body of a create (POST) or set (PUT).
type writeRequest struct {
	Path string `json:"path"`
	Data string `json:"data"`
	// Encoding of Data: "text" (default, UTF-8) or "base64".
	Encoding string `json:"encoding"`
	// Version expected by set; -1 (or absent) for any.
	Version *int32 `json:"version"`
	// Mode of create: "persistent" (default), "persistent_sequential" or
	// "container".
	Mode string `json:"mode"`
	// ACL of create: "open" (default: world:anyone cdrwa), "creator"
	// (auth, all permissions, for the login's identity only) or "read"
	// (world:anyone r).
	ACL string `json:"acl"`
}

func decodeWrite(r *http.Request) (writeRequest, []byte, error) {
	var req writeRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		return req, nil, fmt.Errorf("want a JSON body {\"path\", \"data\", ...}: %w", err)
	}
	if err := checkPath(req.Path); err != nil {
		return req, nil, err
	}
	switch req.Encoding {
	case "", "text":
		return req, []byte(req.Data), nil
	case "base64":
		b, err := base64.StdEncoding.DecodeString(req.Data)
		if err != nil {
			return req, nil, fmt.Errorf("data is not valid base64: %w", err)
		}
		return req, b, nil
	}
	return req, nil, fmt.Errorf("unknown encoding %q (want text or base64)", req.Encoding)
}

// written is the reply to a write.
type written struct {
	Path string   `json:"path"`
	Stat statView `json:"stat"`
}

func (c *Console) handleSetNode(w http.ResponseWriter, r *http.Request, conn *client.Conn, user string) {
	req, data, err := decodeWrite(r)
	if err != nil {
		writeErr(w, http.StatusBadRequest, "set: "+err.Error())
		return
	}
	version := int32(-1)
	if req.Version != nil {
		version = *req.Version
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	st, err := conn.Set(ctx, req.Path, data, version)
	if err != nil {
		writeZKErr(w, "set", req.Path, err)
		return
	}
	c.log.Info("console set", "user", user, "path", req.Path, "bytes", len(data))
	writeJSON(w, http.StatusOK, written{Path: req.Path, Stat: viewStat(st)})
}

func (c *Console) handleCreateNode(w http.ResponseWriter, r *http.Request, conn *client.Conn, user string) {
	req, data, err := decodeWrite(r)
	if err != nil {
		writeErr(w, http.StatusBadRequest, "create: "+err.Error())
		return
	}
	var acl []wire.ACL
	switch req.ACL {
	case "", "open":
		acl = client.OpenACL
	case "creator":
		acl = client.CreatorAllACL
	case "read":
		acl = client.ReadACL
	default:
		writeErr(w, http.StatusBadRequest, fmt.Sprintf("create: unknown acl %q (want open, creator or read)", req.ACL))
		return
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	var (
		path string
		st   wire.Stat
	)
	switch req.Mode {
	case "", "persistent":
		path, st, err = conn.CreateStat(ctx, req.Path, data, client.Persistent, acl)
	case "persistent_sequential":
		path, st, err = conn.CreateStat(ctx, req.Path, data, client.PersistentSequential, acl)
	case "container":
		path, st, err = conn.CreateContainer(ctx, req.Path, data, acl)
	default:
		writeErr(w, http.StatusBadRequest, fmt.Sprintf("create: unknown mode %q (want persistent, persistent_sequential or container)", req.Mode))
		return
	}
	if err != nil {
		writeZKErr(w, "create", req.Path, err)
		return
	}
	c.log.Info("console create", "user", user, "path", path)
	writeJSON(w, http.StatusCreated, written{Path: path, Stat: viewStat(st)})
}

func (c *Console) handleDeleteNode(w http.ResponseWriter, r *http.Request, conn *client.Conn, user string) {
	path, err := queryPath(r)
	if err == nil && path == "/" {
		err = errors.New("the root node cannot be deleted")
	}
	if err != nil {
		writeErr(w, http.StatusBadRequest, "delete: "+err.Error())
		return
	}
	version := int64(-1)
	if v := r.URL.Query().Get("version"); v != "" {
		if version, err = strconv.ParseInt(v, 10, 32); err != nil {
			writeErr(w, http.StatusBadRequest, "delete: version must be a number (-1 for any)")
			return
		}
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	if err := conn.Delete(ctx, path, int32(version)); err != nil {
		writeZKErr(w, "delete", path, err)
		return
	}
	c.log.Info("console delete", "user", user, "path", path)
	w.WriteHeader(http.StatusNoContent)
}

func (c *Console) handleSearch(w http.ResponseWriter, r *http.Request) {
	path, err := queryPath(r)
	if errors.Is(err, errNoPath) {
		path, err = "/", nil
	}
	q := r.URL.Query().Get("q")
	if err == nil && q == "" {
		err = errors.New("give the text to look for in q")
	}
	if err != nil {
		writeErr(w, http.StatusBadRequest, "search: "+err.Error())
		return
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	conn, _, release, err := c.conn(ctx, r)
	if err != nil {
		writeZKErr(w, "search", path, err)
		return
	}
	defer release()
	res, err := search(ctx, path, q, c.opts.SearchMaxNodes, c.opts.SearchMaxMatches, func(ctx context.Context, p string) ([]string, error) {
		kids, _, err := conn.Children(ctx, p)
		return kids, err
	})
	if err != nil {
		writeZKErr(w, "search", path, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// sessionView is one session for the sessions view.
type sessionView struct {
	ID                string   `json:"id"`
	TimeoutMs         int64    `json:"timeoutMs"`
	Owner             int64    `json:"owner"`
	Local             bool     `json:"local"`
	ExpiresInMs       *int64   `json:"expiresInMs"`
	Remote            string   `json:"remote"`
	Ephemerals        []string `json:"ephemerals"`
	DataWatches       []string `json:"dataWatches"`
	ChildWatches      []string `json:"childWatches"`
	PersistentWatches []string `json:"persistentWatches"`
	RecursiveWatches  []string `json:"recursiveWatches"`
	// Console names the console's own sessions: "anonymous" or the
	// logged-in user; "" for every other client.
	Console string `json:"console,omitempty"`
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (c *Console) handleSessions(w http.ResponseWriter, r *http.Request) {
	now := c.opts.Now()
	own := c.pool.owners()
	out := []sessionView{}
	for _, s := range c.srv.Sessions() {
		v := sessionView{
			ID: hex64(s.ID), TimeoutMs: s.Timeout.Milliseconds(), Owner: s.Owner, Local: s.Local, Remote: s.Remote,
			Ephemerals: nonNil(s.Ephemerals), DataWatches: nonNil(s.DataWatches), ChildWatches: nonNil(s.ChildWatches),
			PersistentWatches: nonNil(s.PersistentWatches), RecursiveWatches: nonNil(s.RecursiveWatches),
			Console: own[s.ID],
		}
		if s.Local && !s.ExpireAt.IsZero() {
			ms := max(s.ExpireAt.Sub(now).Milliseconds(), 0)
			v.ExpiresInMs = &ms
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out, "member": c.opts.ClientAddr})
}

// memberView is one member's row of the ensemble view.
type memberView struct {
	Addr        string `json:"addr"`
	Self        bool   `json:"self"`
	State       string `json:"state"`
	Mode        string `json:"mode"`
	Zxid        string `json:"zxid"`
	Lag         string `json:"lag"`
	Connections int64  `json:"connections"`
	Outstanding int64  `json:"outstanding"`
	Nodes       int64  `json:"nodes"`
	Version     string `json:"version"`
	Error       string `json:"error,omitempty"`
}

type ensembleView struct {
	Members []memberView `json:"members"`
	Leader  string       `json:"leader"`
	Quorum  bool         `json:"quorum"`
	OK      bool         `json:"ok"`
}

func (c *Console) handleEnsemble(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), c.opts.RequestTimeout)
	defer cancel()
	found, err := status.Check(ctx, status.Config{Members: c.opts.Members, Timeout: min(c.opts.RequestTimeout, 3*time.Second)})
	if err != nil {
		writeErr(w, http.StatusInternalServerError, "ensemble: "+err.Error())
		return
	}
	rep := status.Summarize(found)
	out := ensembleView{Members: []memberView{}, Leader: rep.Leader(), Quorum: rep.Quorum, OK: rep.OK}
	for _, row := range rep.Rows {
		m := memberView{Addr: row.Addr, Self: row.Addr == c.opts.ClientAddr, State: string(row.State), Mode: row.ModeText(),
			Lag: row.Lag.String(), Connections: -1, Outstanding: -1, Nodes: -1, Error: row.Error}
		if row.State == status.StateServing {
			if row.Srvr.HasZxid {
				m.Zxid = row.Srvr.Zxid.String()
			}
			m.Connections, m.Outstanding, m.Nodes, m.Version = row.Srvr.Connections, row.Srvr.Outstanding, row.Srvr.Nodes, row.Srvr.Version
		}
		out.Members = append(out.Members, m)
	}
	writeJSON(w, http.StatusOK, out)
}

// statsReply feeds the charts: the samples (oldest first) and the latest
// mntr values.
type statsReply struct {
	IntervalMs int64          `json:"intervalMs"`
	Samples    []sample       `json:"samples"`
	Monitor    map[string]any `json:"monitor"`
}

func (c *Console) handleStats(w http.ResponseWriter, r *http.Request) {
	c.histMu.Lock()
	samples := c.hist.snapshot()
	c.histMu.Unlock()
	mon := map[string]any{}
	for _, m := range c.srv.Monitor() {
		mon[m.Name] = m.Value
	}
	writeJSON(w, http.StatusOK, statsReply{IntervalMs: c.opts.SampleInterval.Milliseconds(), Samples: nonNilSamples(samples), Monitor: mon})
}

func nonNilSamples(s []sample) []sample {
	if s == nil {
		return []sample{}
	}
	return s
}
