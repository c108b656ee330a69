package recipe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/wardenzk/warden/client"
)

// ServiceInstance describes one registered instance of a service. Its JSON
// form is the one Curator's JsonInstanceSerializer reads and writes, minus
// uriSpec (not supported): a Curator ServiceDiscovery sees Go instances and
// the other way round. Payload is kept as raw JSON: Curator writes its
// payload with Jackson type information (for example
// {"@class":"...", ...}), which a Go reader gets verbatim.
type ServiceInstance struct {
	Name    string `json:"name"`
	ID      string `json:"id"`
	Address string `json:"address,omitempty"`
	Port    int    `json:"port,omitempty"`
	SSLPort int    `json:"sslPort,omitempty"`
	// Payload is arbitrary JSON attached by the registrant.
	Payload json.RawMessage `json:"payload,omitempty"`
	// RegistrationTimeUTC is milliseconds since the Unix epoch.
	RegistrationTimeUTC int64 `json:"registrationTimeUTC"`
	// ServiceType is Curator's: "DYNAMIC" (ephemeral, the default here),
	// "STATIC" or "PERMANENT" (persistent).
	ServiceType string `json:"serviceType"`
}

// Discovery registers and finds service instances.
//
// Layout (Curator ServiceDiscovery):
//
//	<base>                      container
//	<base>/<name>               container: one per service
//	<base>/<name>/<id>          ephemeral (DYNAMIC) or persistent; data = JSON ServiceInstance
//
// Registration lives as long as the registering Conn's session: when the
// session expires the instance disappears, and (unlike Curator, which
// re-registers on reconnect) the caller registers again on its new Conn.
type Discovery struct {
	c    *client.Conn
	base string
}

// NewDiscovery returns a Discovery rooted at base on c. It does not touch
// the server.
func NewDiscovery(c *client.Conn, base string) *Discovery { return &Discovery{c: c, base: base} }

// Register publishes inst. Name and ID are required; an empty ServiceType
// means "DYNAMIC", a zero RegistrationTimeUTC means now. Registering an ID this session already registered
// replaces its data; an ID held by another session returns ErrNodeExists
// wrapped.
func (d *Discovery) Register(ctx context.Context, inst ServiceInstance) error {
	if inst.Name == "" || inst.ID == "" {
		return errors.New("recipe: discovery: register: instance needs a name and an id")
	}
	if inst.ServiceType == "" {
		inst.ServiceType = "DYNAMIC"
	}
	if inst.RegistrationTimeUTC == 0 {
		inst.RegistrationTimeUTC = time.Now().UnixMilli()
	}
	data, err := json.Marshal(inst)
	if err != nil {
		return fmt.Errorf("recipe: discovery: register %s/%s: %w", inst.Name, inst.ID, err)
	}
	svc := joinPath(d.base, inst.Name)
	p := joinPath(svc, inst.ID)
	if inst.ServiceType != "DYNAMIC" {
		if err := ensureParents(ctx, d.c, svc); err != nil {
			return fmt.Errorf("recipe: discovery: register %s: %w", p, err)
		}
		_, err := d.c.Create(ctx, p, data, client.Persistent, client.OpenACL)
		if errors.Is(err, client.ErrNodeExists) {
			_, err = d.c.Set(ctx, p, data, -1)
		}
		if err != nil {
			return fmt.Errorf("recipe: discovery: register %s: %w", p, err)
		}
		return nil
	}
	if err := createEphemeralOwned(ctx, d.c, svc, p, data); err != nil {
		return fmt.Errorf("recipe: discovery: register %s: %w", p, err)
	}
	// Ours already (a re-register): make the data current.
	if _, err := d.c.Set(ctx, p, data, -1); err != nil {
		return fmt.Errorf("recipe: discovery: register %s: %w", p, err)
	}
	return nil
}

// Unregister removes the instance name/id. A missing instance is not an
// error.
func (d *Discovery) Unregister(ctx context.Context, name, id string) error {
	p := joinPath(joinPath(d.base, name), id)
	if err := deleteQuietly(ctx, d.c, p); err != nil {
		return fmt.Errorf("recipe: discovery: unregister %s: %w", p, err)
	}
	return nil
}

