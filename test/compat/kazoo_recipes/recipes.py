#!/usr/bin/python3
"""Drive kazoo's recipes against one ZooKeeper-compatible server.

Usage: /usr/bin/python3 recipes.py <connect-string> <scenario>

Prints a deterministic transcript, one key=value line per step: no timestamps, no
session ids, nothing that depends on thread scheduling. test/compat/recipes_kazoo_test.go
runs it against Apache ZooKeeper and Warden and compares the transcripts.

Every wait is bounded (WAIT seconds); a watchdog ends the process with exit code 3
after WATCHDOG seconds. A violated invariant prints "<name>=FAILED" and the exit code
becomes 1.
"""

import os
import queue
import sys
import threading

from kazoo.client import KazooClient
from kazoo.exceptions import LockTimeout
from kazoo.recipe.barrier import Barrier, DoubleBarrier
from kazoo.recipe.counter import Counter
from kazoo.recipe.election import Election
from kazoo.recipe.lock import Lock
from kazoo.recipe.party import Party, ShallowParty
from kazoo.recipe.queue import LockingQueue, Queue

WAIT = 10.0
WATCHDOG = 60.0

_out_lock = threading.Lock()
_failed = False
_clients = []


def out(key, value):
    with _out_lock:
        sys.stdout.write("%s=%s\n" % (key, value))
        sys.stdout.flush()


def check(name, ok):
    """Print name=ok, or name=FAILED and mark the run failed."""
    global _failed
    out(name, "ok" if ok else "FAILED")
    if not ok:
        _failed = True


def client(hosts):
    c = KazooClient(hosts=hosts, timeout=10.0)
    c.start(timeout=WAIT)
    _clients.append(c)
    return c


def take(q, what):
    try:
        return q.get(timeout=WAIT)
    except queue.Empty:
        raise RuntimeError("timed out waiting for " + what)


def run_all(n, fn):
    """Run fn(i) for i in range(n) on n threads; wait (bounded) and re-raise errors."""
    errors = [None] * n

    def body(i):
        try:
            fn(i)
        except BaseException as e:  # reported below, on the main thread
            errors[i] = e

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(3 * WAIT)
        if t.is_alive():
            raise RuntimeError("worker did not finish in time")
    for e in errors:
        if e is not None:
            raise RuntimeError("worker failed: %r" % (e,))


def await_children(c, path, n):
    """Wait, with child watches, until path has exactly n children."""
    changed = threading.Event()
    deadline = threading.Event()
    timer = threading.Timer(WAIT, deadline.set)
    timer.daemon = True
    timer.start()
    try:
        while not deadline.is_set():
            changed.clear()
            kids = []
            if c.exists(path, watch=lambda e: changed.set()) is not None:
                try:
                    kids = c.get_children(path, watch=lambda e: changed.set())
                except Exception:
                    pass  # deleted in between: the exists watch has fired
            if len(kids) == n:
                return sorted(kids)
            changed.wait(WAIT)
        raise RuntimeError("timed out waiting for %d children of %s" % (n, path))
    finally:
        timer.cancel()


def scenario_lock(hosts):
    k, m = 4, 25
    counter = "/kazoo/lock/counter"
    admin = client(hosts)
    admin.create(counter, b"0", makepath=True)
    holders = [0]
    max_holders = [0]
    mu = threading.Lock()

    def worker(i):
        c = client(hosts)
        lock = Lock(c, "/kazoo/lock/lock", "w%d" % i)
        for _ in range(m):
            if not lock.acquire(timeout=WAIT):
                raise RuntimeError("acquire failed")
            try:
                with mu:
                    holders[0] += 1
                    max_holders[0] = max(max_holders[0], holders[0])
                data, _ = c.get(counter)
                c.set(counter, str(int(data) + 1).encode())
                with mu:
                    holders[0] -= 1
            finally:
                lock.release()

    run_all(k, worker)
    value = int(admin.get(counter)[0])
    out("lock.counter", value)
    check("lock.counter_exact", value == k * m)
    check("lock.one_holder_at_a_time", max_holders[0] == 1)
    out("lock.children_after", len(admin.get_children("/kazoo/lock/lock")))

    held = Lock(admin, "/kazoo/lock/lock", "holder")
    out("lock.acquire", held.acquire(timeout=WAIT))
    other = client(hosts)
    contender = Lock(other, "/kazoo/lock/lock", "contender")
    out("lock.nonblocking_acquire", contender.acquire(blocking=False))
    try:
        contender.acquire(timeout=0.3)
        out("lock.timed_acquire", "acquired")
    except LockTimeout:
        out("lock.timed_acquire", "LockTimeout")
    out("lock.contenders", held.contenders())
    out("lock.release", held.release())
    out("lock.acquire_after_release", contender.acquire(timeout=WAIT))
    out("lock.contenders_after", contender.contenders())
    contender.release()
    out("lock.children_final", len(admin.get_children("/kazoo/lock/lock")))


