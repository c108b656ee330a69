package tree

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wardenzk/warden/internal/quota"
	"github.com/wardenzk/warden/wire"
)

// mnode is a node of the naive model: a flat record, children found by
// scanning every path.
type mnode struct {
	data                        []byte
	acl                         []wire.ACL
	czxid, mzxid, pzxid         int64
	ctime, mtime                int64
	version, cversion, aversion int32
	owner                       int64
}

type model map[string]mnode

func (m model) kids(path string) []string {
	prefix := strings.TrimSuffix(path, "/") + "/"
	var out []string
	for p := range m {
		if p != "/" && strings.HasPrefix(p, prefix) && !strings.Contains(p[len(prefix):], "/") {
			out = append(out, p[len(prefix):])
		}
	}
	slices.Sort(out)
	return out
}

func (m model) parent(path string) (string, bool) {
	i := strings.LastIndex(path, "/")
	if i < 0 || strings.Contains(path, "\x00") {
		return "", false
	}
	if i == 0 {
		return "/", true
	}
	return path[:i], true
}

// quotaCheck is the model's checkQuota: nil when quotas are off.
type quotaCheck func(path string, bytesDiff, countDiff int64) error

func (m model) create(op CreateOp, c Caller, mt Meta, check quotaCheck) (string, error) {
	pp, ok := m.parent(op.Path)
	if !ok {
		return "", wire.ErrBadArguments
	}
	a, err := FixupACL(op.ACL, c)
	if err != nil {
		return "", err
	}
	p, ok := m[pp]
	if !ok {
		return "", wire.ErrNoNode
	}
	if !MatchACL(p.acl, wire.PermCreate, c, false) {
		return "", wire.ErrNoAuth
	}
	path := op.Path
	if op.Sequential {
		path += fmt.Sprintf("%010d", p.cversion)
	}
	if ValidatePath(path) != nil {
		return "", wire.ErrBadArguments
	}
	if _, ok := m[path]; ok {
		return "", wire.ErrNodeExists
	}
	if p.owner > 0 && p.owner < 1<<40 { // the sessions used here
		return "", wire.ErrNoChildrenForEphemerals
	}
	if check != nil {
		if err := check(path, int64(len(op.Data)), 1); err != nil {
			return "", err
		}
	}
	owner := int64(0)
	switch op.Kind {
	case KindEphemeral:
		owner = mt.Session
	case KindContainer:
		owner = ContainerOwner
	case KindTTL:
		owner = TTLOwner(op.TTL)
	}
	m[path] = mnode{data: op.Data, acl: a, czxid: mt.Zxid, mzxid: mt.Zxid, pzxid: mt.Zxid, ctime: mt.Time, mtime: mt.Time, owner: owner}
	p.cversion++
	p.pzxid = mt.Zxid
	m[pp] = p
	return path, nil
}

func (m model) delete(path string, version int32, c Caller, mt Meta) error {
	pp, ok := m.parent(path)
	if !ok || path == "/" || path == "/zookeeper" || path == "/zookeeper/quota" || path == "/zookeeper/config" {
		return wire.ErrBadArguments
	}
	p, ok := m[pp]
	if !ok {
		return wire.ErrNoNode
	}
	if !MatchACL(p.acl, wire.PermDelete, c, false) {
		return wire.ErrNoAuth
	}
	n, ok := m[path]
	if !ok {
		return wire.ErrNoNode
	}
	if version != -1 && version != n.version {
		return wire.ErrBadVersion
	}
	if len(m.kids(path)) > 0 {
		return wire.ErrNotEmpty
	}
	delete(m, path)
	p.pzxid = max(p.pzxid, mt.Zxid)
	m[pp] = p
	return nil
}

func (m model) setData(path string, data []byte, version int32, c Caller, mt Meta, check quotaCheck) error {
	if ValidatePath(path) != nil {
		return wire.ErrBadArguments
	}
	n, ok := m[path]
	if !ok {
		return wire.ErrNoNode
	}
	if !MatchACL(n.acl, wire.PermWrite, c, false) {
		return wire.ErrNoAuth
	}
	if check != nil {
		if err := check(path, int64(len(data)-len(n.data)), 0); err != nil {
			return err
		}
	}
	if version != -1 && version != n.version {
		return wire.ErrBadVersion
	}
	n.data, n.version, n.mzxid, n.mtime = data, n.version+1, mt.Zxid, mt.Time
	m[path] = n
	return nil
}

