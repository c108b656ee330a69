// LockInterop is the Java side of test/compat/recipes_gointerop_lock_test.go: a Curator
// InterProcessMutex contending with Warden's Go recipe.Lock on one lock path.
//
// Usage: java -cp <curator, zookeeper, guava, netty, slf4j jars> LockInterop <connect> <lockPath> <counterPath> <holderPath>
//
// It prints "ready" once connected, then obeys one command per line on standard input,
// answering each on standard output:
//
//   hold         acquire the lock and keep it           -> "held"
//   acquire      start acquiring in the background      -> "acquired" when it has it
//   release      release the lock                       -> "released"
//   count T K    T threads, each with its own session, take the lock K times and, inside,
//                create the ephemeral holderPath (it must not exist: two holders), add 1
//                to counterPath, delete holderPath    -> "counted ok" or "counted FAILED <why>"
//   quit         exit 0
//
// Every wait is bounded; a watchdog halts the JVM with exit code 3 after 120 s.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

public final class LockInterop {
    private static final long WAIT_SECONDS = 30;
    private static final List<CuratorFramework> clients = Collections.synchronizedList(new ArrayList<>());
    private static String connect;

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: LockInterop <connect> <lockPath> <counterPath> <holderPath>");
            System.exit(2);
        }
        connect = args[0];
        final String lockPath = args[1], counterPath = args[2], holderPath = args[3];
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(120));
            } catch (InterruptedException e) {
                return;
            }
            out("FAIL watchdog timeout");
            Runtime.getRuntime().halt(3);
        });
        watchdog.setDaemon(true);
        watchdog.start();

        CuratorFramework main = client();
        InterProcessMutex lock = new InterProcessMutex(main, lockPath);
        out("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Thread background = null;
        final java.util.concurrent.CountDownLatch[] releaseBackground = {null};
        String line;
        int code = 0;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split(" ");
            switch (f[0]) {
                case "hold":
                    must(lock.acquire(WAIT_SECONDS, TimeUnit.SECONDS), "hold: acquire timed out");
                    out("held");
                    break;
                case "acquire":
                    // Curator's mutex belongs to the acquiring thread, so this thread also
                    // releases it, when "release" arrives.
                    final java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
                    releaseBackground[0] = go;
                    background = new Thread(() -> {
                        try {
                            must(lock.acquire(WAIT_SECONDS, TimeUnit.SECONDS), "acquire timed out");
                            out("acquired");
                            must(go.await(WAIT_SECONDS, TimeUnit.SECONDS), "no release command");
                            lock.release();
                        } catch (Exception e) {
                            out("FAIL " + e);
                        }
                    });
                    background.start();
                    break;
                case "release":
                    if (background != null) {
                        releaseBackground[0].countDown();
                        background.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
                        background = null;
                    } else {
                        lock.release();
                    }
                    out("released");
                    break;
                case "count":
                    String why = count(Integer.parseInt(f[1]), Integer.parseInt(f[2]), lockPath, counterPath, holderPath);
                    out(why == null ? "counted ok" : "counted FAILED " + why);
                    if (why != null) {
                        code = 1;
                    }
                    break;
                case "quit":
                    for (CuratorFramework c : clients) {
                        c.close();
                    }
                    System.out.flush();
                    Runtime.getRuntime().halt(code);
                    break;
                default:
                    out("FAIL unknown command " + line);
                    Runtime.getRuntime().halt(2);
            }
        }
        Runtime.getRuntime().halt(code);
    }

    private static String count(int threads, int k, String lockPath, String counterPath, String holderPath) throws Exception {
        AtomicReference<String> failure = new AtomicReference<>();
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            CuratorFramework c = client();
            Thread th = new Thread(() -> {
                InterProcessMutex m = new InterProcessMutex(c, lockPath);
                try {
                    for (int j = 0; j < k; j++) {
                        must(m.acquire(WAIT_SECONDS, TimeUnit.SECONDS), "count: acquire timed out");
                        try {
                            try {
                                c.create().withMode(CreateMode.EPHEMERAL).forPath(holderPath);
                            } catch (KeeperException.NodeExistsException e) {
                                failure.compareAndSet(null, "two holders at once");
                            }
                            byte[] b = c.getData().forPath(counterPath);
                            int v = Integer.parseInt(new String(b, StandardCharsets.UTF_8));
                            c.setData().forPath(counterPath, Integer.toString(v + 1).getBytes(StandardCharsets.UTF_8));
                            c.delete().forPath(holderPath);
                        } finally {
                            m.release();
                        }
                    }
                } catch (Exception e) {
                    failure.compareAndSet(null, e.toString());
                }
            });
            all.add(th);
        }
        for (Thread th : all) {
            th.start();
        }
        for (Thread th : all) {
            th.join(TimeUnit.SECONDS.toMillis(2 * WAIT_SECONDS));
            if (th.isAlive()) {
                failure.compareAndSet(null, "thread still running");
            }
        }
        return failure.get();
    }

    private static void must(boolean ok, String why) {
        if (!ok) {
            throw new IllegalStateException(why);
        }
    }

    private static synchronized void out(String s) {
        System.out.println(s);
        System.out.flush();
    }

    private static CuratorFramework client() throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(15000)
                .connectionTimeoutMs(5000)
                .retryPolicy(new RetryNTimes(5, 200))
                .build();
        clients.add(c);
        c.start();
        if (!c.blockUntilConnected((int) WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("not connected to " + connect);
        }
        return c;
    }
}