def scenario_election(hosts):
    path = "/kazoo/election"
    n = 3
    observer = client(hosts)
    elected = queue.Queue()
    step_down = {}
    leaders = [0]
    max_leaders = [0]
    mu = threading.Lock()
    threads = []

    def lead(ident):
        with mu:
            leaders[0] += 1
            max_leaders[0] = max(max_leaders[0], leaders[0])
        elected.put(ident)
        step_down[ident].wait(WAIT)
        with mu:
            leaders[0] -= 1

    for i in range(n):
        ident = "p%d" % i
        step_down[ident] = threading.Event()
        e = Election(client(hosts), path, ident)
        t = threading.Thread(target=e.run, args=(lead, ident), daemon=True)
        t.start()
        threads.append(t)
        # Contenders join one at a time, so the order of leadership is fixed.
        await_children(observer, path, i + 1)
    out("election.contenders", Election(observer, path).contenders())
    for i in range(n):
        leader = take(elected, "election")
        out("election.leader", leader)
        with mu:
            check("election.one_leader_round%d" % i, leaders[0] == 1)
        step_down[leader].set()
        await_children(observer, path, n - i - 1)
        out("election.contenders_round%d" % i, Election(observer, path).contenders())
    for t in threads:
        t.join(WAIT)
    check("election.never_two_leaders", max_leaders[0] == 1)
    out("election.extra", elected.qsize())


def scenario_barrier(hosts):
    path = "/kazoo/barrier"
    n = 3
    admin = client(hosts)
    b = Barrier(admin, path)
    out("barrier.wait_without_barrier", b.wait(timeout=1))
    b.create()
    out("barrier.wait_while_set", Barrier(client(hosts), path).wait(timeout=0.3))
    waiters = [client(hosts) for _ in range(n)]
    results = []
    ready = threading.Barrier(n + 1, timeout=WAIT)

    def waiter(i):
        bb = Barrier(waiters[i], path)
        ready.wait()
        results.append(bb.wait(timeout=WAIT))

    def remover(_):
        ready.wait()
        b.remove()

    run_all(n + 1, lambda i: waiter(i) if i < n else remover(i))
    out("barrier.released", sum(1 for r in results if r))
    out("barrier.exists_after_remove", admin.exists(path) is not None)


def scenario_double_barrier(hosts):
    path = "/kazoo/doublebarrier"
    n = 3
    members = [client(hosts) for _ in range(n)]
    arrived, leaving = [0], [0]
    early_enter, early_leave = [0], [0]
    mu = threading.Lock()

    def member(i):
        db = DoubleBarrier(members[i], path, n, "m%d" % i)
        with mu:
            arrived[0] += 1
        db.enter()
        with mu:
            if arrived[0] != n:
                early_enter[0] += 1
            leaving[0] += 1
        db.leave()
        with mu:
            if leaving[0] != n:
                early_leave[0] += 1

    run_all(n, member)
    out("doublebarrier.members", n)
    check("doublebarrier.entered_after_all_arrived", early_enter[0] == 0)
    check("doublebarrier.left_after_all_leaving", early_leave[0] == 0)
    out("doublebarrier.children_after", members[0].get_children(path))


def scenario_counter(hosts):
    path = "/kazoo/counter"
    n, m = 3, 20
    clients = [client(hosts) for _ in range(n)]

    def worker(i):
        c = Counter(clients[i], path)
        for _ in range(m):
            c += 1

    run_all(n, worker)
    c = Counter(clients[0], path)
    out("counter.value", c.value)
    check("counter.exact", c.value == n * m)
    c -= 5
    out("counter.after_decrement", c.value)
    out("counter.pre_value", c.pre_value)
    out("counter.post_value", c.post_value)
    data, stat = clients[0].get(path)
    out("counter.raw", data.decode())
    out("counter.version", stat.version)
    f = Counter(clients[0], "/kazoo/counter-float", default=0.0)
    f += 1.5
    out("counter.float", f.value)
    cur = Counter(clients[0], "/kazoo/counter-curator", support_curator=True)
    cur += 3
    cur += 4
    out("counter.curator_value", cur.value)
    out("counter.curator_raw_len", len(clients[0].get("/kazoo/counter-curator")[0]))


