package io.rdma4j.transport.tcp;

import com.github.benmanes.caffeine.cache.Scheduler;
import com.github.benmanes.caffeine.cache.Ticker;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The pool against a plain listening socket; time comes from a fake ticker, never from sleeping. */
class TcpConnectionPoolTest {

    private static final Duration IDLE = Duration.ofSeconds(60);

    private final AtomicLong nanos = new AtomicLong();
    private final Ticker ticker = nanos::get;
    private ServerSocketChannel listener;
    private final List<SocketChannel> accepted = new ArrayList<>();
    private Endpoint peer;
    private TcpConnectionPool pool;

    @BeforeEach
    void start() throws IOException {
        listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        peer = new Endpoint("127.0.0.1", ((InetSocketAddress) listener.getLocalAddress()).getPort());
        pool = new TcpConnectionPool(IDLE, 2, ticker, Scheduler.disabledScheduler());
    }

    @AfterEach
    void stop() throws IOException {
        pool.close();
        for (SocketChannel ch : accepted) {
            ch.close();
        }
        listener.close();
    }

    private TcpConnection acquire() throws IOException {
        TcpConnection c = pool.acquire(peer, Deadline.after(Duration.ofSeconds(10)), true);
        if (pool.openedCount() > accepted.size()) {
            accepted.add(listener.accept());
        }
        return c;
    }

    /** Whether the far end sees the connection closed (reads end of stream). */
    private static boolean closedByPeer(SocketChannel farEnd) throws IOException {
        return farEnd.read(ByteBuffer.allocate(1)) < 0;
    }

    @Test
    void giveBack_thenAcquire_reusesTheSameConnection() throws IOException {
        TcpConnection first = acquire();
        pool.giveBack(first);

        TcpConnection second = acquire();

        assertSame(first, second);
        assertTrue(second.isReused());
        assertEquals(1, pool.openedCount());
    }

    @Test
    void acquire_whileOneIsCheckedOut_opensAnother() throws IOException {
        TcpConnection first = acquire();

        TcpConnection second = acquire();

        assertFalse(first == second);
        assertEquals(2, pool.checkedOutCount());
    }

    @Test
    void idleConnection_unusedPastIdleTimeout_isClosed() throws IOException {
        TcpConnection c = acquire();
        pool.giveBack(c);

        nanos.addAndGet(IDLE.plusSeconds(1).toNanos());
        pool.cleanUp();

        assertEquals(0, pool.idleCount(peer));
        assertFalse(c.isOpen());
        assertTrue(closedByPeer(accepted.get(0)));
    }

    @Test
    void idleConnection_withinIdleTimeout_isKept() throws IOException {
        TcpConnection c = acquire();
        pool.giveBack(c);

        nanos.addAndGet(IDLE.minusSeconds(1).toNanos());
        pool.cleanUp();

        assertEquals(1, pool.idleCount(peer));
        assertTrue(c.isOpen());
    }

    @Test
    void giveBack_afterThePeersIdleConnectionsExpired_poolsTheConnectionAgain() throws IOException {
        TcpConnection expiring = acquire();
        TcpConnection inUse = acquire();
        pool.giveBack(expiring);
        nanos.addAndGet(IDLE.plusSeconds(1).toNanos());
        pool.cleanUp(); // the peer's idle connections go, with their deque

        pool.giveBack(inUse);

        assertFalse(expiring.isOpen());
        assertTrue(inUse.isOpen());
        assertEquals(1, pool.idleCount(peer));
        assertSame(inUse, acquire());
    }

    @Test
    void discard_closesAndNeverPools() throws IOException {
        TcpConnection c = acquire();

        pool.discard(c);

        assertFalse(c.isOpen());
        assertEquals(0, pool.idleCount(peer));
        assertEquals(0, pool.checkedOutCount());
    }

    @Test
    void giveBack_expiredConnection_isClosedNotPooled() throws IOException {
        TcpConnection c = acquire();
        c.expire();

        pool.giveBack(c);

        assertEquals(0, pool.idleCount(peer));
    }

    @Test
    void giveBack_beyondMaxIdlePerPeer_closesTheSurplus() throws IOException {
        TcpConnection a = acquire();
        TcpConnection b = acquire();
        TcpConnection c = acquire();

        pool.giveBack(a);
        pool.giveBack(b);
        pool.giveBack(c);

        assertEquals(2, pool.idleCount(peer));
        assertFalse(c.isOpen());
    }

    @Test
    void close_closesIdleAndCheckedOutConnections() throws IOException {
        TcpConnection idle = acquire();
        TcpConnection busy = acquire();
        pool.giveBack(idle);

        pool.close();

        assertFalse(idle.isOpen());
        assertFalse(busy.isOpen());
        assertTrue(closedByPeer(accepted.get(0)));
        assertTrue(closedByPeer(accepted.get(1)));
    }

    @Test
    void acquire_afterClose_fails() {
        pool.close();

        assertThrows(ClosedChannelException.class, () -> pool.acquire(peer, Deadline.after(Duration.ofSeconds(1)), true));
    }
}
