package io.redissonpy.interop;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.redisson.Redisson;
import org.redisson.RedissonMultiLock;
import org.redisson.api.RCountDownLatch;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The Java side of redisson-py's mixed-fleet tests: Redisson clients driven over
 * stdin/stdout, one request a line, tab-separated:
 *
 * <pre>id  op  client  thread  kind  name  [args...]</pre>
 *
 * and one reply a line, in the order the calls end (not the order they came):
 *
 * <pre>id  ok|err  value-or-message  epoch-millis-when-the-call-returned</pre>
 *
 * Each {@code thread} names a Java thread of its own (created on first use), so lock
 * ownership is Redisson's: the client's id and that thread's id. Calls on one thread run
 * in order; calls on different threads run side by side (a blocked {@code lock} does not
 * hold up the others). {@code connect} and {@code shutdown} run on the named thread too.
 */
public final class Peer {
    private static final Map<String, RedissonClient> CLIENTS = new ConcurrentHashMap<>();
    private static final Map<String, ExecutorService> THREADS = new ConcurrentHashMap<>();
    private static final PrintStream OUT =
            new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);

    private Peer() {}

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        reply("0", "ok", "ready " + org.redisson.Version.class.getPackage().getImplementationVersion());
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            if (f.length < 6) {
                reply(f[0], "err", "malformed request: " + line);
                continue;
            }
            if (f[1].equals("exit")) {
                break;
            }
            ExecutorService thread = THREADS.computeIfAbsent(f[3], name -> Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "peer-" + name);
                t.setDaemon(true);
                return t;
            }));
            thread.execute(() -> {
                try {
                    reply(f[0], "ok", String.valueOf(run(f)));
                } catch (Throwable e) {
                    reply(f[0], "err", e.getClass().getName() + ": " + e.getMessage());
                }
            });
        }
        for (RedissonClient client : CLIENTS.values()) {
            client.shutdown();
        }
        System.exit(0);
    }

    private static synchronized void reply(String id, String status, String value) {
        OUT.println(id + "\t" + status + "\t" + value.replace('\n', ' ').replace('\t', ' ') + "\t"
                + System.currentTimeMillis());
    }

    private static long arg(String[] f, int i, long otherwise) {
        return f.length > 6 + i && !f[6 + i].isEmpty() ? Long.parseLong(f[6 + i]) : otherwise;
    }

    private static String text(String[] f, int i) {
        return f[6 + i];
    }

    private static RLock lockOf(RedissonClient c, String kind, String name) {
        switch (kind) {
            case "lock": return c.getLock(name);
            case "fair": return c.getFairLock(name);
            case "spin": return c.getSpinLock(name);
            case "fenced": return c.getFencedLock(name);
            // Redisson 4.x only: looked up by name, so the peer compiles against 3.x too.
            case "nonreentrant": return byName(c, "getNonReentrantLock", name);
            case "nonreentrantfair": return byName(c, "getNonReentrantFairLock", name);
            case "read": return c.getReadWriteLock(name).readLock();
            case "write": return c.getReadWriteLock(name).writeLock();
            case "multi": {
                List<RLock> members = new ArrayList<>();
                for (String member : name.split(",")) {
                    members.add(c.getLock(member));
                }
                return new RedissonMultiLock(members.toArray(new RLock[0]));
            }
            default: throw new IllegalArgumentException("unknown lock kind " + kind);
        }
    }

    private static RLock byName(RedissonClient c, String getter, String name) {
        try {
            return (RLock) RedissonClient.class.getMethod(getter, String.class).invoke(c, name);
        } catch (NoSuchMethodException e) {
            throw new UnsupportedOperationException(getter + " is not in this Redisson version");
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    /**
     * With {@code -Dredissonpy.source=ADDRESS} (a peer started on one side of a network
     * partition), every connection the client opens leaves from that address, so the
     * partition's cuts apply to it: Redisson has no source-address option, its Netty hook
     * sets it on each bootstrap.
     */
    private static void bindSource(Config config) {
        String source = System.getProperty("redissonpy.source");
        if (source == null || source.isEmpty()) {
            return;
        }
        config.setNettyHook(new org.redisson.client.NettyHook() {
            @Override
            public void afterBoostrapInitialization(io.netty.bootstrap.Bootstrap bootstrap) {
                bootstrap.localAddress(new java.net.InetSocketAddress(source, 0));
            }

            @Override
            public void afterChannelInitialization(io.netty.channel.Channel channel) {}
        });
    }

    private static Object run(String[] f) throws Exception {
        String op = f[1];
        String clientName = f[2];
        String kind = f[4];
        String name = f[5];
        TimeUnit ms = TimeUnit.MILLISECONDS;
        if (op.equals("sleep")) {
            Thread.sleep(arg(f, 0, 0));
            return null;
        }
        if (op.equals("connect")) {
            Config config = Config.fromYAML(new File(text(f, 0)));
            bindSource(config);
            CLIENTS.put(clientName, Redisson.create(config));
            return CLIENTS.get(clientName).getId();
        }
        RedissonClient c = CLIENTS.get(clientName);
        if (c == null) {
            throw new IllegalArgumentException("no client " + clientName);
        }
        switch (op) {
            case "shutdown":
                CLIENTS.remove(clientName).shutdown();
                return null;
            case "owner":
                return c.getId() + ":" + Thread.currentThread().getId();
            default:
                break;
        }
        switch (kind) {
            case "semaphore": {
                RSemaphore s = c.getSemaphore(name);
                switch (op) {
                    case "setPermits": return s.trySetPermits((int) arg(f, 0, 0));
                    case "addPermits": s.addPermits((int) arg(f, 0, 0)); return null;
                    case "acquire": s.acquire((int) arg(f, 0, 1)); return null;
                    case "tryAcquire": return s.tryAcquire((int) arg(f, 0, 1), java.time.Duration.ofMillis(arg(f, 1, 0)));
                    case "release": s.release((int) arg(f, 0, 1)); return null;
                    case "available": return s.availablePermits();
                    default: break;
                }
                break;
            }
            case "pes": {
                RPermitExpirableSemaphore s = c.getPermitExpirableSemaphore(name);
                switch (op) {
                    case "setPermits": return s.trySetPermits((int) arg(f, 0, 0));
                    case "acquire": {
                        long lease = arg(f, 0, -1);
                        return lease < 0 ? s.acquire() : s.acquire(lease, ms);
                    }
                    case "tryAcquire": return s.tryAcquire(arg(f, 0, 0), arg(f, 1, -1), ms);
                    case "release": s.release(text(f, 0)); return null;
                    case "tryRelease": return s.tryRelease(text(f, 0));
                    case "available": return s.availablePermits();
                    default: break;
                }
                break;
            }
            case "latch": {
                RCountDownLatch l = c.getCountDownLatch(name);
                switch (op) {
                    case "setCount": return l.trySetCount(arg(f, 0, 0));
                    case "countDown": l.countDown(); return null;
                    case "count": return l.getCount();
                    case "await": return l.await(arg(f, 0, 0), ms);
                    default: break;
                }
                break;
            }
            default: {
                RLock lock = lockOf(c, kind, name);
                long lease = arg(f, 0, -1);
                switch (op) {
                    case "lock":
                        if (lease < 0) {
                            lock.lock();
                        } else {
                            lock.lock(lease, ms);
                        }
                        return null;
                    case "tryLock": return lock.tryLock(arg(f, 0, 0), arg(f, 1, -1), ms);
                    case "unlock": lock.unlock(); return null;
                    case "forceUnlock": return lock.forceUnlock();
                    case "isLocked": return lock.isLocked();
                    case "held": return lock.isHeldByCurrentThread();
                    case "holdCount": return lock.getHoldCount();
                    case "ttl": return lock.remainTimeToLive();
                    case "lockToken": {
                        RFencedLock fenced = (RFencedLock) lock;
                        return lease < 0 ? fenced.lockAndGetToken() : fenced.lockAndGetToken(lease, ms);
                    }
                    case "tryLockToken":
                        return ((RFencedLock) lock).tryLockAndGetToken(arg(f, 0, 0), arg(f, 1, -1), ms);
                    case "token": return ((RFencedLock) lock).getToken();
                    default: break;
                }
            }
        }
        throw new IllegalArgumentException("unknown op " + op + " for kind " + kind);
    }
}
