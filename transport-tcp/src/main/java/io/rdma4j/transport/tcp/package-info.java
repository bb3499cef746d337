/**
 * The TCP fallback transport: {@link io.rdma4j.transport.tcp.TcpTransportProvider} and its
 * {@link io.rdma4j.transport.tcp.TcpSettings}. Everything else here is package-private.
 *
 * <h2>Threads and data flow</h2>
 * <pre>
 *  requesting manager (peer A)                          owning manager (peer B)
 *  ---------------------------                          -----------------------
 *  caller: backend.submit(ops, deadline)
 *    | returns a future at once; the ops run on the first thread to claim them: the pool thread
 *    | started for them, or the caller itself when it waits (the manager's join() runs the future);
 *    | a thread that joined its last submits at once gets no pool thread started, unless nobody
 *    | claims the ops within ~50 us to 1 ms ([rdma4j-tcp-starter], see TcpStarter)
 *    v
 *  [rdma4j-tcp-submit-N]  ops one after another          [rdma4j-tcp-accept-PORT]
 *    | per op: chunks of maxChunkMiB                        | accept()
 *    |-- worker 0 (this thread) --.                         v
 *    |-- worker 1..P-1 (own VT) --+-- pool.acquire(B) --&gt; [rdma4j-tcp-serve-PORT-M]  one per connection
 *    |                            |   (Caffeine: idle      |  read request header (48 bytes)
 *    |                            |    connections by      |  lookup(id, key) -&gt; LocalBuffer
 *    |                            |    data endpoint)      |  range check; pin for this chunk
 *    |   WRITE hdr + payload  ====+======================&gt; |  socket -&gt; segment.asSlice().asByteBuffer()
 *    |   READ hdr             ====+======================&gt; |  segment -&gt; socket (DATA reply)
 *    |   &lt;=== OK / DATA+payload / ERROR(code, text) ===========|  unpin; next request
 *    v                            |
 *  future completes after every worker ended and gave its connection back (or discarded it)
 *
 *  [rdma4j-tcp-watchdog] (one platform thread): at the deadline, closes the connection a worker
 *  is blocked on (the worker sees TIMEOUT); on the server, closes a connection that started a
 *  request and did not finish it within rdma.tcp.idleTimeout.
 * </pre>
 * <b>Concurrent small ops to one peer.</b> A run of two or more small ops of one submit to one peer
 * goes as pipelined rounds ({@code TcpPipeline}). When no other run to that peer is in progress it
 * takes a pooled connection of its own and reads its replies itself. When another is, it goes on
 * the peer's one shared connection ({@code TcpMux}): callers queue their rounds, whichever finds
 * nobody writing writes all queued rounds in one {@code write}, and the connection's reader thread
 * [rdma4j-tcp-mux-PEER] hands each round its replies in order and wakes its caller. So 16 threads
 * submitting batches to one peer use two connections (and the owner two session threads), not 16.
 * Large ops keep connections of their own: a 64 MiB transfer never delays a small op's replies.
 *
 * <p>All "[...]" tasks but the watchdog run on the backend's cached pool of platform threads doing
 * blocking I/O (see {@code TcpThreads} for why not virtual threads: two fewer hand-offs per small
 * transfer); idle pool threads end after 30 s. No byte[] staging
 * on the data path: payload bytes go straight between sockets and off-heap segments through
 * {@code MemorySegment.asByteBuffer()} views.
 *
 * <h2>Ownership</h2>
 * The manager owns registered memory; the server touches it only inside a pin held for one chunk.
 * A requesting worker touches only the caller's local segment, which the caller keeps alive until
 * the future completes; once it completed (success, failure, timeout, {@code cancel()}, or a
 * failure set from outside), no worker writes into that segment any more: completing a submit's
 * future from outside closes the connections it is exchanging on and waits until every exchange
 * ended ({@code TcpSubmission}); a round on a shared connection is abandoned instead, and its
 * replies, which still arrive, are read and discarded ({@code TcpMux}). Every connection has
 * exactly one holder at a time: the pool (idle), one worker (checked out), a shared connection's
 * {@code TcpMux} or one serving thread. {@code close()} closes all of them.
 *
 * <h2>Wire protocol</h2>
 * See {@code TcpProtocol}: length-prefixed frames, WRITE/READ requests, OK/DATA/ERROR replies.
 * The token context is {@code TcpContextCodec}: version, port, host.
 */
package io.rdma4j.transport.tcp;
