package checker

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// RegisterKind says what a RegisterOp did to its register.
type RegisterKind int

const (
	// RegWrite is a blind write: setData with version -1.
	RegWrite RegisterKind = iota
	// RegCAS is a compare-and-set: setData with an expected version.
	RegCAS
	// RegRead is sync, then getData.
	RegRead
)

// String returns "write", "cas" or "read".
func (k RegisterKind) String() string {
	switch k {
	case RegWrite:
		return "write"
	case RegCAS:
		return "cas"
	default:
		return "read"
	}
}

// RegisterOp is one operation on one register (a znode whose data is a
// decimal int64). Write = setData version -1; CAS = setData with the
// expected Version; Read = sync then getData, Value/Version being what
// was read.
//
// Outcome: for a RegCAS, Failed means BadVersion (the version did not
// match) and nothing else; a workload whose CAS failed definitely for
// another reason must leave it out. A Failed write or read, and a read
// whose outcome is Unknown, are dropped: they say nothing about the
// register.
type RegisterOp struct {
	// Client is the zero-based client number; porcupine's visualization
	// draws one row per client number, so keep them small.
	Client int
	// Key is the register's path.
	Key  string
	Kind RegisterKind
	// Value is, for a write or CAS, the value written; for a read, the
	// value read.
	Value int64
	// Version is, for a CAS, the expected version; for a read, the
	// version read (stat.Version). Unused for a write.
	Version int32
	Span
	Outcome Outcome
}

// regState is a register's state in the model.
type regState struct {
	value   int64
	version int32
}

// regInput is one operation as the model sees it (porcupine's input; the
// output is unused).
type regInput struct {
	kind    RegisterKind
	value   int64
	version int32
	outcome Outcome
}

// regStep is the register's sequential specification.
//
// An Unknown write or CAS is given a Return after every other operation
// of its key, so porcupine may linearize it anywhere after its call,
// including last, where what it does is seen by no one: "last" stands
// for "never took effect". So the step need not branch for it: an
// unknown write applies; an unknown CAS applies when the version
// matches and otherwise succeeds leaving the state as it was (it failed
// with BadVersion, unseen). Conversely every linearization this admits
// is an execution ZooKeeper may have had: an unknown operation either
// took effect at its linearization point or not at all.
func regStep(state, input, _ any) (bool, any) {
	s := state.(regState)
	in := input.(regInput)
	switch in.kind {
	case RegWrite:
		return true, regState{value: in.value, version: s.version + 1}
	case RegCAS:
		match := s.version == in.version
		switch in.outcome {
		case OK:
			if !match {
				return false, s
			}
			return true, regState{value: in.value, version: s.version + 1}
		case Failed:
			return !match, s
		default:
			if match {
				return true, regState{value: in.value, version: s.version + 1}
			}
			return true, s
		}
	default:
		return s == regState{value: in.value, version: in.version}, s
	}
}

// registerModel is the model of one register (the checker hands
// porcupine one key at a time; see CheckRegisters).
var registerModel = porcupine.Model{
	Init: func() any { return regState{} },
	Step: regStep,
	Hash: func(state any) uint64 {
		s := state.(regState)
		return uint64(s.value)*0x9e3779b97f4a7c15 ^ uint64(uint32(s.version))
	},
	DescribeOperation: func(input, _ any) string {
		in := input.(regInput)
		var d string
		switch in.kind {
		case RegWrite:
			d = fmt.Sprintf("write %d", in.value)
		case RegCAS:
			d = fmt.Sprintf("cas v%d→%d", in.version, in.value)
		default:
			d = fmt.Sprintf("read %d v%d", in.value, in.version)
		}
		switch {
		case in.outcome == Unknown:
			d += " ?"
		case in.outcome == Failed && in.kind == RegCAS:
			d += " bad version"
		}
		return d
	},
	DescribeState: func(state any) string {
		s := state.(regState)
		return fmt.Sprintf("%d v%d", s.value, s.version)
	},
}

// maxVisualizations bounds how many failing keys get an HTML file.
const maxVisualizations = 5

// keyHistory is one key's operations as porcupine takes them.
type keyHistory struct {
	key string
	ops []porcupine.Operation
	res porcupine.CheckResult
}

