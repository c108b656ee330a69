// Load is a second load generator, written on ZooKeeper's own Java client,
// to check the headline figures of `warden bench` (a generator can flatter
// the server it was tuned against).
//
//   java -cp <zookeeper jars>:. Load CONNECT SECONDS SESSIONS INFLIGHT PAYLOAD write|read [nio|netty]
//
// SESSIONS ZooKeeper handles on CONNECT (the client shuffles the string, so
// sessions spread over the members at random), each keeping INFLIGHT
// asynchronous setData (write) or getData (read) calls in flight on its own
// 100 keys /javaload/s<i>-k<j> (created first, PAYLOAD bytes). The client's
// transport is its default, NIO (ClientCnxnSocketNIO), or with "netty" its
// Netty one (ClientCnxnSocketNetty, the one TLS needs). After one second of
// warm-up it counts the calls answered OK for SECONDS and prints one line:
// "ops_per_sec=<n> errors=<n> client_cores=<c>", c being the CPU time this
// JVM used in those SECONDS divided by them (1.0 is a whole core).
import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

public class Load {
    static final int KEYS = 100;

    public static void main(String[] args) throws Exception {
        String connect = args[0];
        int seconds = Integer.parseInt(args[1]);
        int sessions = Integer.parseInt(args[2]);
        int inflight = Integer.parseInt(args[3]);
        byte[] payload = new byte[Integer.parseInt(args[4])];
        boolean write = args[5].equals("write");
        if (args.length > 6 && args[6].equals("netty")) {
            System.setProperty("zookeeper.clientCnxnSocket", "org.apache.zookeeper.ClientCnxnSocketNetty");
        } else if (args.length > 6 && !args[6].equals("nio")) {
            throw new IllegalArgumentException("transport " + args[6] + ": want nio or netty");
        }

        List<ZooKeeper> zks = new ArrayList<>();
        for (int i = 0; i < sessions; i++) {
            CountDownLatch up = new CountDownLatch(1);
            ZooKeeper zk = new ZooKeeper(connect, 30000, e -> {
                if (e.getState() == Watcher.Event.KeeperState.SyncConnected) up.countDown();
            });
            if (!up.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("session " + i + " did not connect");
            zks.add(zk);
        }
        ZooKeeper first = zks.get(0);
        try {
            first.create("/javaload", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException ignored) {
        }
        for (int i = 0; i < sessions; i++) {
            for (int k = 0; k < KEYS; k++) {
                try {
                    first.create(key(i, k), payload, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
                } catch (KeeperException.NodeExistsException ignored) {
                }
            }
        }

        AtomicBoolean counting = new AtomicBoolean(false);
        AtomicBoolean stop = new AtomicBoolean(false);
        AtomicLong ok = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < sessions; i++) {
            final int s = i;
            final ZooKeeper zk = zks.get(i);
            Thread t = new Thread(() -> {
                Semaphore slots = new Semaphore(inflight);
                AsyncCallback.StatCallback wcb = (rc, path, ctx, stat) -> {
                    done(rc, counting, ok, errors);
                    slots.release();
                };
                AsyncCallback.DataCallback rcb = (rc, path, ctx, data, stat) -> {
                    done(rc, counting, ok, errors);
                    slots.release();
                };
                int n = 0;
                while (!stop.get()) {
                    try {
                        if (!slots.tryAcquire(100, TimeUnit.MILLISECONDS)) continue;
                    } catch (InterruptedException e) {
                        return;
                    }
                    String p = key(s, n++ % KEYS);
                    if (write) zk.setData(p, payload, -1, wcb, null);
                    else zk.getData(p, false, rcb, null);
                }
                slots.acquireUninterruptibly(inflight); // let every call finish
            });
            threads.add(t);
            t.start();
        }
        Thread.sleep(1000);
        OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        counting.set(true);
        long start = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        counting.set(false);
        double elapsed = (System.nanoTime() - start) / 1e9;
        double cores = (os.getProcessCpuTime() - cpu0) / 1e9 / elapsed;
        stop.set(true);
        for (Thread t : threads) t.join(30000);
        System.out.printf("ops_per_sec=%.0f errors=%d client_cores=%.2f%n", ok.get() / elapsed, errors.get(), cores);
        for (ZooKeeper zk : zks) zk.close();
    }

    static String key(int session, int k) {
        return "/javaload/s" + session + "-k" + k;
    }

    static void done(int rc, AtomicBoolean counting, AtomicLong ok, AtomicLong errors) {
        if (!counting.get()) return;
        if (rc == KeeperException.Code.OK.intValue()) ok.incrementAndGet();
        else errors.incrementAndGet();
    }
}
