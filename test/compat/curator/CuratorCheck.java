// CuratorCheck drives Apache Curator 5.4 recipes against one ZooKeeper-compatible
// server and prints a deterministic transcript: one key=value line per step, no
// timestamps, no session ids, nothing that depends on scheduling. The compat tests in
// test/compat/recipes_curator_test.go compile and run it against Apache ZooKeeper and
// Warden and compare the transcripts.
//
// Usage: java -cp <curator, zookeeper, guava, netty, slf4j jars> CuratorCheck <connect-string> <scenario>
//
// Every wait is bounded; a watchdog halts the JVM with exit code 3 after 60 s. A
// violated invariant prints "<name>=FAILED" and the exit code becomes 1.
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.regex.Pattern;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.framework.recipes.watch.PersistentWatcher;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

public final class CuratorCheck {
    private static final long WAIT_SECONDS = 10;
    private static final long WATCHDOG_SECONDS = 60;

    private static String connect;
    private static final List<CuratorFramework> clients = Collections.synchronizedList(new ArrayList<>());
    private static volatile boolean failed;

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: CuratorCheck <connect-string> <scenario>");
            System.exit(2);
        }
        connect = args[0];
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(WATCHDOG_SECONDS));
            } catch (InterruptedException e) {
                return;
            }
            out("FAIL", "watchdog timeout");
            System.out.flush();
            Runtime.getRuntime().halt(3);
        });
        watchdog.setDaemon(true);
        watchdog.start();

        out("scenario", args[1]);
        try {
            switch (args[1]) {
                case "mutex": mutex(); break;
                case "leader": leader(); break;
                case "barrier": barrier(); break;
                case "sharedcount": sharedCount(); break;
                case "queue": queue(); break;
                case "cache": cache(); break;
                case "transaction": transaction(); break;
                case "protection": protection(); break;
                case "persistentwatch": persistentWatch(); break;
                default:
                    System.err.println("unknown scenario " + args[1]);
                    System.exit(2);
            }
        } catch (Throwable e) {
            out("FAIL", "exception " + e);
            e.printStackTrace();
            failed = true;
        }
        synchronized (clients) {
            for (CuratorFramework c : clients) {
                c.close();
            }
        }
        out("done", failed ? "failed" : "ok");
        System.out.flush();
        Runtime.getRuntime().halt(failed ? 1 : 0);
    }

    private static synchronized void out(String key, Object value) {
        System.out.println(key + "=" + value);
    }

    /** check prints name=ok, or name=FAILED and marks the run failed. */
    private static void check(String name, boolean ok) {
        out(name, ok ? "ok" : "FAILED");
        if (!ok) {
            failed = true;
        }
    }

    private static CuratorFramework client(String connectString) throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs(15000)
                .connectionTimeoutMs(5000)
                .retryPolicy(new RetryNTimes(5, 200))
                .build();
        clients.add(c);
        c.start();
        if (!c.blockUntilConnected((int) WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("not connected to " + connectString);
        }
        return c;
    }

    private static CuratorFramework client() throws InterruptedException {
        return client(connect);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String str(byte[] b) {
        return b == null ? "<null>" : new String(b, StandardCharsets.UTF_8);
    }

    private static <T> T take(BlockingQueue<T> q, String what) throws InterruptedException {
        T v = q.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        if (v == null) {
            throw new IllegalStateException("timed out waiting for " + what);
        }
        return v;
    }

    private static void await(CountDownLatch l, String what) throws InterruptedException {
        if (!l.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("timed out waiting for " + what);
        }
    }

    /** Worker is a task body run on its own thread by runAll. */
    private interface Worker {
        void run(int i) throws Exception;
    }

    /** runAll runs n workers concurrently and waits (bounded) for all of them. */
    private static void runAll(int n, Worker w) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        Throwable[] errs = new Throwable[n];
        for (int i = 0; i < n; i++) {
            final int id = i;
            Thread t = new Thread(() -> {
                try {
                    w.run(id);
                } catch (Throwable e) {
                    errs[id] = e;
                }
            });
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3 * WAIT_SECONDS);
        for (Thread t : threads) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (t.isAlive()) {
                throw new IllegalStateException("worker did not finish in time");
            }
        }
        for (Throwable e : errs) {
            if (e != null) {
                throw new IllegalStateException("worker failed: " + e, e);
            }
        }
    }

    /** awaitChildren waits, using child watches, until path has exactly n children. */
    private static List<String> awaitChildren(CuratorFramework c, String path, int n) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (true) {
            CountDownLatch changed = new CountDownLatch(1);
            Watcher w = e -> changed.countDown();
            List<String> kids = List.of();
            if (c.checkExists().usingWatcher(w).forPath(path) != null) {
                try {
                    kids = c.getChildren().usingWatcher(w).forPath(path);
                } catch (KeeperException.NoNodeException e) {
                    // Deleted in between: the exists watch has fired, so wait below returns.
                }
            }
            if (kids.size() == n) {
                kids = new ArrayList<>(kids);
                Collections.sort(kids);
                return kids;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0 || !changed.await(left, TimeUnit.NANOSECONDS)) {
                throw new IllegalStateException("timed out waiting for " + n + " children of " + path + ", have " + kids);
            }
        }
    }

    // (a) InterProcessMutex: K sessions x M increments of a counter under the lock.
    private static void mutex() throws Exception {
        final int k = 4, m = 25;
        final String lockPath = "/curator/mutex/lock", counter = "/curator/mutex/counter";
        CuratorFramework admin = client();
        admin.create().creatingParentsIfNeeded().forPath(counter, bytes("0"));
        AtomicInteger holders = new AtomicInteger(), maxHolders = new AtomicInteger();
        runAll(k, i -> {
            CuratorFramework c = client();
            InterProcessMutex lock = new InterProcessMutex(c, lockPath);
            for (int j = 0; j < m; j++) {
                if (!lock.acquire(WAIT_SECONDS, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("acquire timed out");
                }
                try {
                    maxHolders.accumulateAndGet(holders.incrementAndGet(), Math::max);
                    int v = Integer.parseInt(str(c.getData().forPath(counter)));
                    c.setData().forPath(counter, bytes(Integer.toString(v + 1)));
                    holders.decrementAndGet();
                } finally {
                    lock.release();
                }
            }
        });
        out("mutex.counter", str(admin.getData().forPath(counter)));
        check("mutex.counter_exact", Integer.parseInt(str(admin.getData().forPath(counter))) == k * m);
        check("mutex.one_holder_at_a_time", maxHolders.get() == 1);
        out("mutex.lock_children_after", admin.getChildren().forPath(lockPath).size());

        // Reentrancy and contention: a second session cannot take a held lock.
        InterProcessMutex held = new InterProcessMutex(admin, lockPath);
        out("mutex.acquire", held.acquire(WAIT_SECONDS, TimeUnit.SECONDS));
        out("mutex.reacquire_same_thread", held.acquire(WAIT_SECONDS, TimeUnit.SECONDS));
        out("mutex.is_owned", held.isAcquiredInThisProcess());
        CuratorFramework other = client();
        InterProcessMutex contender = new InterProcessMutex(other, lockPath);
        out("mutex.contended_acquire", contender.acquire(300, TimeUnit.MILLISECONDS));
        out("mutex.lock_children_while_held", admin.getChildren().forPath(lockPath).size());
        held.release();
        held.release();
        out("mutex.acquire_after_release", contender.acquire(WAIT_SECONDS, TimeUnit.SECONDS));
        contender.release();
        out("mutex.lock_children_final", admin.getChildren().forPath(lockPath).size());
    }

    // (b) LeaderLatch with 3 participants: one leader at a time; closing the leader
    // elects the next participant in creation order.
    private static void leader() throws Exception {
        final String path = "/curator/leader";
        final int n = 3;
        BlockingQueue<String> elected = new LinkedBlockingQueue<>();
        List<LeaderLatch> latches = new ArrayList<>();
        CuratorFramework observer = client();
        for (int i = 0; i < n; i++) {
            final String id = "p" + i;
            LeaderLatch latch = new LeaderLatch(client(), path, id);
            latch.addListener(new LeaderLatchListener() {
                @Override
                public void isLeader() {
                    elected.add(id);
                }

                @Override
                public void notLeader() {
                }
            });
            latch.start();
            latches.add(latch);
            // Start participants one at a time so the election order is fixed.
            awaitChildren(observer, path, i + 1);
        }
        out("leader.participants", latches.get(0).getParticipants().size());
        for (int round = 0; round < n; round++) {
            String leaderId = take(elected, "leader election");
            out("leader.elected", leaderId);
            int leaders = 0;
            LeaderLatch leader = null;
            for (LeaderLatch l : latches) {
                if (l.hasLeadership()) {
                    leaders++;
                    leader = l;
                }
            }
            check("leader.exactly_one_round" + round, leaders == 1 && leader.getId().equals(leaderId));
            boolean agreed = true;
            for (LeaderLatch l : latches) {
                agreed &= l.getLeader().getId().equals(leaderId) && l.getLeader().isLeader();
            }
            check("leader.all_agree_round" + round, agreed);
            out("leader.participants_round" + round, latches.size());
            latches.remove(leader);
            leader.close();
            awaitChildren(observer, path, latches.size());
        }
        out("leader.extra_elections", elected.size());
        out("leader.children_final", observer.getChildren().forPath(path).size());
    }

    // (c) DistributedBarrier and DistributedDoubleBarrier.
    private static void barrier() throws Exception {
        final String path = "/curator/barrier";
        final int n = 3;
        CuratorFramework admin = client();
        DistributedBarrier controller = new DistributedBarrier(admin, path);
        out("barrier.wait_without_barrier", controller.waitOnBarrier(1, TimeUnit.SECONDS));
        controller.setBarrier();
        out("barrier.wait_while_set", new DistributedBarrier(client(), path).waitOnBarrier(300, TimeUnit.MILLISECONDS));
        CountDownLatch waiting = new CountDownLatch(n);
        AtomicInteger released = new AtomicInteger();
        List<CuratorFramework> waiters = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            waiters.add(client());
        }
        Thread remover = new Thread(() -> {
            try {
                await(waiting, "barrier waiters");
                // Each waiter has set its watch on the barrier node once it has read it.
                controller.removeBarrier();
            } catch (Exception e) {
                out("FAIL", "removeBarrier " + e);
                failed = true;
            }
        });
        remover.setDaemon(true);
        remover.start();
        runAll(n, i -> {
            DistributedBarrier b = new DistributedBarrier(waiters.get(i), path);
            waiting.countDown();
            if (b.waitOnBarrier(WAIT_SECONDS, TimeUnit.SECONDS)) {
                released.incrementAndGet();
            }
        });
        out("barrier.released", released.get());
        out("barrier.exists_after_remove", admin.checkExists().forPath(path) != null);

        // Double barrier: nobody enters before all n arrived; nobody leaves before all
        // n started leaving.
        final String dpath = "/curator/doublebarrier";
        AtomicInteger arrived = new AtomicInteger(), leaving = new AtomicInteger();
        AtomicInteger enteredEarly = new AtomicInteger(), leftEarly = new AtomicInteger();
        List<CuratorFramework> members = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            members.add(client());
        }
        runAll(n, i -> {
            DistributedDoubleBarrier b = new DistributedDoubleBarrier(members.get(i), dpath, n);
            arrived.incrementAndGet();
            if (!b.enter(WAIT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("enter timed out");
            }
            if (arrived.get() != n) {
                enteredEarly.incrementAndGet();
            }
            leaving.incrementAndGet();
            if (!b.leave(WAIT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("leave timed out");
            }
            if (leaving.get() != n) {
                leftEarly.incrementAndGet();
            }
        });
        out("doublebarrier.members", n);
        check("doublebarrier.entered_after_all_arrived", enteredEarly.get() == 0);
        check("doublebarrier.left_after_all_leaving", leftEarly.get() == 0);
        out("doublebarrier.children_after", admin.getChildren().forPath(dpath).size());

        // Only one of two members arrives: enter times out.
        DistributedDoubleBarrier lonely = new DistributedDoubleBarrier(admin, "/curator/doublebarrier-lonely", 2);
        out("doublebarrier.lonely_enter", lonely.enter(300, TimeUnit.MILLISECONDS));
    }

    // (d) SharedCount: concurrent increments with trySetCount from several sessions.
    private static void sharedCount() throws Exception {
        final String path = "/curator/sharedcount";
        final int n = 3, m = 20;
        List<SharedCount> counts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            SharedCount sc = new SharedCount(client(), path, 0);
            sc.start();
            counts.add(sc);
        }
        out("sharedcount.initial", counts.get(0).getCount());
        runAll(n, i -> {
            SharedCount sc = counts.get(i);
            for (int j = 0; j < m; j++) {
                boolean done = false;
                for (int attempt = 0; attempt < 1000 && !done; attempt++) {
                    VersionedValue<Integer> v = sc.getVersionedValue();
                    done = sc.trySetCount(v, v.getValue() + 1);
                }
                if (!done) {
                    throw new IllegalStateException("trySetCount never succeeded");
                }
            }
        });
        CuratorFramework reader = client();
        Stat stat = new Stat();
        byte[] raw = reader.getData().storingStatIn(stat).forPath(path);
        int value = java.nio.ByteBuffer.wrap(raw).getInt();
        out("sharedcount.final", value);
        out("sharedcount.bytes", raw.length);
        out("sharedcount.version", stat.getVersion());
        check("sharedcount.exact", value == n * m);

        SharedCount fresh = new SharedCount(reader, path, 0);
        fresh.start();
        VersionedValue<Integer> v = fresh.getVersionedValue();
        out("sharedcount.fresh_value", v.getValue());
        out("sharedcount.tryset_current", fresh.trySetCount(v, 1000));
        out("sharedcount.tryset_stale", fresh.trySetCount(v, 2000));
        out("sharedcount.after_stale", fresh.getCount());
        fresh.setCount(7);
        out("sharedcount.after_set", fresh.getCount());
        fresh.close();
        for (SharedCount sc : counts) {
            sc.close();
        }
    }

    // (e) SimpleDistributedQueue (FIFO, exactly-once to concurrent consumers) and
    // DistributedQueue (consumer callbacks, exactly once).
    private static void queue() throws Exception {
        final String path = "/curator/simplequeue";
        final int items = 30, first = 10, consumers = 3;
        CuratorFramework producer = client();
        SimpleDistributedQueue q = new SimpleDistributedQueue(producer, path);
        for (int i = 0; i < items; i++) {
            q.offer(bytes(String.format("item-%03d", i)));
        }
        boolean fifo = true;
        for (int i = 0; i < first; i++) {
            byte[] b = q.poll(WAIT_SECONDS, TimeUnit.SECONDS);
            fifo &= b != null && str(b).equals(String.format("item-%03d", i));
        }
        check("simplequeue.fifo_single_consumer", fifo);
        Map<String, Integer> got = new ConcurrentHashMap<>();
        AtomicInteger total = new AtomicInteger();
        List<CuratorFramework> cs = new ArrayList<>();
        for (int i = 0; i < consumers; i++) {
            cs.add(client());
        }
        runAll(consumers, i -> {
            SimpleDistributedQueue mine = new SimpleDistributedQueue(cs.get(i), path);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            while (total.get() < items - first && System.nanoTime() < deadline) {
                byte[] b = mine.poll(200, TimeUnit.MILLISECONDS);
                if (b != null) {
                    got.merge(str(b), 1, Integer::sum);
                    total.incrementAndGet();
                }
            }
        });
        out("simplequeue.delivered", total.get());
        out("simplequeue.distinct", got.size());
        check("simplequeue.exactly_once", got.size() == items - first && total.get() == items - first
                && got.values().stream().allMatch(c -> c == 1));
        out("simplequeue.poll_empty", q.poll(100, TimeUnit.MILLISECONDS) == null);
        out("simplequeue.children_after", producer.getChildren().forPath(path).size());

        final String dpath = "/curator/queue";
        Map<String, Integer> delivered = new ConcurrentHashMap<>();
        CountDownLatch all = new CountDownLatch(items);
        QueueSerializer<String> ser = new QueueSerializer<String>() {
            @Override
            public byte[] serialize(String item) {
                return bytes(item);
            }

            @Override
            public String deserialize(byte[] b) {
                return str(b);
            }
        };
        QueueConsumer<String> consumer = new QueueConsumer<String>() {
            @Override
            public void consumeMessage(String message) {
                delivered.merge(message, 1, Integer::sum);
                all.countDown();
            }

            @Override
            public void stateChanged(CuratorFramework client, ConnectionState newState) {
            }
        };
        List<DistributedQueue<String>> queues = new ArrayList<>();
        for (int i = 0; i < consumers; i++) {
            DistributedQueue<String> dq = QueueBuilder.builder(client(), consumer, ser, dpath).buildQueue();
            dq.start();
            queues.add(dq);
        }
        DistributedQueue<String> put = QueueBuilder.builder(producer, null, ser, dpath).buildQueue();
        put.start();
        for (int i = 0; i < items; i++) {
            put.put(String.format("msg-%03d", i));
        }
        await(all, "distributed queue delivery");
        out("queue.distinct", delivered.size());
        check("queue.exactly_once", delivered.size() == items && delivered.values().stream().allMatch(c -> c == 1));
        put.close();
        for (DistributedQueue<String> dq : queues) {
            dq.close();
        }
        out("queue.children_after", producer.getChildren().forPath(dpath).size());
    }

    // (f) CuratorCache on a subtree, including a connection loss in the middle: the
    // client re-registers its persistent recursive watch (SetWatches2) and the cache
    // rebuilds, reporting the change it missed.
    private static void cache() throws Exception {
        final String root = "/curator/cache";
        CuratorFramework writer = client();
        writer.create().creatingParentsIfNeeded().forPath(root, bytes("root"));
        writer.create().forPath(root + "/pre", bytes("p"));
        Proxy proxy = new Proxy(connect);
        CuratorFramework c = client(proxy.address());
        BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
        c.getConnectionStateListenable().addListener((cl, s) -> recordState(states, s));
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        List<String> initial = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch initialized = new CountDownLatch(1);
        CuratorCache cache = CuratorCache.build(c, root);
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreates(n -> (initialized.getCount() > 0 ? initial : events).add("create " + n.getPath() + " " + str(n.getData())))
                .forChanges((o, n) -> events.add("change " + n.getPath() + " " + str(o.getData()) + "->" + str(n.getData())
                        + " version=" + n.getStat().getVersion()))
                .forDeletes(o -> events.add("delete " + o.getPath()))
                .forInitialized(initialized::countDown)
                .build());
        cache.start();
        await(initialized, "cache initialized");
        List<String> sorted = new ArrayList<>(initial);
        Collections.sort(sorted);
        for (String e : sorted) {
            out("cache.initial", e);
        }
        writer.create().forPath(root + "/a", bytes("1"));
        out("cache.event", take(events, "create a"));
        writer.setData().forPath(root + "/a", bytes("2"));
        out("cache.event", take(events, "change a"));
        writer.create().forPath(root + "/a/b", bytes("x"));
        out("cache.event", take(events, "create a/b"));
        writer.create().withMode(CreateMode.EPHEMERAL).forPath(root + "/a/b/eph", bytes("e"));
        out("cache.event", take(events, "create eph"));
        writer.delete().forPath(root + "/a/b/eph");
        out("cache.event", take(events, "delete eph"));
        writer.delete().forPath(root + "/a/b");
        out("cache.event", take(events, "delete a/b"));
        writer.delete().forPath(root + "/a");
        out("cache.event", take(events, "delete a"));
        ChildData pre = cache.get(root + "/pre").orElse(null);
        out("cache.get_pre", pre == null ? "<absent>" : str(pre.getData()));
        out("cache.size", cache.size());

        // Lose the connection (the session survives), change the tree meanwhile.
        proxy.pause();
        out("cache.state", take(states, "suspended"));
        writer.create().forPath(root + "/missed", bytes("m"));
        proxy.resume();
        out("cache.state", take(states, "reconnected"));
        out("cache.event", take(events, "missed create reported by rebuild"));
        writer.setData().forPath(root + "/missed", bytes("n"));
        out("cache.event", take(events, "change after reconnect"));
        writer.delete().forPath(root + "/missed");
        out("cache.event", take(events, "delete after reconnect"));
        out("cache.pending_events", events.size());
        cache.close();
        proxy.close();
    }

    private static String describe(CuratorTransactionResult r) {
        Stat s = r.getResultStat();
        return r.getType() + " " + r.getForPath() + " resultPath=" + r.getResultPath() + " error=" + r.getError()
                + (s == null ? "" : " version=" + s.getVersion() + " numChildren=" + s.getNumChildren());
    }

    // (g) Transactions via client.transaction().forOperations(...): success, failure,
    // and the background form.
    private static void transaction() throws Exception {
        CuratorFramework c = client();
        c.create().creatingParentsIfNeeded().forPath("/curator/txn");
        List<CuratorOp> ok = List.of(
                c.transactionOp().create().forPath("/curator/txn/a", bytes("1")),
                c.transactionOp().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL).forPath("/curator/txn/seq-", bytes("s")),
                c.transactionOp().setData().forPath("/curator/txn/a", bytes("2")),
                c.transactionOp().check().withVersion(1).forPath("/curator/txn/a"),
                c.transactionOp().create().forPath("/curator/txn/b"),
                c.transactionOp().delete().forPath("/curator/txn/b"));
        for (CuratorTransactionResult r : c.transaction().forOperations(ok)) {
            out("txn.ok", describe(r));
        }
        out("txn.a", str(c.getData().forPath("/curator/txn/a")));

        List<CuratorOp> bad = List.of(
                c.transactionOp().create().forPath("/curator/txn/c", bytes("c")),
                c.transactionOp().check().withVersion(5).forPath("/curator/txn/a"),
                c.transactionOp().delete().forPath("/curator/txn/missing"));
        try {
            c.transaction().forOperations(bad);
            out("txn.bad", "no exception");
        } catch (KeeperException e) {
            out("txn.bad_exception", e.code());
            List<OpResult> results = e.getResults();
            if (results != null) {
                for (OpResult r : results) {
                    out("txn.bad_result", r instanceof OpResult.ErrorResult
                            ? "error " + ((OpResult.ErrorResult) r).getErr() : r.getClass().getSimpleName());
                }
            }
        }
        out("txn.c_exists", c.checkExists().forPath("/curator/txn/c") != null);

        BlockingQueue<String> bg = new LinkedBlockingQueue<>();
        List<CuratorOp> bad2 = List.of(
                c.transactionOp().setData().forPath("/curator/txn/a", bytes("3")),
                c.transactionOp().create().forPath("/curator/txn/a", bytes("dup")));
        c.transaction().inBackground((cl, event) -> {
            StringBuilder sb = new StringBuilder("rc=" + event.getResultCode() + " type=" + event.getType());
            if (event.getOpResults() != null) {
                for (CuratorTransactionResult r : event.getOpResults()) {
                    sb.append(" [").append(describe(r)).append("]");
                }
            }
            bg.add(sb.toString());
        }).forOperations(bad2);
        out("txn.background_bad", take(bg, "background transaction"));
        out("txn.a_after", str(c.getData().forPath("/curator/txn/a")));
        out("txn.children", new TreeSet<>(c.getChildren().forPath("/curator/txn")));
    }

    private static final Pattern PROTECTED = Pattern.compile(
            "_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-");

    // (h) creatingParentContainersIfNeeded and protected ephemeral sequential nodes.
    private static void protection() throws Exception {
        CuratorFramework c = client();
        long session = c.getZookeeperClient().getZooKeeper().getSessionId();
        String p = c.create().creatingParentContainersIfNeeded().forPath("/curator/h/x/y/z", bytes("d"));
        out("protection.created", p);
        for (String parent : List.of("/curator", "/curator/h", "/curator/h/x", "/curator/h/x/y", "/curator/h/x/y/z")) {
            Stat s = c.checkExists().forPath(parent);
            // A container's stat shows ephemeralOwner 0 to clients (the server keeps a
            // marker internally but DataTree.getClientEphemeralOwner hides it).
            out("protection.owner " + parent, String.format("0x%x", s.getEphemeralOwner()));
        }
        Function<String, String> norm = path -> PROTECTED.matcher(path).replaceFirst("_c_<uuid>-");
        for (int i = 0; i < 2; i++) {
            String created = c.create().creatingParentContainersIfNeeded().withProtection()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath("/curator/h/prot/node-", bytes("v" + i));
            out("protection.path", norm.apply(created));
            Stat s = c.checkExists().forPath(created);
            check("protection.ephemeral_owner_is_session" + i, s.getEphemeralOwner() == session);
        }
        Stat parent = c.checkExists().forPath("/curator/h/prot");
        out("protection.prot_parent_owner", String.format("0x%x", parent.getEphemeralOwner()));
        out("protection.prot_parent_children", parent.getNumChildren());
        String plain = c.create().withProtection().withMode(CreateMode.PERSISTENT).forPath("/curator/h/prot/plain", bytes("q"));
        out("protection.plain", norm.apply(plain));
        c.close();
        CuratorFramework d = client();
        List<String> left = new ArrayList<>();
        for (String k : d.getChildren().forPath("/curator/h/prot")) {
            left.add(norm.apply(k));
        }
        Collections.sort(left);
        out("protection.after_close", left);
    }

    /**
     * recordState queues a connection state change, except the initial CONNECTED: it is
     * delivered asynchronously, before or after the listener is added.
     */
    private static void recordState(BlockingQueue<ConnectionState> q, ConnectionState s) {
        if (s != ConnectionState.CONNECTED) {
            q.add(s);
        }
    }

    /** record queues a node event; connection-state events (type None) are skipped. */
    private static void record(BlockingQueue<String> q, WatchedEvent e) {
        if (e.getType() != Watcher.Event.EventType.None) {
            q.add(e.getType() + " " + e.getPath());
        }
    }

    // (i) PersistentWatcher, recursive and not, plus reconnection: persistent watches
    // are re-registered with SetWatches2 (no catch-up events), and a standard data
    // watch set before the disconnect fires for a change made while disconnected.
    private static void persistentWatch() throws Exception {
        CuratorFramework writer = client();
        Proxy proxy = new Proxy(connect);
        CuratorFramework c = client(proxy.address());
        BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
        c.getConnectionStateListenable().addListener((cl, s) -> recordState(states, s));

        BlockingQueue<String> rec = new LinkedBlockingQueue<>(), flat = new LinkedBlockingQueue<>();
        // A PersistentWatcher (re)sets its watch on start and on every CONNECTED or
        // RECONNECTED state; the initial CONNECTED may come before or after start(), so
        // the number of resets is not deterministic: count them, print only that they came.
        Semaphore recursiveResets = new Semaphore(0), singleResets = new Semaphore(0);
        PersistentWatcher recursive = new PersistentWatcher(c, "/pw", true);
        recursive.getListenable().addListener(e -> record(rec, e));
        recursive.getResetListenable().addListener(recursiveResets::release);
        recursive.start();
        out("pw.recursive_set", recursiveResets.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS));
        PersistentWatcher single = new PersistentWatcher(c, "/pw2", false);
        single.getListenable().addListener(e -> record(flat, e));
        single.getResetListenable().addListener(singleResets::release);
        single.start();
        out("pw.single_set", singleResets.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS));

        writer.create().forPath("/pw", bytes("0"));
        out("pw.recursive", take(rec, "create /pw"));
        writer.create().forPath("/pw/a", bytes("1"));
        out("pw.recursive", take(rec, "create /pw/a"));
        writer.create().forPath("/pw/a/b");
        out("pw.recursive", take(rec, "create /pw/a/b"));
        writer.setData().forPath("/pw/a", bytes("2"));
        out("pw.recursive", take(rec, "set /pw/a"));
        writer.delete().forPath("/pw/a/b");
        out("pw.recursive", take(rec, "delete /pw/a/b"));
        writer.delete().forPath("/pw/a");
        out("pw.recursive", take(rec, "delete /pw/a"));

        writer.create().forPath("/pw2", bytes("0"));
        out("pw.single", take(flat, "create /pw2"));
        writer.create().forPath("/pw2/c");
        out("pw.single", take(flat, "child of /pw2"));
        writer.setData().forPath("/pw2/c", bytes("ignored"));
        writer.setData().forPath("/pw2", bytes("1"));
        out("pw.single", take(flat, "set /pw2 (the child's change is not reported)"));
        writer.delete().forPath("/pw2/c");
        out("pw.single", take(flat, "child deleted"));

        // A standard one-shot data watch, registered before the disconnect.
        writer.create().forPath("/oneshot", bytes("0"));
        BlockingQueue<String> oneshot = new LinkedBlockingQueue<>();
        c.getData().usingWatcher((Watcher) e -> record(oneshot, e)).forPath("/oneshot");

        proxy.pause();
        out("pw.state", take(states, "suspended"));
        writer.create().forPath("/pw/missed");
        writer.setData().forPath("/oneshot", bytes("1"));
        proxy.resume();
        out("pw.state", take(states, "reconnected"));
        out("pw.oneshot_after_reconnect", take(oneshot, "one-shot watch caught up by SetWatches2"));
        out("pw.recursive_reset", recursiveResets.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS));
        out("pw.single_reset", singleResets.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS));
        writer.create().forPath("/pw/after");
        out("pw.recursive_after_reconnect", take(rec, "create /pw/after"));
        writer.setData().forPath("/pw2", bytes("2"));
        out("pw.single_after_reconnect", take(flat, "set /pw2 after reconnect"));

        recursive.close();
        single.close();
        out("pw.recursive_pending", rec.size());
        out("pw.single_pending", flat.size());
        out("pw.oneshot_pending", oneshot.size());
        proxy.close();
    }

    /**
     * Proxy is a TCP relay in front of the server. pause() drops every relayed
     * connection and holds new ones unconnected until resume(), so a client loses its
     * connection (not its session) for exactly as long as the test wants.
     */
    private static final class Proxy implements AutoCloseable {
        private final ServerSocket listener;
        private final String targetHost;
        private final int targetPort;
        private final Object mu = new Object();
        private final List<Socket> open = new ArrayList<>();
        private final List<Socket> held = new ArrayList<>();
        private boolean paused;

        Proxy(String connectString) throws IOException {
            String first = connectString.split(",")[0];
            int colon = first.lastIndexOf(':');
            targetHost = first.substring(0, colon);
            targetPort = Integer.parseInt(first.substring(colon + 1));
            listener = new ServerSocket();
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            Thread t = new Thread(this::acceptLoop);
            t.setDaemon(true);
            t.start();
        }

        String address() {
            return "127.0.0.1:" + listener.getLocalPort();
        }

        private void acceptLoop() {
            while (true) {
                Socket s;
                try {
                    s = listener.accept();
                } catch (IOException e) {
                    return;
                }
                synchronized (mu) {
                    if (paused) {
                        held.add(s);
                        continue;
                    }
                }
                relay(s);
            }
        }

        private void relay(Socket client) {
            try {
                Socket server = new Socket(targetHost, targetPort);
                synchronized (mu) {
                    open.add(client);
                    open.add(server);
                }
                pump(client, server);
                pump(server, client);
            } catch (IOException e) {
                closeQuietly(client);
            }
        }

        private static void pump(Socket from, Socket to) {
            Thread t = new Thread(() -> {
                byte[] buf = new byte[65536];
                try (InputStream in = from.getInputStream(); OutputStream o = to.getOutputStream()) {
                    int n;
                    while ((n = in.read(buf)) >= 0) {
                        o.write(buf, 0, n);
                        o.flush();
                    }
                } catch (IOException e) {
                    // Connection dropped: close both sides below.
                }
                closeQuietly(from);
                closeQuietly(to);
            });
            t.setDaemon(true);
            t.start();
        }

        void pause() {
            synchronized (mu) {
                paused = true;
                for (Socket s : open) {
                    closeQuietly(s);
                }
                open.clear();
            }
        }

        void resume() {
            List<Socket> waiting;
            synchronized (mu) {
                paused = false;
                waiting = new ArrayList<>(held);
                held.clear();
            }
            for (Socket s : waiting) {
                relay(s);
            }
        }

        @Override
        public void close() {
            closeQuietly(listener);
            pause();
        }

        private static void closeQuietly(java.io.Closeable c) {
            try {
                c.close();
            } catch (IOException e) {
                // Nothing to do: the socket is gone either way.
            }
        }
    }
}