func (m model) setACL(path string, a []wire.ACL, version int32, c Caller) error {
	if ValidatePath(path) != nil {
		return wire.ErrBadArguments
	}
	fixed, err := FixupACL(a, c)
	if err != nil {
		return err
	}
	n, ok := m[path]
	if !ok {
		return wire.ErrNoNode
	}
	if !MatchACL(n.acl, wire.PermAdmin, c, false) {
		return wire.ErrNoAuth
	}
	if version != -1 && version != n.aversion {
		return wire.ErrBadVersion
	}
	n.acl, n.aversion = fixed, n.aversion+1
	m[path] = n
	return nil
}

func (m model) closeSession(s int64, mt Meta) {
	for _, p := range slices.Sorted(maps.Keys(m)) {
		if m[p].owner == s {
			pp, _ := m.parent(p)
			delete(m, p)
			pn := m[pp]
			pn.pzxid = max(pn.pzxid, mt.Zxid)
			m[pp] = pn
		}
	}
}

// modelQuota is a quota root of the model, set up before any node under
// it exists, so that its stats are a function of the current nodes.
type modelQuota struct {
	root   string
	limits quota.Stats
}

// deepestRoot returns the index of the deepest quota root containing path.
func deepestRoot(quotas []modelQuota, path string) int {
	best, depth := -1, -1
	for i, q := range quotas {
		if (path == q.root || strings.HasPrefix(path, q.root+"/")) && len(q.root) > depth {
			best, depth = i, len(q.root)
		}
	}
	return best
}

// usage is what the stats node of quotas[i] must hold: the nodes whose
// deepest root it is and their data bytes.
func (m model) usage(quotas []modelQuota, i int) quota.Stats {
	s := quota.Stats{quota.KeyCount: 0, quota.KeyBytes: 0}
	for p, n := range m {
		if deepestRoot(quotas, p) == i {
			s[quota.KeyCount]++
			s[quota.KeyBytes] += int64(len(n.data))
		}
	}
	return s
}

// check returns the model's checkQuota against committed.
func (quotas quotaSet) check(committed func() model) quotaCheck {
	return func(path string, bytesDiff, countDiff int64) error {
		i := deepestRoot(quotas, path)
		if i < 0 {
			return nil
		}
		cur, lim := committed().usage(quotas, i), quotas[i].limits
		if h := lim.Get(quota.KeyCountHardLimit); countDiff != 0 && h > -1 && cur[quota.KeyCount]+countDiff > h {
			return wire.ErrQuotaExceeded
		}
		if h := lim.Get(quota.KeyByteHardLimit); bytesDiff != 0 && h > -1 && cur[quota.KeyBytes]+bytesDiff > h {
			return wire.ErrQuotaExceeded
		}
		return nil
	}
}

type quotaSet []modelQuota

func (m model) render(quotas quotaSet) string {
	var b strings.Builder
	for _, p := range slices.Sorted(maps.Keys(m)) {
		n := m[p]
		for i, q := range quotas {
			if p == statsPath(q.root) {
				n.data = m.usage(quotas, i).Bytes()
			}
		}
		k := m.kids(p)
		owner := n.owner
		if owner < 0 {
			owner = 0
		}
		st := wire.Stat{Czxid: n.czxid, Mzxid: n.mzxid, Ctime: n.ctime, Mtime: n.mtime, Version: n.version,
			Cversion: 2*n.cversion - int32(len(k)), Aversion: n.aversion, EphemeralOwner: owner,
			DataLength: int32(len(n.data)), NumChildren: int32(len(k)), Pzxid: n.pzxid}
		fmt.Fprintf(&b, "%s nil=%v %q %v %+v %v\n", p, n.data == nil, n.data, n.acl, st, k)
	}
	return b.String()
}