// Instances returns the registered instances of service name, sorted by ID.
// Nodes whose data is not a ServiceInstance are skipped.
func (d *Discovery) Instances(ctx context.Context, name string) ([]ServiceInstance, error) {
	svc := joinPath(d.base, name)
	for {
		ids, _, err := d.c.Children(ctx, svc)
		switch {
		case errors.Is(err, client.ErrNoNode):
			return nil, nil
		case errors.Is(err, client.ErrConnectionLoss):
			continue
		case err != nil:
			return nil, fmt.Errorf("recipe: discovery: instances of %s: %w", name, err)
		}
		out, err := d.readInstances(ctx, svc, ids)
		if err != nil {
			return nil, fmt.Errorf("recipe: discovery: instances of %s: %w", name, err)
		}
		return out, nil
	}
}

func (d *Discovery) readInstances(ctx context.Context, svc string, ids []string) ([]ServiceInstance, error) {
	slices.Sort(ids)
	out := make([]ServiceInstance, 0, len(ids))
	for _, id := range ids {
		data, _, err := d.c.Get(ctx, joinPath(svc, id))
		if errors.Is(err, client.ErrNoNode) {
			continue // left meanwhile
		}
		if err != nil {
			return nil, err
		}
		var inst ServiceInstance
		if json.Unmarshal(data, &inst) != nil {
			continue
		}
		out = append(out, inst)
	}
	return out, nil
}

// ServiceProvider keeps the instance list of one service current (a
// children watch on the service node, instance data re-read on every
// membership change) and picks instances with a Balancer. Changes to an
// instance's data without a membership change are not seen.
type ServiceProvider struct {
	d        *Discovery
	name     string
	balancer Balancer
	cancel   context.CancelFunc
	done     chan struct{}
	changed  chan struct{} // capacity 1: a pending "list changed" signal

	mu        sync.Mutex
	instances []ServiceInstance // sorted by ID; guarded by mu
	err       error             // why the watch ended; guarded by mu
}

// ErrNoInstances is returned by Pick when the service has no instance.
var ErrNoInstances = errors.New("recipe: discovery: no instances")

// Provider returns a ServiceProvider for service name using b. It returns
// once the first list is loaded; the list then follows the server until
// Close, or until the session ends (Err says why).
func (d *Discovery) Provider(ctx context.Context, name string, b Balancer) (*ServiceProvider, error) {
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := &ServiceProvider{d: d, name: name, balancer: b, cancel: cancel,
		done: make(chan struct{}), changed: make(chan struct{}, 1)}
	ev, err := p.refresh(ctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("recipe: discovery: provider %s: %w", name, err)
	}
	go p.run(wctx, ev)
	return p, nil
}

// refresh re-lists the service with a watch and updates the balancer.
func (p *ServiceProvider) refresh(ctx context.Context) (<-chan client.Event, error) {
	svc := joinPath(p.d.base, p.name)
	for {
		ids, _, ev, err := p.d.c.ChildrenW(ctx, svc)
		if errors.Is(err, client.ErrNoNode) {
			var ok bool
			_, ok, ev, err = p.d.c.ExistsW(ctx, svc)
			if err == nil && ok {
				continue
			}
			ids = nil
		}
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return nil, err
		}
		insts, err := p.d.readInstances(ctx, svc, ids)
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return nil, err
		}
		p.mu.Lock()
		p.instances = insts
		p.mu.Unlock()
		p.balancer.Update(insts)
		select {
		case p.changed <- struct{}{}:
		default:
		}
		return ev, nil
	}
}

func (p *ServiceProvider) run(ctx context.Context, ev <-chan client.Event) {
	defer close(p.done)
	for {
		select {
		case e := <-ev:
			if e.Err != nil {
				p.fail(e.Err)
				return
			}
		case <-ctx.Done():
			return
		}
		var err error
		if ev, err = p.refresh(ctx); err != nil {
			if ctx.Err() == nil {
				p.fail(err)
			}
			return
		}
	}
}

func (p *ServiceProvider) fail(err error) {
	p.mu.Lock()
	p.err = err
	p.mu.Unlock()
}

// Instances returns the current instance list (sorted by ID; the caller
// owns the slice).
func (p *ServiceProvider) Instances() []ServiceInstance {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.instances)
}

// Changed returns a channel that receives after each list update
// (coalesced: one pending signal at most).
func (p *ServiceProvider) Changed() <-chan struct{} { return p.changed }

