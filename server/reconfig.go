package server

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wardenzk/warden/internal/config"
	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/node"
	"github.com/wardenzk/warden/wire"
)

// reconfigBody wraps a client's reconfig request for the log: the state
// machine needs the membership this member serves as the base of an
// incremental change while the log holds none (fsm.ReconfigRecord).
func (s *Server) reconfigBody(body []byte) []byte {
	return wire.Marshal(&fsm.ReconfigRecord{Request: body, Base: s.cfg.MembershipText()})
}

// membershipChanged runs under the state lock when a reconfig committed
// (or a snapshot or the recovered log brought a membership): the member
// notes whether it is still part of the ensemble, and the membership
// worker updates the peer transport and the configuration files.
func (s *Server) membershipChanged(m *fsm.Membership) {
	if m == nil {
		return
	}
	s.members.Store(m)
	in := slices.ContainsFunc(m.Servers, func(x config.Server) bool { return x.ID == s.id })
	switch was := s.removed.Swap(!in); {
	case !in && !was:
		s.log.Warn("a reconfig removed this member from the ensemble: it takes no new client, answers the clients still connected while it drains, then stops serving",
			"myid", s.id, "config_version", fmt.Sprintf("%x", int64(m.Version)))
		s.checkDrained()
	case in && was:
		s.log.Info("this member is part of the ensemble again", "myid", s.id, "config_version", fmt.Sprintf("%x", int64(m.Version)))
	}
	select {
	case s.membersWake <- struct{}{}:
	default:
	}
}

// raftMembersChanged is the node's RaftMembersChanged hook.
func (s *Server) raftMembersChanged() {
	s.checkDrained()
	select {
	case s.membersWake <- struct{}{}:
	default:
	}
}

// checkDrained closes every client connection of a removed member that is
// out of raft too (drained): it no longer learns of any write.
func (s *Server) checkDrained() {
	if !s.removed.Load() {
		return
	}
	v, l := s.RaftMembers()
	if slices.Contains(v, s.id) || slices.Contains(l, s.id) {
		return
	}
	if s.drained.Swap(true) {
		return
	}
	s.log.Error("this member was removed from the ensemble by a reconfig and has drained: it serves no client any more; to use it again, add it back with reconfig (emptying its data directory first if it stays out for long)", "myid", s.id)
	go func() {
		// After the entry's replies are queued (its proposer's own
		// among them): the apply holds the state lock until then.
		s.node.RLock()
		//lint:ignore SA2001 the lock is the barrier: taken once the apply in progress released it
		s.node.RUnlock()
		s.closeAllAfterFlush("this member was removed from the ensemble")
	}()
}

// Removed reports whether a reconfig removed this member from the
// ensemble: it then takes no new client (and, once drained, serves
// none).
func (s *Server) Removed() bool { return s.removed.Load() }

// membershipLoop applies the newest committed membership outside the
// state lock, in order: the peer transport learns the members' quorum
// addresses, and the dynamic config file and zoo.cfg are rewritten as
// ZooKeeper rewrites them.
//
// A member the change removed stays a peer for departedGrace more, so the
// leader's last messages reach it (replica's farewell) and it learns that
// it is out.
func (s *Server) membershipLoop() {
	defer s.wg.Done()
	var done *fsm.Membership
	peers := s.peerAddrs(s.cfg.Servers) // what the transport started with
	known := map[int64]config.Server{}  // every member's line seen, by id
	for _, srv := range s.cfg.Servers {
		known[srv.ID] = srv
	}
	departed := map[uint64]time.Time{} // removed peers, until when they stay
	tick := time.NewTicker(departedGrace / 4)
	defer tick.Stop()
	for {
		select {
		case <-s.membersWake:
		case <-tick.C:
			if len(departed) == 0 {
				continue
			}
		case <-s.closed:
			return
		}
		m := s.members.Load()
		if m == nil {
			continue
		}
		for _, srv := range m.Servers {
			known[srv.ID] = srv
		}
		next := s.peerAddrs(m.Servers)
		// Members draining (raft learners no longer in the membership)
		// stay peers while raft has them.
		v, l := s.RaftMembers()
		for _, id := range append(v, l...) {
			if srv, ok := known[id]; ok && id != s.id {
				next[node.MemberID(id).RaftID()] = net.JoinHostPort(srv.Host, strconv.Itoa(srv.PeerPort))
			}
		}
		now := time.Now()
		for id, addr := range peers {
			if _, ok := next[id]; !ok {
				if _, ok := departed[id]; !ok {
					departed[id] = now.Add(departedGrace)
				}
				if now.Before(departed[id]) {
					next[id] = addr
				}
			}
		}
		for id, until := range departed {
			if _, in := next[id]; !in || now.After(until) {
				delete(departed, id)
			}
		}
		if !maps.Equal(next, peers) {
			s.node.SetPeers(next)
			peers = next
		}
		if m == done {
			continue
		}
		done = m
		for _, srv := range m.Servers {
			if srv.ID == s.id && srv.ClientPort > 0 {
				s.moveClientPort(srv.ClientHost, srv.ClientPort)
			}
		}
		if err := s.writeDynamicConfig(m); err != nil {
			s.log.Error("could not write the new dynamic configuration file; the membership is in the log, but a restart reads the old server lines until this is fixed",
				"config_version", fmt.Sprintf("%x", int64(m.Version)), "err", err)
		}
	}
}

