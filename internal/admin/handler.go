package admin

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// response is what a command answers: its fields, the HTTP status and
// headers, and for snapshot a body streamed instead of JSON.
type response struct {
	command string
	fields  object
	status  int
	headers http.Header
	// stream, when set, writes the body instead of the JSON fields.
	stream func(w io.Writer) error
	// err is an error of the request as a whole (unknown command, not
	// serving, authentication), printed after "command" as ZooKeeper's
	// CommandResponse constructor places it; a command's own error is a
	// field ("error" put among the others).
	err *string
}

func newResponse(command string) *response {
	return &response{command: command, status: http.StatusOK, headers: http.Header{}}
}

// put sets a field of the reply.
func (r *response) put(key string, val any) { r.fields.set(key, val) }

// fail sets the reply's status and error.
func (r *response) fail(status int, format string, args ...any) {
	r.status = status
	msg := fmt.Sprintf(format, args...)
	r.err = &msg
}

// body is the JSON of the reply as ZooKeeper builds it
// (CommandResponse.toMap): the command's fields, then "command" and
// "error" unless the command set them itself (an error set by the command
// stays where it was put).
func (r *response) body() []byte {
	o := slices.Clone(r.fields)
	if !o.has("command") {
		o = append(o, member{"command", r.command})
	}
	if !o.has("error") {
		var e any
		if r.err != nil {
			e = *r.err
		}
		o = append(o, member{"error", e})
	}
	return marshal(o)
}

// request is what a command runs with.
type request struct {
	http  *http.Request
	query map[string]string // first value of each query parameter
	body  io.Reader         // POST body; nil for GET
}

// handler serves admin.commandURL and everything below it.
type handler struct {
	a  *Server
	st Settings
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost:
	case http.MethodTrace:
		// ZooKeeper's Jetty forbids TRACE on every path.
		w.WriteHeader(http.StatusForbidden)
		return
	case http.MethodOptions:
		w.Header().Set("Allow", "GET, HEAD, POST, OPTIONS")
		return
	default:
		w.Header().Set("Allow", "GET, HEAD, POST, OPTIONS")
		http.Error(w, "HTTP method "+r.Method+" is not supported by this URL: use GET, or POST for restore and shed_connections", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, h.a.commandURL), "/")
	if name == "" {
		h.writeLinks(w)
		return
	}
	req := &request{http: r, query: map[string]string{}}
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			req.query[k] = v[0]
		}
	}
	if r.Method == http.MethodPost {
		req.body = r.Body
	}
	resp := h.run(name, req)
	h.a.log.Debug("admin command", "command", name, "method", r.Method, "remote", r.RemoteAddr, "status", resp.status)
	for k, vs := range resp.headers {
		// Set as given: ZooKeeper's last_zxid and snapshot_size are
		// lower case, which Header.Add would canonicalise.
		w.Header()[k] = vs
	}
	if resp.stream != nil {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(resp.status)
		if r.Method == http.MethodHead {
			return
		}
		if err := resp.stream(w); err != nil {
			h.a.log.Warn("admin: streaming the reply failed", "command", resp.command, "remote", r.RemoteAddr, "err", err)
		}
		return
	}
	body := resp.body()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(resp.status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// writeLinks answers the command list: a link to each command by its
// primary name, in name order, as ZooKeeper's CommandListServlet does.
func (h *handler) writeLinks(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html;charset=utf-8")
	var b strings.Builder
	for _, c := range sortedCommands() {
		fmt.Fprintf(&b, "<a href=\"%s/%s\">%s</a>\n<br/>\n", h.a.commandURL, c.names[0], c.names[0])
	}
	io.WriteString(w, b.String())
}

// run finds and runs a command, after ZooKeeper's checks: known name,
// server serving, then authentication and authorisation.
func (h *handler) run(name string, req *request) *response {
	c := lookup(name)
	if c == nil {
		// ZooKeeper answers 200 and names the unknown command.
		resp := newResponse(name)
		resp.fail(http.StatusOK, "Unknown command: %s", name)
		return resp
	}
	resp := newResponse(c.names[0])
	if post := req.body != nil; post != c.post {
		want := "GET"
		if c.post {
			want = "POST"
		}
		resp.fail(http.StatusMethodNotAllowed, "%s answers %s only", c.names[0], want)
		return resp
	}
	if c.serverRequired && !h.a.srv.Running() {
		resp.fail(http.StatusOK, "This ZooKeeper instance is not currently serving requests")
		return resp
	}
	if c.auth && !h.authorize(req.http, resp) {
		return resp
	}
	c.run(h, req, resp)
	return resp
}
