package recipe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/wardenzk/warden/client"
)

// waitMembers reads w until it delivers want.
func waitMembers(t *testing.T, ctx context.Context, w *MembershipWatch, want ...string) {
	t.Helper()
	for {
		select {
		case got, ok := <-w.C():
			if !ok {
				t.Fatalf("watch ended (%v) before members %v", w.Err(), want)
			}
			if slices.Equal(got, want) || (len(got) == 0 && len(want) == 0) {
				return
			}
		case <-ctx.Done():
			t.Fatalf("members never became %v", want)
		}
	}
}

func TestGroupMembership(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	watcher := NewGroup(lockConn(t, srv), "/groups/g")
	w := watcher.Watch(ctx)
	waitMembers(t, ctx, w) // empty, group node missing

	conns := map[string]*client.Conn{}
	for _, m := range []string{"a", "b", "c"} {
		c := lockConn(t, srv)
		conns[m] = c
		if err := NewGroup(c, "/groups/g").Join(ctx, m, []byte("data-"+m)); err != nil {
			t.Fatal(err)
		}
	}
	waitMembers(t, ctx, w, "a", "b", "c")
	if err := NewGroup(lockConn(t, srv), "/groups/g").Join(ctx, "a", nil); !errors.Is(err, ErrMemberExists) {
		t.Errorf("second join of a from another session = %v, want ErrMemberExists", err)
	}
	if err := NewGroup(conns["a"], "/groups/g").Join(ctx, "a", []byte("data-a")); err != nil {
		t.Errorf("re-join by the owner = %v", err)
	}
	if d, err := watcher.MemberData(ctx, "b"); err != nil || string(d) != "data-b" {
		t.Errorf("MemberData(b) = %q, %v", d, err)
	}

	// A crash (session closed) and a leave are both seen.
	conns["b"].Close()
	waitMembers(t, ctx, w, "a", "c")
	if err := NewGroup(conns["c"], "/groups/g").Leave(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	waitMembers(t, ctx, w, "a")
	if got, err := watcher.Members(ctx); err != nil || !slices.Equal(got, []string{"a"}) {
		t.Errorf("Members = %v, %v", got, err)
	}
}

func TestDiscoveryProviderFollowsRegistrations(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	conns := make([]*client.Conn, 3)
	for i := range conns {
		conns[i] = lockConn(t, srv)
		inst := ServiceInstance{Name: "api", ID: "i" + strconv.Itoa(i), Address: "10.0.0." + strconv.Itoa(i), Port: 8080,
			Payload: json.RawMessage(`{"zone":"a"}`)}
		if err := NewDiscovery(conns[i], "/services").Register(ctx, inst); err != nil {
			t.Fatal(err)
		}
	}
	d := NewDiscovery(lockConn(t, srv), "/services")
	p, err := d.Provider(ctx, "api", RoundRobin())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if got := ids(p.Instances()); !slices.Equal(got, []string{"i0", "i1", "i2"}) {
		t.Fatalf("instances %v", got)
	}
	// Round robin: exactly even.
	count := map[string]int{}
	for range 300 {
		inst, err := p.Pick("")
		if err != nil {
			t.Fatal(err)
		}
		count[inst.ID]++
	}
	for id, n := range count {
		if n != 100 {
			t.Errorf("round robin gave %s %d of 300", id, n)
		}
	}

	// Curator's JSON shape on the node.
	raw, _, err := conns[0].Get(ctx, "/services/api/i0")
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "id", "address", "port", "payload", "registrationTimeUTC", "serviceType"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("registration JSON lacks %q: %s", k, raw)
		}
	}
	if fields["serviceType"] != "DYNAMIC" {
		t.Errorf("serviceType %v", fields["serviceType"])
	}

	// An instance whose session ends drops out of the provider.
	conns[1].Close()
	for slices.Contains(ids(p.Instances()), "i1") {
		select {
		case <-p.Changed():
		case <-ctx.Done():
			t.Fatal("provider never dropped i1")
		}
	}
	if got := ids(p.Instances()); !slices.Equal(got, []string{"i0", "i2"}) {
		t.Errorf("instances after i1 left: %v", got)
	}
	if err := NewDiscovery(conns[2], "/services").Unregister(ctx, "api", "i2"); err != nil {
		t.Fatal(err)
	}
	for slices.Contains(ids(p.Instances()), "i2") {
		select {
		case <-p.Changed():
		case <-ctx.Done():
			t.Fatal("provider never dropped i2")
		}
	}
	if got, err := d.Instances(ctx, "api"); err != nil || !slices.Equal(ids(got), []string{"i0"}) {
		t.Errorf("Instances = %v, %v", ids(got), err)
	}
	if _, err := d.Provider(ctx, "missing", Random(nil)); err != nil {
		t.Errorf("provider of an unregistered service: %v", err)
	}
}

