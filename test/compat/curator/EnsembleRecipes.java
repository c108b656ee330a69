// EnsembleRecipes runs Apache Curator 5.4 LeaderLatch participants and InterProcessMutex
// contenders on command, each on its own session that starts on a chosen ensemble member,
// so that test/compat/ensemble_curator_test.go can kill members under them and check
// that leadership and the lock pass on or stay put as they do on Apache ZooKeeper.
//
// Usage: java -cp <curator, zookeeper, guava, netty, slf4j jars> EnsembleRecipes
//
// Commands, one per line on standard input; each reply is one line, "ok ..." or
// "error <message>":
//
//   latch <id> <path> <hosts>  a LeaderLatch with this id on a new session whose client
//                              tries hosts (host:port,...) in the given order; replies
//                              "ok session=0x..." once its node exists
//   lock <id> <path> <hosts>   a session with an InterProcessMutex; "ok session=0x..."
//   acquire <id>               start acquiring (up to 60 s) on the contender's thread;
//                              replies "ok"; "event acquired <id>" follows, or
//                              "event acquire-failed <id> <exception>"
//   release <id>               release the lock (on the contender's thread); "ok"
//   close <id>                 close that latch (it leaves the election); "ok"
//   leaders                    "ok holding=<ids with hasLeadership, or -> leader=<getLeader
//                              id, or -> queue=<getParticipants ids, in order>"
//   holders                    "ok holding=<ids holding their lock, or ->"
//   sessions                   "ok <id>=0x... ..." for every latch and lock, in id order
//   connected <id>             "ok true|false": whether that session is connected now
//   max                        "ok leaders=<most latches leading at once> holders=<most
//                              lock holders at once>" (both must stay 1)
//   quit                       close everything; "ok bye", exit 0
//
// Asynchronous lines: "event elected <id>", "event deposed <id>", "event conn <id>
// <ConnectionState>", "event acquired <id>", "event acquire-failed <id> <exception>".
//
// Sessions ask for 10 s; Curator retries an operation up to 20 times, 300 ms apart,
// waiting up to 5 s for a connection before each try. The ensemble tracker is off:
// Curator would otherwise rewrite the connection string from /zookeeper/config and move
// sessions between members. A watchdog halts the JVM (exit 3) after 150 s.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.utils.ZookeeperFactory;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.HostProvider;
import org.apache.zookeeper.client.ZKClientConfig;

public final class EnsembleRecipes {
    private static final long WAIT_MILLIS = 15_000;
    private static final long ACQUIRE_SECONDS = 60;
    private static final long WATCHDOG_SECONDS = 150;

    private static final Map<String, CuratorFramework> clients = new TreeMap<>();
    private static final Map<String, LeaderLatch> latches = new TreeMap<>();
    private static final Map<String, InterProcessMutex> locks = new TreeMap<>();
    // InterProcessMutex belongs to the thread that acquired it: each contender acquires
    // and releases on its own single thread.
    private static final Map<String, ExecutorService> lockThreads = new TreeMap<>();
    private static final Map<String, Boolean> holding = new TreeMap<>();
    private static final AtomicInteger leadersNow = new AtomicInteger(), leadersMax = new AtomicInteger();
    private static final AtomicInteger holdersNow = new AtomicInteger(), holdersMax = new AtomicInteger();

