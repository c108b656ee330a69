package admin

import (
	"net"
	"net/http"
	"strings"

	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/wire"
)

// authorize checks a command that needs ALL on the root (snapshot,
// restore, shed_connections) as ZooKeeper 3.9 does. The Authorization
// header is "<scheme> <auth>":
//
//	Authorization: digest bob:secret     (the digest scheme's user:password)
//	Authorization: ip                     (the client's address)
//
// The identities it yields must be granted every bit of ALL by the root's
// ACL, or be super (superDigest). It fills resp and returns false when the
// request may not run: 401 without or with bad credentials, 403 when the
// identity lacks a permission.
func (h *handler) authorize(r *http.Request, resp *response) bool {
	info, ok := r.Header["Authorization"]
	if !ok || len(info) == 0 {
		resp.fail(http.StatusUnauthorized, "Auth info is missing for the command")
		return false
	}
	ids := h.authenticate(r, info[0])
	if len(ids) == 0 {
		h.a.log.Info("admin: authentication failed", "command", resp.command, "remote", r.RemoteAddr)
		resp.fail(http.StatusUnauthorized, "Not authenticated")
		return false
	}
	acl, ok := h.a.srv.ACL("/")
	if !ok {
		resp.fail(http.StatusInternalServerError, "Error occurred during auth")
		return false
	}
	caller := tree.Caller{IDs: ids}
	cfg := h.a.srv.Config()
	for _, bit := range []wire.Perm{wire.PermRead, wire.PermWrite, wire.PermCreate, wire.PermDelete, wire.PermAdmin} {
		if !tree.MatchACL(acl, bit, caller, cfg.SkipACL) {
			h.a.log.Info("admin: not authorized", "command", resp.command, "remote", r.RemoteAddr, "missing_perm", bit)
			resp.fail(http.StatusForbidden, "Not authorized")
			return false
		}
	}
	return true
}

// authenticate returns the identities an Authorization value proves, none
// when it proves nothing. ZooKeeper splits the value on single spaces and
// wants one or two parts: the scheme and, for digest, "user:password".
func (h *handler) authenticate(r *http.Request, info string) []wire.ID {
	parts := strings.Split(info, " ")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1] // Java's split drops trailing empties
	}
	if len(parts) != 1 && len(parts) != 2 {
		return nil
	}
	cfg := h.a.srv.Config()
	switch parts[0] {
	case "digest":
		if !cfg.DigestAuthEnabled || len(parts) != 2 {
			return nil
		}
		id := cfg.DigestAlg.ID(parts[1])
		ids := []wire.ID{{Scheme: "digest", ID: id}}
		if cfg.SuperDigest != "" && id == cfg.SuperDigest {
			ids = append(ids, wire.ID{Scheme: "super", ID: ""})
		}
		return ids
	case "ip":
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			return nil
		}
		return []wire.ID{{Scheme: "ip", ID: host}}
	}
	return nil
}