// departedGrace is how long a member a reconfig removed stays a peer of
// the others.
const departedGrace = 15 * time.Second

// peerAddrs maps the raft id of every other member to its quorum address.
func (s *Server) peerAddrs(servers []config.Server) map[uint64]string {
	peers := make(map[uint64]string, len(servers))
	for _, m := range servers {
		if m.ID != s.id {
			peers[node.MemberID(m.ID).RaftID()] = net.JoinHostPort(m.Host, strconv.Itoa(m.PeerPort))
		}
	}
	return peers
}

// writeDynamicConfig writes m as ZooKeeper writes a committed
// configuration: the server lines, sorted, into
// "<zoo.cfg>.dynamic.<version hex>", then zoo.cfg rewritten without its
// server lines and with dynamicConfigFile pointing at the new file (and
// without clientPort and clientPortAddress when this member's line carries
// its client address). Both writes are atomic (a temporary file renamed).
// A configuration not read from a file writes nothing.
func (s *Server) writeDynamicConfig(m *fsm.Membership) error {
	static := s.cfg.File
	if static == "" {
		return nil
	}
	lines := make([]string, 0, len(m.Servers))
	eraseClient := false
	for _, srv := range m.Servers {
		lines = append(lines, config.ServerLine(srv))
		if srv.ID == s.id && srv.ClientPort > 0 {
			eraseClient = true
		}
	}
	sort.Strings(lines)
	dynamic := fmt.Sprintf("%s.dynamic.%x", static, int64(m.Version))
	if abs, err := filepath.Abs(dynamic); err == nil {
		dynamic = abs
	}
	if err := writeFileAtomic(dynamic, []byte(strings.Join(lines, "\n"))); err != nil {
		return err
	}
	old, err := os.ReadFile(static)
	if err != nil {
		return err
	}
	var out strings.Builder
	for _, line := range strings.Split(string(old), "\n") {
		key, _, _ := strings.Cut(strings.TrimSpace(line), "=")
		key = strings.TrimSpace(key)
		switch {
		case strings.HasPrefix(key, "server."), strings.HasPrefix(key, "group"), strings.HasPrefix(key, "weight"),
			strings.HasPrefix(key, "dynamicConfigFile"), strings.HasPrefix(key, "peerType"),
			eraseClient && strings.HasPrefix(key, "clientPort"):
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		out.WriteString(line + "\n")
	}
	out.WriteString("dynamicConfigFile=" + dynamic + "\n")
	return writeFileAtomic(static, []byte(out.String()))
}

// writeFileAtomic replaces path with data: a temporary file beside it,
// synced, then renamed over it.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// RaftMembers returns the member ids raft counts as voters and as
// observers, sorted: after a committed reconfig, those of
// /zookeeper/config.
func (s *Server) RaftMembers() (voters, observers []int64) {
	v, l := s.node.RaftMembers()
	for _, id := range v {
		voters = append(voters, int64(id))
	}
	for _, id := range l {
		observers = append(observers, int64(id))
	}
	slices.Sort(voters)
	slices.Sort(observers)
	return voters, observers
}