    public static void main(String[] args) throws Exception {
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(WATCHDOG_SECONDS));
            } catch (InterruptedException e) {
                return;
            }
            out("error watchdog timeout");
            Runtime.getRuntime().halt(3);
        });
        watchdog.setDaemon(true);
        watchdog.start();

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split(" ");
            try {
                switch (f[0]) {
                    case "latch": latch(f[1], f[2], f[3]); break;
                    case "lock": lock(f[1], f[2], f[3]); break;
                    case "acquire": acquire(f[1]); break;
                    case "release": release(f[1]); break;
                    case "close": closeLatch(f[1]); break;
                    case "leaders": leaders(); break;
                    case "holders": holders(); break;
                    case "sessions": sessions(); break;
                    case "connected": out("ok " + clients.get(f[1]).getZookeeperClient().isConnected()); break;
                    case "max": out("ok leaders=" + leadersMax.get() + " holders=" + holdersMax.get()); break;
                    case "quit":
                        closeAll();
                        out("ok bye");
                        Runtime.getRuntime().halt(0);
                        break;
                    default: out("error unknown command " + f[0]);
                }
            } catch (Exception e) {
                out("error " + e);
                e.printStackTrace();
            }
        }
        closeAll();
        Runtime.getRuntime().halt(0);
    }

    private static synchronized void out(String s) {
        System.out.println(s);
        System.out.flush();
    }

    /** OrderedHosts tries the hosts in the order given, from the first, round and round. */
    private static final class OrderedHosts implements HostProvider {
        private final List<InetSocketAddress> hosts = new ArrayList<>();
        private int current = -1, last = -1;

        OrderedHosts(String connect) {
            for (String hp : connect.split(",")) {
                int i = hp.lastIndexOf(':');
                hosts.add(new InetSocketAddress(hp.substring(0, i), Integer.parseInt(hp.substring(i + 1))));
            }
        }

        @Override
        public synchronized int size() {
            return hosts.size();
        }

        @Override
        public InetSocketAddress next(long spinDelay) {
            boolean sleep;
            InetSocketAddress next;
            synchronized (this) {
                current = (current + 1) % hosts.size();
                sleep = current == last && spinDelay > 0;
                if (last == -1) {
                    last = 0; // no sleep before the very first round
                }
                next = hosts.get(current);
            }
            if (sleep) {
                try {
                    Thread.sleep(spinDelay);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return next;
        }

        @Override
        public synchronized void onConnected() {
            last = current;
        }

        @Override
        public boolean updateServerList(Collection<InetSocketAddress> serverAddresses, InetSocketAddress currentHost) {
            return false;
        }
    }

    private static CuratorFramework client(String id, String hosts) throws Exception {
        ZookeeperFactory factory = new ZookeeperFactory() {
            @Override
            public ZooKeeper newZooKeeper(String connect, int timeout, Watcher w, boolean ro) throws Exception {
                return new ZooKeeper(connect, timeout, w, ro, new OrderedHosts(connect));
            }

            @Override
            public ZooKeeper newZooKeeper(String connect, int timeout, Watcher w, boolean ro, ZKClientConfig cfg) throws Exception {
                if (cfg == null) {
                    return newZooKeeper(connect, timeout, w, ro);
                }
                return new ZooKeeper(connect, timeout, w, ro, new OrderedHosts(connect), cfg);
            }
        };
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(hosts)
                .sessionTimeoutMs(10_000)
                .connectionTimeoutMs(5_000)
                .retryPolicy(new RetryNTimes(20, 300))
                .ensembleTracker(false)
                .zookeeperFactory(factory)
                .build();
        c.getConnectionStateListenable().addListener((cl, state) -> out("event conn " + id + " " + state));
        c.start();
        if (!c.blockUntilConnected((int) (WAIT_MILLIS / 1000), TimeUnit.SECONDS)) {
            c.close();
            throw new IllegalStateException("not connected to " + hosts);
        }
        clients.put(id, c);
        return c;
    }

    private static String session(String id) throws Exception {
        return "0x" + Long.toHexString(clients.get(id).getZookeeperClient().getZooKeeper().getSessionId());
    }

    private static void latch(String id, String path, String hosts) throws Exception {
        CuratorFramework c = client(id, hosts);
        LeaderLatch latch = new LeaderLatch(c, path, id);
        latch.addListener(new LeaderLatchListener() {
            @Override
            public void isLeader() {
                leadersMax.accumulateAndGet(leadersNow.incrementAndGet(), Math::max);
                out("event elected " + id);
            }

            @Override
            public void notLeader() {
                leadersNow.decrementAndGet();
                out("event deposed " + id);
            }
        });
        latch.start();
        // start() creates the node in the background: wait (bounded) until it exists.
        long deadline = System.currentTimeMillis() + WAIT_MILLIS;
        while (latch.getOurPath() == null) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("latch " + id + " has no node after " + WAIT_MILLIS + " ms");
            }
            Thread.sleep(5);
        }
        latches.put(id, latch);
        out("ok session=" + session(id));
    }

    /**
     * closeLatch closes a latch silently (Curator's default CloseMode): its listener is
     * not told. Its leadership is given up in the count first, as no other participant
     * can be elected before close() deletes its node.
     */
    private static void closeLatch(String id) throws Exception {
        LeaderLatch latch = latches.remove(id);
        if (latch.hasLeadership()) {
            leadersNow.decrementAndGet();
        }
        latch.close();
        out("ok");
    }

    private static void lock(String id, String path, String hosts) throws Exception {
        CuratorFramework c = client(id, hosts);
        locks.put(id, new InterProcessMutex(c, path));
        lockThreads.put(id, Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "lock-" + id);
            t.setDaemon(true);
            return t;
        }));
        out("ok session=" + session(id));
    }

    private static void acquire(String id) {
        InterProcessMutex m = locks.get(id);
        lockThreads.get(id).submit(() -> {
            try {
                if (!m.acquire(ACQUIRE_SECONDS, TimeUnit.SECONDS)) {
                    out("event acquire-failed " + id + " timeout");
                    return;
                }
                holdersMax.accumulateAndGet(holdersNow.incrementAndGet(), Math::max);
                synchronized (holding) {
                    holding.put(id, true);
                }
                out("event acquired " + id);
            } catch (Exception e) {
                out("event acquire-failed " + id + " " + e.toString().replace(' ', '_'));
            }
        });
        out("ok");
    }

    private static void release(String id) throws Exception {
        synchronized (holding) {
            if (holding.remove(id) == null) {
                out("error " + id + " does not hold its lock");
                return;
            }
        }
        holdersNow.decrementAndGet();
        InterProcessMutex m = locks.get(id);
        lockThreads.get(id).submit(() -> {
            m.release();
            return null;
        }).get(WAIT_MILLIS, TimeUnit.MILLISECONDS);
        out("ok");
    }

    private static void leaders() throws Exception {
        List<String> holdingIds = new ArrayList<>();
        for (Map.Entry<String, LeaderLatch> e : latches.entrySet()) {
            if (e.getValue().hasLeadership()) {
                holdingIds.add(e.getKey());
            }
        }
        String leader = "-";
        List<String> queue = new ArrayList<>();
        if (!latches.isEmpty()) {
            LeaderLatch any = latches.values().iterator().next();
            Participant p = any.getLeader();
            leader = p.getId().isEmpty() ? "-" : p.getId();
            for (Participant q : any.getParticipants()) {
                queue.add(q.getId());
            }
        }
        out("ok holding=" + (holdingIds.isEmpty() ? "-" : String.join(",", holdingIds))
                + " leader=" + leader + " queue=" + (queue.isEmpty() ? "-" : String.join(",", queue)));
    }

    private static void holders() {
        List<String> ids;
        synchronized (holding) {
            ids = new ArrayList<>(holding.keySet());
        }
        out("ok holding=" + (ids.isEmpty() ? "-" : String.join(",", ids)));
    }

    private static void sessions() throws Exception {
        List<String> parts = new ArrayList<>();
        for (String id : clients.keySet()) {
            parts.add(id + "=" + session(id));
        }
        out("ok " + String.join(" ", parts));
    }

    private static void closeAll() {
        for (LeaderLatch l : latches.values()) {
            try {
                l.close();
            } catch (Exception ignore) {
                // shutting down
            }
        }
        for (CuratorFramework c : clients.values()) {
            c.close();
        }
        latches.clear();
        clients.clear();
    }
}
