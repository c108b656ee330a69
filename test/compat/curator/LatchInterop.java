// LatchInterop runs Apache Curator 5.4 LeaderLatch participants on command, so
// that test/compat/recipes_gointerop_latch_test.go can put Go and Java
// participants in one election and check that they agree on a single leader.
//
// Usage: java -cp <curator, zookeeper, guava, netty, slf4j jars> LatchInterop <connect-string> <latch-path>
//
// Commands, one per line on standard input; each reply is one line:
//
//   add <id>     start a LeaderLatch with this id on its own session; replies
//                "added <id> <node-name>" once its node exists
//   leaders      replies "leaders <ids holding leadership, comma-separated, or ->
//                leader=<Curator's getLeader() id, or -> queue=<getParticipants() ids>"
//   close <id>   close that latch; replies "closed <id>"
//   quit         close everything; replies "bye" and exits 0
//
// Asynchronous lines, from the latch listeners: "elected <id>", "deposed <id>".
// An error replies "error <message>". A watchdog halts the JVM (exit 3) after
// 120 s.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.utils.ZKPaths;

public final class LatchInterop {
    private static final long WAIT_MILLIS = 10_000;
    private static final long WATCHDOG_SECONDS = 120;

    private static final Map<String, LeaderLatch> latches = new TreeMap<>();
    private static final Map<String, CuratorFramework> clients = new TreeMap<>();

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: LatchInterop <connect-string> <latch-path>");
            System.exit(2);
        }
        String connect = args[0];
        String path = args[1];
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
                    case "add": add(connect, path, f[1]); break;
                    case "leaders": leaders(); break;
                    case "close": close(f[1]); break;
                    case "quit":
                        closeAll();
                        out("bye");
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

    private static void add(String connect, String path, String id) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(15000)
                .connectionTimeoutMs(5000)
                .retryPolicy(new RetryNTimes(5, 200))
                .build();
        c.start();
        if (!c.blockUntilConnected((int) (WAIT_MILLIS / 1000), TimeUnit.SECONDS)) {
            throw new IllegalStateException("not connected to " + connect);
        }
        LeaderLatch latch = new LeaderLatch(c, path, id);
        latch.addListener(new LeaderLatchListener() {
            @Override
            public void isLeader() {
                out("elected " + id);
            }

            @Override
            public void notLeader() {
                out("deposed " + id);
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
        clients.put(id, c);
        latches.put(id, latch);
        out("added " + id + " " + ZKPaths.getNodeFromPath(latch.getOurPath()));
    }

    private static void leaders() throws Exception {
        List<String> holding = new ArrayList<>();
        String leader = "-";
        List<String> queue = new ArrayList<>();
        for (Map.Entry<String, LeaderLatch> e : latches.entrySet()) {
            if (e.getValue().hasLeadership()) {
                holding.add(e.getKey());
            }
        }
        if (!latches.isEmpty()) {
            LeaderLatch any = latches.values().iterator().next();
            Participant p = any.getLeader();
            leader = p.getId().isEmpty() ? "-" : p.getId();
            for (Participant q : any.getParticipants()) {
                queue.add(q.getId());
            }
        }
        out("leaders " + (holding.isEmpty() ? "-" : String.join(",", holding))
                + " leader=" + leader + " queue=" + (queue.isEmpty() ? "-" : String.join(",", queue)));
    }

    private static void close(String id) throws Exception {
        LeaderLatch latch = latches.remove(id);
        if (latch == null) {
            out("error no latch " + id);
            return;
        }
        latch.close();
        clients.remove(id).close();
        out("closed " + id);
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