func renderTree(t *testing.T, tr *Tree) string {
	var b strings.Builder
	for _, p := range slices.Sorted(maps.Keys(allNodes(t, tr))) {
		d, st, err := tr.GetData(p, super)
		if err != nil {
			t.Fatal(err)
		}
		a, _, _ := tr.GetACL(p, super)
		k, _, _ := tr.GetChildren(p, super)
		fmt.Fprintf(&b, "%s nil=%v %q %v %+v %v\n", p, d == nil, d, a, st, k)
	}
	return b.String()
}

func newModel() model {
	return model{
		"/":                 {data: []byte{}, acl: open},
		"/zookeeper":        {data: []byte{}, acl: open, cversion: 0},
		"/zookeeper/quota":  {data: []byte{}, acl: open},
		"/zookeeper/config": {data: []byte{}, acl: wire.ReadACLUnsafe, aversion: -1},
	}
}

// TestAgainstModel applies a few thousand random operations, some inside
// transactions that are rolled back, to the tree and to the naive model,
// and compares every result and the whole visible state after each step.
func TestAgainstModel(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runModel(t, seed, 1500) })
	}
}

// modelFrom copies a tree into a model.
func modelFrom(t *testing.T, tr *Tree) model {
	m := model{}
	for p, n := range allNodes(t, tr) {
		m[p] = mnode{data: n.data(), acl: n.acl().acl, czxid: n.czxid, mzxid: n.mzxid, pzxid: n.pzxid(),
			ctime: n.ctime, mtime: n.mtime, version: n.version, cversion: n.cversion(), aversion: n.aversion, owner: n.owner()}
	}
	return m
}

// TestAgainstModelWithQuotas runs the model test with enforced quotas on
// nested roots set up first; the model derives every stats node from the
// current nodes and checks hard limits against the committed state.
func TestAgainstModelWithQuotas(t *testing.T) {
	quotas := quotaSet{
		{root: "/a", limits: quota.Stats{quota.KeyCountHardLimit: 4}},
		{root: "/a/b", limits: quota.Stats{quota.KeyByteHardLimit: 6}},
		{root: "/b/c", limits: quota.Stats{quota.KeyCount: 1}},
	}
	for seed := uint64(5); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			tr := New(Options{EnforceQuota: true})
			for _, q := range quotas {
				p := ""
				for _, c := range strings.Split(quotaPath+q.root, "/")[1:] {
					if p += "/" + c; tr.lookup(p) == nil {
						mustCreate(t, tr, p, 1)
					}
				}
				if _, _, _, err := tr.Create(CreateOp{Path: p + "/" + quota.LimitsNode, Data: q.limits.Bytes(), ACL: open}, anyone, meta(1)); err != nil {
					t.Fatal(err)
				}
				mustCreate(t, tr, p+"/"+quota.StatsNode, 1)
			}
			runModelOn(t, seed, 1500, tr, modelFrom(t, tr), quotas)
		})
	}
}

func runModel(t *testing.T, seed uint64, steps int) {
	runModelOn(t, seed, steps, New(Options{}), newModel(), nil)
}

// frozenTree is a tree set aside by Clone with its state at that moment.
type frozenTree struct {
	tree         *Tree
	render, dump string
}

