package netns

import (
	"encoding/json"
	"errors"
	"fmt"
	"golang.org/x/sys/unix"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// StateDir holds the lock file and one state file per live Net.
const StateDir = "/run/warden-torture"

// lockTimeout bounds the wait for the lock another Create holds.
const lockTimeout = 30 * time.Second

// state is what a Net records in StateDir/<key>.json before it makes
// anything, so that whoever finds it after the owner died can remove
// what it made.
//
// Invariant: every namespace, host link and mount the Net makes is listed
// here before it is made, and the file is removed only after all of them
// are gone.
type state struct {
	Key string `json:"key"`
	// OwnerPID and OwnerStart (the process start time in clock ticks
	// since boot, field 22 of /proc/<pid>/stat) identify the owner; a
	// different start time means the pid was reused and the owner is dead.
	OwnerPID   int      `json:"owner_pid"`
	OwnerStart uint64   `json:"owner_start"`
	Subnet     string   `json:"subnet"`
	Namespaces []string `json:"namespaces"`
	HostLink   string   `json:"host_link"`
	// Mounts are absolute mount points of tmpfs mounts whose source is Key.
	Mounts []string `json:"mounts"`
}

func statePath(key string) string { return filepath.Join(StateDir, key+".json") }

// write replaces the state file atomically.
func (s *state) write() error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("netns: encode state: %w", err)
	}
	tmp := statePath(s.Key) + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("netns: write state: %w", err)
	}
	if err := os.Rename(tmp, statePath(s.Key)); err != nil {
		return fmt.Errorf("netns: write state: %w", err)
	}
	return nil
}

// readStates returns every state file in StateDir. A file that cannot be
// decoded is returned with only Key set (from its name) and no owner, so
// it counts as dead.
func readStates() ([]*state, error) {
	names, err := filepath.Glob(filepath.Join(StateDir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []*state
	for _, p := range names {
		key := strings.TrimSuffix(filepath.Base(p), ".json")
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		s := &state{Key: key}
		if err == nil {
			if json.Unmarshal(b, s) != nil || s.Key != key {
				s = &state{Key: key}
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// procStart returns the start time of process pid in clock ticks since
// boot.
func procStart(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may contain
	// spaces; fields are counted after its closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("netns: malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state), so field 22 is f[19].
	if len(f) < 20 {
		return 0, fmt.Errorf("netns: malformed /proc/%d/stat", pid)
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// alive reports whether the state's owner process still runs.
func (s *state) alive() bool {
	if s.OwnerPID <= 0 {
		return false
	}
	start, err := procStart(s.OwnerPID)
	return err == nil && start == s.OwnerStart
}

// lockFile is an exclusive flock on StateDir/lock, serialising Creates
// and stale cleanup across goroutines and processes (each lock opens its
// own file description, so two Creates in one process exclude each other
// too).
type lockFile struct{ f *os.File }

func lock() (*lockFile, error) {
	if err := os.MkdirAll(StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("netns: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(StateDir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("netns: %w", err)
	}
	deadline := time.Now().Add(lockTimeout)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return &lockFile{f}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("netns: lock %s: %w", f.Name(), err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("netns: lock %s: still held by another process after %v", f.Name(), lockTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (l *lockFile) unlock() {
	// Closing the only descriptor of the file description releases the flock.
	l.f.Close()
}

// Names this package gives to what it makes; a key is "<prefix>-<k>".
var (
	prefixRE = regexp.MustCompile(`^[a-z0-9]{1,6}$`)
	// Leftovers without a state file are swept only for "wt" prefixes.
	orphanNSRE   = regexp.MustCompile(`^(wt[a-z0-9]{0,4}-[0-9]{1,2})-(hub|m[0-9]+)$`)
	orphanLinkRE = regexp.MustCompile(`^(wt[a-z0-9]{0,4}-[0-9]{1,2})-h$`)
	orphanKeyRE  = regexp.MustCompile(`^wt[a-z0-9]{0,4}-[0-9]{1,2}$`)
)

// sweep removes what dead owners left behind: for each state file whose
// owner is dead, everything it lists and then the file; then every
// namespace, host link and tmpfs mount named like this package's with a
// "wt" prefix whose key has no state file. It returns the live states.
// The caller holds the lock.
func sweep() ([]*state, error) {
	states, err := readStates()
	if err != nil {
		return nil, err
	}
	var live []*state
	var errs []error
	liveKeys := map[string]bool{}
	for _, s := range states {
		if s.alive() {
			live = append(live, s)
			liveKeys[s.Key] = true
			continue
		}
		if err := s.teardown(); err != nil {
			errs = append(errs, fmt.Errorf("netns: removing leftovers of dead owner %d (%s): %w", s.OwnerPID, statePath(s.Key), err))
			// Keep its subnet reserved while its leftovers remain.
			live = append(live, s)
			liveKeys[s.Key] = true
		}
	}
	// Orphans: made by a Net whose state file is gone (or a version of
	// this package without one).
	nss, err := listNamespaces()
	if err != nil {
		errs = append(errs, err)
	}
	for _, ns := range nss {
		if m := orphanNSRE.FindStringSubmatch(ns); m != nil && !liveKeys[m[1]] {
			errs = append(errs, deleteNamespace(ns))
		}
	}
	links, err := listHostLinks()
	if err != nil {
		errs = append(errs, err)
	}
	for _, l := range links {
		if m := orphanLinkRE.FindStringSubmatch(l); m != nil && !liveKeys[m[1]] {
			errs = append(errs, deleteHostLink(l))
		}
	}
	mounts, err := listTmpfsMounts()
	if err != nil {
		errs = append(errs, err)
	}
	for _, mt := range mounts {
		if orphanKeyRE.MatchString(mt.source) && !liveKeys[mt.source] {
			errs = append(errs, unmount(mt.point))
		}
	}
	return live, errors.Join(errs...)
}

// teardown kills processes left in the state's namespaces, deletes the
// namespaces and host link, unmounts its disks and removes the state
// file. It is idempotent; the state file is removed only if everything
// else succeeded.
func (s *state) teardown() error {
	var errs []error
	for _, ns := range s.Namespaces {
		errs = append(errs, killNamespace(ns))
	}
	// Deleting the hub namespace destroys every veth pair, since each has
	// one end in it; the host link is deleted explicitly in case the hub
	// is still held open.
	for _, ns := range s.Namespaces {
		errs = append(errs, deleteNamespace(ns))
	}
	if s.HostLink != "" {
		errs = append(errs, deleteHostLink(s.HostLink))
	}
	mounts, err := listTmpfsMounts()
	errs = append(errs, err)
	for _, p := range s.Mounts {
		for _, mt := range mounts {
			if mt.point == p && mt.source == s.Key {
				errs = append(errs, unmount(p))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := os.Remove(statePath(s.Key)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("netns: %w", err)
	}
	return nil
}