func ids(insts []ServiceInstance) []string {
	out := make([]string, len(insts))
	for i, in := range insts {
		out[i] = in.ID
	}
	return out
}

// TestServiceInstanceCuratorJSON reads a registration as Curator writes it.
func TestServiceInstanceCuratorJSON(t *testing.T) {
	raw := `{"name":"test","id":"0b4b6f4e","address":"10.1.2.3","port":1234,"sslPort":null,` +
		`"payload":{"@class":"com.example.Details","zone":"b"},"registrationTimeUTC":1700000000000,` +
		`"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true}]},"enabled":true}`
	var inst ServiceInstance
	if err := json.Unmarshal([]byte(raw), &inst); err != nil {
		t.Fatal(err)
	}
	if inst.Name != "test" || inst.ID != "0b4b6f4e" || inst.Address != "10.1.2.3" || inst.Port != 1234 ||
		inst.RegistrationTimeUTC != 1700000000000 || inst.ServiceType != "DYNAMIC" ||
		string(inst.Payload) != `{"@class":"com.example.Details","zone":"b"}` {
		t.Errorf("decoded %+v", inst)
	}
}

func makeInstances(n int) []ServiceInstance {
	out := make([]ServiceInstance, n)
	for i := range out {
		out[i] = ServiceInstance{Name: "svc", ID: fmt.Sprintf("node-%02d", i)}
	}
	return out
}

func TestBalancerDistribution(t *testing.T) {
	const n, picks = 8, 80000
	for _, tc := range []struct {
		name string
		b    Balancer
		tol  float64 // allowed relative deviation from picks/n
	}{
		{"round robin", RoundRobin(), 0},
		{"random", Random(rand.NewPCG(1, 2)), 0.05},
		{"consistent hash", ConsistentHash(160), 0.25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.b.Update(makeInstances(n))
			count := map[string]int{}
			for i := range picks {
				inst, ok := tc.b.Pick("key-" + strconv.Itoa(i))
				if !ok {
					t.Fatal("no pick")
				}
				count[inst.ID]++
			}
			if len(count) != n {
				t.Fatalf("picked %d distinct instances, want %d", len(count), n)
			}
			mean := float64(picks) / n
			for id, c := range count {
				if dev := (float64(c) - mean) / mean; dev > tc.tol || dev < -tc.tol {
					t.Errorf("%s got %d picks, mean %.0f (deviation %.2f > %.2f)", id, c, mean, dev, tc.tol)
				}
			}
		})
	}
	for _, b := range []Balancer{RoundRobin(), Random(nil), ConsistentHash(0)} {
		if _, ok := b.Pick("k"); ok {
			t.Errorf("%T picked from an empty list", b)
		}
	}
}

// TestConsistentHashStability: adding an instance moves only the keys it
// takes over (about 1/N), removing one moves only its own keys.
func TestConsistentHashStability(t *testing.T) {
	const n, keys = 10, 20000
	pick := func(b Balancer) map[string]string {
		out := make(map[string]string, keys)
		for i := range keys {
			inst, _ := b.Pick("user-" + strconv.Itoa(i))
			out["user-"+strconv.Itoa(i)] = inst.ID
		}
		return out
	}
	b := ConsistentHash(0)
	insts := makeInstances(n + 1)
	b.Update(insts[:n])
	before := pick(b)

	b.Update(insts) // one joins
	after := pick(b)
	moved := 0
	for k, id := range before {
		if after[k] != id {
			moved++
			if after[k] != insts[n].ID {
				t.Fatalf("key %s moved from %s to %s, not to the new instance", k, id, after[k])
			}
		}
	}
	frac := float64(moved) / keys
	if want := 1.0 / (n + 1); frac < want/2 || frac > want*2 {
		t.Errorf("join moved %.3f of keys, want about %.3f", frac, want)
	}

	gone := insts[3].ID // one leaves
	b.Update(slices.Delete(slices.Clone(insts), 3, 4))
	final := pick(b)
	for k, id := range after {
		if id != gone && final[k] != id {
			t.Fatalf("key %s moved from %s to %s though %s was not removed", k, id, final[k], id)
		}
	}
	// Same list, another process: same mapping.
	b2 := ConsistentHash(0)
	b2.Update(slices.Delete(slices.Clone(insts), 3, 4))
	if other := pick(b2); fmt.Sprint(other) != fmt.Sprint(final) {
		t.Error("two rings over the same list disagree")
	}
}
