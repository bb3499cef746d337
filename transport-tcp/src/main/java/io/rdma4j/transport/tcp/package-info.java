/**
 * The TCP fallback transport: {@link io.rdma4j.transport.tcp.TcpTransportProvider} and its
 * {@link io.rdma4j.transport.tcp.TcpSettings}. Everything else here is package-private.
 *
 * <h2>Map of the package</h2>
 * One process is usually both: the <b>owner</b> serving its registered buffers and a <b>holder</b>
 * (requester) reading and writing other processes' buffers.
 *
 * <p><b>Entry points</b> (both sides):
 * <ul>
 * <li>{@code TcpTransportProvider}: the provider (public): declares the settings, opens a transport.</li>
 * <li>{@code TcpSettings}: the transport's settings (public).</li>
 * <li>{@code TcpTransport}: the transport of one manager: its data endpoint, its connection pool and lanes, its submits.</li>
 * <li>{@code TcpThreads}: the backend's cached pool of platform threads doing blocking I/O.</li>
 * </ul>
 *
 * <p><b>Owner side</b> (serving registered memory):
 * <ul>
 * <li>{@code TcpDataServer}: the data endpoint: accepts connections, one pool thread each.</li>
 * <li>{@code TcpSession}: one served connection's request loop: key and range checked, buffer pinned per chunk, replies in order.</li>
 * </ul>
 *
 * <p><b>Holder side</b> (reading and writing a remote buffer):
 * <ul>
 * <li>{@code TcpSubmission}: the future of one submit, and what stops its transfers once it completed.</li>
 * <li>{@code TcpStarter}: decides when a submit's pool thread starts (at once, or only if nobody joins).</li>
 * <li>{@code TcpTransfer}: one op: its chunks shared out among workers on pooled connections.</li>
 * <li>{@code TcpPipeline}: a run of small ops to one peer as pipelined rounds.</li>
 * <li>{@code TcpMux}: the peer's shared connection for overlapping runs: the queue of rounds, its writer, its lifecycle.</li>
 * <li>{@code TcpMuxRound}: one round on the shared connection; its state is also a short lock.</li>
 * <li>{@code TcpMuxReader}: the shared connection's reader thread: hands each round its replies.</li>
 * <li>{@code TcpConnection}: the requesting end of one connection: one exchange at a time.</li>
 * <li>{@code TcpConnectionPool}: idle connections by peer, each checked out by one worker at a time.</li>
 * </ul>
 *
 * <p><b>Wire format</b> (both sides):
 * <ul>
 * <li>{@code TcpProtocol}: frames, WRITE/READ requests, OK/DATA/ERROR replies.</li>
 * <li>{@code TcpContextCodec}: the token context: version, port, host.</li>
 * <li>{@code TcpRefusedException}: the owner answered ERROR: its code, message and the op it refused.</li>
 * <li>{@code TcpProtocolException}: the other end sent something the protocol does not allow.</li>
 * </ul>
 * No native calls: plain {@code java.nio} socket channels.
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