// CheckRegisters checks every key's history for linearizability against
// a register whose state is (value, version), starting at (0, 0) for
// every key (the harness creates each key with value 0).
//
// The model (see regStep): a write sets the value and bumps the version;
// an OK CAS requires the expected version, then does the same; a Failed
// CAS (BadVersion) requires another version and changes nothing; a read
// requires the state to be exactly (Value, Version). An Unknown write or
// CAS may have taken effect at any time after its call, or never.
//
// Keys are independent registers: the checker partitions the history by
// Key itself and runs porcupine once per key, several keys at once,
// rather than through porcupine's Partition, so that it learns which
// keys fail and can draw each alone.
//
// timeout bounds the whole check (all keys together; <= 0: no bound). A
// key whose check did not finish in time is NOT OK: its anomaly says
// "inconclusive: porcupine timed out after ...". When a key is not
// linearizable and vizDir != "", porcupine's HTML visualization of that
// key is written to vizDir/registers-<key-sanitized>.html (for the first
// few failing keys, in key order, as time allows) and Result.Visualization
// is the first such file.
func CheckRegisters(ops []RegisterOp, timeout time.Duration, vizDir string) Result {
	var f findings
	hs, dropped := registerHistories(ops)
	checked := len(ops) - dropped
	if dropped > 0 {
		f.note("%d failed writes and failed or unknown reads dropped (no effect, nothing learnt)", dropped)
	}

	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	// budget returns the time left for porcupine (0: unbounded) and
	// whether any is left.
	budget := func() (time.Duration, bool) {
		if timeout <= 0 {
			return 0, true
		}
		left := time.Until(deadline)
		return left, left > 0
	}

	next := make(chan *keyHistory)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(hs)) {
		wg.Go(func() {
			for h := range next {
				left, ok := budget()
				if !ok {
					h.res = porcupine.Unknown
					continue
				}
				h.res = porcupine.CheckOperationsTimeout(registerModel, h.ops, left)
			}
		})
	}
	for i := range hs {
		next <- &hs[i]
	}
	close(next)
	wg.Wait()

	var viz string
	drawn := 0
	for i := range hs {
		h := &hs[i]
		switch h.res {
		case porcupine.Ok:
		case porcupine.Unknown:
			f.add(h.key, "%s: inconclusive: porcupine timed out after %v (%d ops)", h.key, timeout, len(h.ops))
		default:
			msg := fmt.Sprintf("%s: not linearizable (%d ops)", h.key, len(h.ops))
			if vizDir != "" && drawn < maxVisualizations {
				drawn++
				path, err := visualize(h, vizDir, budget)
				if err != nil {
					f.note("%s: no visualization: %v", h.key, err)
				} else {
					msg += "; see " + path
					if viz == "" {
						viz = path
					}
				}
			}
			f.add(h.key, "%s", msg)
		}
	}
	r := f.result("registers", checked)
	r.Visualization = viz
	return r
}

// registerHistories partitions ops by key (in key order) into porcupine
// operations, leaving out those that say nothing about the register, and
// returns how many it left out.
func registerHistories(ops []RegisterOp) ([]keyHistory, int) {
	byKey := make(map[string][]RegisterOp)
	dropped := 0
	for _, op := range ops {
		if op.Kind == RegRead && op.Outcome != OK || op.Kind == RegWrite && op.Outcome == Failed {
			dropped++
			continue
		}
		byKey[op.Key] = append(byKey[op.Key], op)
	}
	var hs []keyHistory
	for _, key := range sortedKeys(byKey) {
		kops := byKey[key]
		// Unknown operations return after everything else of the key.
		var end int64
		for _, op := range kops {
			end = max(end, op.Call)
			if op.Outcome != Unknown {
				end = max(end, op.Return)
			}
		}
		h := keyHistory{key: key}
		for _, op := range kops {
			p := porcupine.Operation{
				ClientId: op.Client,
				Input:    regInput{kind: op.Kind, value: op.Value, version: op.Version, outcome: op.Outcome},
				Call:     op.Call,
				Return:   op.Return,
			}
			if op.Outcome == Unknown {
				p.Return = end + 1
				p.Metadata = fmt.Sprintf("outcome unknown (client gave up at %s)", at(op.Return))
			}
			h.ops = append(h.ops, p)
		}
		hs = append(hs, h)
	}
	return hs, dropped
}

// visualize runs porcupine again on a failing key, keeping what it needs
// to draw it, and writes the drawing into dir.
func visualize(h *keyHistory, dir string, budget func() (time.Duration, bool)) (string, error) {
	left, ok := budget()
	if !ok {
		return "", fmt.Errorf("no time left to draw it")
	}
	res, info := porcupine.CheckOperationsVerbose(registerModel, h.ops, left)
	if res != porcupine.Illegal {
		return "", fmt.Errorf("porcupine timed out drawing it")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "registers-"+sanitize(h.key)+".html")
	if err := porcupine.VisualizePath(registerModel, info, path); err != nil {
		return "", err
	}
	return path, nil
}

// sanitize turns a key into a file name: runs of characters other than
// letters, digits, '.', '-' and '_' become one '_', without a leading
// or trailing '_' ("/torture/k3" → "torture_k3").
func sanitize(key string) string {
	var b strings.Builder
	under := false
	for _, c := range key {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_'
		switch {
		case ok:
			b.WriteRune(c)
			under = false
		case !under:
			b.WriteByte('_')
			under = true
		}
	}
	s := strings.Trim(b.String(), "_")
	if s == "" {
		return "root"
	}
	return s
}