def scenario_queue(hosts):
    path = "/kazoo/queue"
    items, first, consumers = 30, 10, 3
    producer = client(hosts)
    q = Queue(producer, path)
    for i in range(items):
        q.put(("item-%03d" % i).encode())
    out("queue.len", len(q))
    fifo = all(q.get() == ("item-%03d" % i).encode() for i in range(first))
    check("queue.fifo_single_consumer", fifo)
    got = {}
    mu = threading.Lock()
    clients = [client(hosts) for _ in range(consumers)]

    def consumer(i):
        mine = Queue(clients[i], path)
        while True:
            v = mine.get()  # None when the queue is empty
            if v is None:
                return
            with mu:
                got[v] = got.get(v, 0) + 1

    run_all(consumers, consumer)
    out("queue.delivered", sum(got.values()))
    check("queue.exactly_once", len(got) == items - first and all(c == 1 for c in got.values()))
    out("queue.get_empty", q.get())
    q.put(b"low", priority=200)
    q.put(b"high", priority=10)
    q.put(b"mid", priority=100)
    out("queue.priority_order", [q.get().decode() for _ in range(3)])
    out("queue.children_after", producer.get_children(path))


def scenario_locking_queue(hosts):
    path = "/kazoo/lockingqueue"
    items, consumers = 20, 3
    producer = client(hosts)
    q = LockingQueue(producer, path)
    q.put_all([("job-%03d" % i).encode() for i in range(items)])
    out("lockingqueue.len", len(q))

    # An entry taken but released (not consumed) goes back to the queue.
    a = LockingQueue(client(hosts), path)
    first = a.get(timeout=WAIT)
    out("lockingqueue.first", first.decode())
    out("lockingqueue.holds_lock", a.holds_lock())
    out("lockingqueue.release", a.release())
    b = LockingQueue(client(hosts), path)
    again = b.get(timeout=WAIT)
    out("lockingqueue.redelivered_same", again == first)
    out("lockingqueue.consume", b.consume())

    got = {}
    total = [1]
    mu = threading.Lock()
    clients = [client(hosts) for _ in range(consumers)]

    def consumer(i):
        mine = LockingQueue(clients[i], path)
        for _ in range(4 * items):  # bounded: each round takes one entry or times out
            with mu:
                if total[0] >= items:
                    return
            v = mine.get(timeout=0.5)
            if v is None:
                continue
            if not mine.consume():
                raise RuntimeError("consume failed for %r" % (v,))
            with mu:
                got[v] = got.get(v, 0) + 1
                total[0] += 1

    run_all(consumers, consumer)
    out("lockingqueue.delivered", sum(got.values()) + 1)
    check("lockingqueue.exactly_once", len(got) == items - 1 and first not in got
          and all(c == 1 for c in got.values()))
    out("lockingqueue.get_empty", q.get(timeout=0.2))
    out("lockingqueue.len_after", len(q))


def scenario_party(hosts):
    for kind, cls in (("party", Party), ("shallowparty", ShallowParty)):
        path = "/kazoo/" + kind
        members = [cls(client(hosts), path, "member-%d" % i) for i in range(3)]
        for m in members:
            m.join()
        observer = cls(client(hosts), path)
        out(kind + ".len", len(observer))
        out(kind + ".members", sorted(observer))
        members[1].leave()
        out(kind + ".len_after_leave", len(observer))
        out(kind + ".members_after_leave", sorted(observer))
        members[0].client.stop()  # session ends: its ephemeral membership goes
        members[0].client.close()
        out(kind + ".members_after_session_end", sorted(observer))


SCENARIOS = {
    "lock": scenario_lock,
    "election": scenario_election,
    "barrier": scenario_barrier,
    "doublebarrier": scenario_double_barrier,
    "counter": scenario_counter,
    "queue": scenario_queue,
    "lockingqueue": scenario_locking_queue,
    "party": scenario_party,
}


def main():
    global _failed
    if len(sys.argv) != 3 or sys.argv[2] not in SCENARIOS:
        sys.stderr.write("usage: recipes.py <connect-string> {%s}\n" % "|".join(SCENARIOS))
        sys.exit(2)

    def watchdog():
        out("FAIL", "watchdog timeout")
        os._exit(3)

    timer = threading.Timer(WATCHDOG, watchdog)
    timer.daemon = True
    timer.start()
    out("scenario", sys.argv[2])
    try:
        SCENARIOS[sys.argv[2]](sys.argv[1])
    except Exception as e:
        out("FAIL", "exception %r" % (e,))
        import traceback
        traceback.print_exc()
        _failed = True
    for c in _clients:
        try:
            c.stop()
            c.close()
        except Exception:
            pass  # already stopped (party ends sessions on purpose)
    out("done", "failed" if _failed else "ok")
    sys.stdout.flush()
    os._exit(1 if _failed else 0)


if __name__ == "__main__":
    main()