// Pick returns an instance chosen by the balancer; key matters only to
// key-aware balancers (ConsistentHash). It returns ErrNoInstances when the
// service has none.
func (p *ServiceProvider) Pick(key string) (ServiceInstance, error) {
	inst, ok := p.balancer.Pick(key)
	if !ok {
		return ServiceInstance{}, fmt.Errorf("recipe: discovery: %s: %w", p.name, ErrNoInstances)
	}
	return inst, nil
}

// Err returns why the provider stopped following the server (the session
// ended), or nil while it is live or after Close.
func (p *ServiceProvider) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Close stops following the server; Pick keeps answering from the last
// list.
func (p *ServiceProvider) Close() {
	p.cancel()
	<-p.done
}

// Balancer chooses one of a service's instances. Update is called with the
// full list on every change; Pick may be called concurrently with it.
type Balancer interface {
	// Update replaces the instance list (sorted by ID; not retained by
	// the caller afterwards).
	Update(instances []ServiceInstance)
	// Pick returns an instance for key, false when there is none.
	Pick(key string) (ServiceInstance, bool)
}

// RoundRobin returns a Balancer that cycles through the instances in ID
// order, ignoring the key.
func RoundRobin() Balancer { return &roundRobin{} }

type roundRobin struct {
	mu    sync.Mutex
	insts []ServiceInstance // guarded by mu
	next  int               // guarded by mu
}

func (r *roundRobin) Update(insts []ServiceInstance) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.insts = insts
}

func (r *roundRobin) Pick(string) (ServiceInstance, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.insts) == 0 {
		return ServiceInstance{}, false
	}
	i := r.next % len(r.insts)
	r.next = i + 1
	return r.insts[i], true
}

// Random returns a Balancer that picks uniformly at random using src (a
// fresh random source when nil), ignoring the key.
func Random(src rand.Source) Balancer {
	if src == nil {
		src = rand.NewPCG(rand.Uint64(), rand.Uint64())
	}
	return &random{rng: rand.New(src)}
}

type random struct {
	mu    sync.Mutex
	rng   *rand.Rand        // guarded by mu
	insts []ServiceInstance // guarded by mu
}

func (r *random) Update(insts []ServiceInstance) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.insts = insts
}

func (r *random) Pick(string) (ServiceInstance, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.insts) == 0 {
		return ServiceInstance{}, false
	}
	return r.insts[r.rng.IntN(len(r.insts))], true
}

// ConsistentHash returns a Balancer that maps a key to an instance on a
// hash ring with replicas virtual nodes per instance (64 when replicas <= 0).
// When an instance joins or leaves, only the keys of the ring arcs it gains
// or loses move: about 1/N of them for N instances. The hash (64-bit FNV-1a
// of "<id>#<i>" for a virtual node, of the key for a key, each finished with
// a SplitMix64 mix) is stable across processes, so every client maps a key
// to the same instance when they see the same list.
func ConsistentHash(replicas int) Balancer {
	if replicas <= 0 {
		replicas = 64
	}
	return &hashRing{replicas: replicas}
}

type hashRing struct {
	replicas int

	mu sync.Mutex
	// points is sorted by hash. Invariant: every owner indexes insts.
	points []ringPoint       // guarded by mu
	insts  []ServiceInstance // guarded by mu
}

type ringPoint struct {
	hash  uint64
	owner int
}

func (h *hashRing) Update(insts []ServiceInstance) {
	points := make([]ringPoint, 0, len(insts)*h.replicas)
	for i, inst := range insts {
		for r := range h.replicas {
			points = append(points, ringPoint{hash: ringHash(inst.ID + "#" + strconv.Itoa(r)), owner: i})
		}
	}
	sort.Slice(points, func(a, b int) bool {
		if points[a].hash != points[b].hash {
			return points[a].hash < points[b].hash
		}
		return insts[points[a].owner].ID < insts[points[b].owner].ID
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.points, h.insts = points, insts
}

func (h *hashRing) Pick(key string) (ServiceInstance, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.points) == 0 {
		return ServiceInstance{}, false
	}
	k := ringHash(key)
	i := sort.Search(len(h.points), func(i int) bool { return h.points[i].hash >= k })
	if i == len(h.points) {
		i = 0
	}
	return h.insts[h.points[i].owner], true
}

// ringHash is FNV-1a 64 finished with the SplitMix64 mixer (FNV alone
// spreads similar short strings poorly).
func ringHash(s string) uint64 {
	f := fnv.New64a()
	f.Write([]byte(s))
	x := f.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