func runModelOn(t *testing.T, seed uint64, steps int, tr *Tree, m model, quotas quotaSet) {
	rng := rand.New(rand.NewPCG(seed, 99))
	names := []string{"a", "b", "c", "zookeeper"}
	pick := func() string {
		parts := []string{""}
		for d := rng.IntN(3) + 1; d > 0; d-- {
			parts = append(parts, names[rng.IntN(len(names))])
		}
		p := strings.Join(parts, "/")
		switch rng.IntN(20) {
		case 0:
			p += "/"
		case 1:
			p = p[1:]
		case 2:
			p = "/"
		}
		return p
	}
	callers := []Caller{anyone, bob}
	acls := [][]wire.ACL{open, open, wire.ReadACLUnsafe, acl(wire.PermAll, "digest", bobID.ID), acl(wire.PermAll, "auth", ""),
		append(acl(wire.PermRead|wire.PermCreate, "world", "anyone"), acl(wire.PermAll, "digest", bobID.ID)...)}
	datas := [][]byte{nil, {}, []byte("x"), []byte("hello")}
	var saved model
	var frozen []frozenTree
	inTxn := false
	var check quotaCheck
	exceeded := 0
	if quotas != nil {
		check = quotas.check(func() model {
			if inTxn {
				return saved
			}
			return m
		})
	}
	for i := 0; i < steps; i++ {
		zxid := int64(i + 1)
		mt := Meta{Zxid: zxid, Time: 10 * zxid, Session: int64(rng.IntN(3) + 1)}
		c := callers[rng.IntN(len(callers))]
		if !inTxn && rng.IntN(10) == 0 {
			tr.Begin()
			saved = maps.Clone(m)
			inTxn = true
		}
		var got, want error
		var desc string
		switch op := rng.IntN(10); {
		case op < 4:
			cop := CreateOp{Path: pick(), Data: datas[rng.IntN(len(datas))], ACL: acls[rng.IntN(len(acls))],
				Kind: Kind(rng.IntN(4)), Sequential: rng.IntN(4) == 0, TTL: 100}
			desc = fmt.Sprintf("create %+v", cop)
			var gp, wp string
			gp, _, _, got = tr.Create(cop, c, mt)
			wp, want = m.create(cop, c, mt, check)
			if gp != wp {
				t.Fatalf("step %d %s: path %q, model %q", i, desc, gp, wp)
			}
		case op < 6:
			p, v := pick(), int32(rng.IntN(3)-1)
			desc = fmt.Sprintf("delete %q %d", p, v)
			_, got = tr.Delete(p, v, c, mt)
			want = m.delete(p, v, c, mt)
		case op < 8:
			p, v, d := pick(), int32(rng.IntN(3)-1), datas[rng.IntN(len(datas))]
			desc = fmt.Sprintf("setData %q %d", p, v)
			_, _, got = tr.SetData(p, d, v, c, mt)
			want = m.setData(p, d, v, c, mt, check)
		case op < 9:
			p, v, a := pick(), int32(rng.IntN(3)-1), acls[rng.IntN(len(acls))]
			desc = fmt.Sprintf("setACL %q %d %v", p, v, a)
			_, got = tr.SetACL(p, a, v, c, mt)
			want = m.setACL(p, a, v, c)
		default:
			desc = fmt.Sprintf("closeSession %d", mt.Session)
			tr.CloseSession(mt.Session, mt)
			m.closeSession(mt.Session, mt)
		}
		if got != want {
			t.Fatalf("step %d %s as %v: %v, model %v", i, desc, c.IDs, got, want)
		}
		if got == wire.ErrQuotaExceeded {
			exceeded++
		}
		if inTxn && (got != nil || rng.IntN(4) == 0) {
			if got != nil || rng.IntN(2) == 0 {
				tr.Rollback()
				m = saved
			} else {
				tr.Commit()
			}
			inTxn = false
		}
		if a, b := renderTree(t, tr), m.render(quotas); a != b {
			t.Fatalf("step %d %s: state differs\ntree:\n%s\nmodel:\n%s", i, desc, a, b)
		}
		checkInvariants(t, tr)
		if !inTxn && i%50 == 49 {
			// Clone, then go on with the clone or the original in turn; the
			// other must never change again.
			c := tr.Clone()
			frozen = append(frozen, frozenTree{tr, renderTree(t, tr), dump(tr)})
			if i%100 == 49 {
				frozen[len(frozen)-1].tree = c
			} else {
				tr = c
			}
		}
	}
	for i, f := range frozen {
		if a := renderTree(t, f.tree); a != f.render {
			t.Fatalf("clone %d changed:\n%s\nwas:\n%s", i, a, f.render)
		}
		if a := dump(f.tree); a != f.dump {
			t.Fatalf("clone %d internals changed:\n%s\nwas:\n%s", i, a, f.dump)
		}
		checkInvariants(t, f.tree)
	}
	if quotas != nil && exceeded == 0 {
		t.Error("no operation hit a hard quota limit")
	}
}
