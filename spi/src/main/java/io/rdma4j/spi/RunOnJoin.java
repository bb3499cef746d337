package io.rdma4j.spi;

/**
 * Optional, for the future a transport returns from {@link Transport#submit}: lets a thread that
 * is about to wait for that future do the work, instead of waiting for a transport thread to do it
 * and wake it. A submission that nobody started yet then needs no hand-off to another thread and
 * back; one in progress may be helped (polling for its completions, say).
 *
 * <p><b>Who calls it.</b> The manager calls {@link #runOnJoin()} from a thread about to wait for
 * the future: the caller's {@code RdmaAction.join()}, and {@link Transport#submitAndWait}'s
 * default. It may call it on a future already done (a transport may take the call as a sign that
 * its caller waits for its futures), more than once, and from several threads at once; a thread
 * that was interrupted does not call it.
 *
 * <p><b>What it must do.</b>
 * <ul>
 *   <li>Do, on the calling thread, the work none of the transport's threads has started, or help
 *       for a short while with work in progress, and return. It need not complete the future:
 *       the caller then waits for it.</li>
 *   <li>Return without delay once the future is done, and not hold the thread for long when
 *       another thread has the work in hand.</li>
 *   <li>Not throw: a failure of the work completes the future exceptionally, as it would on a
 *       transport thread.</li>
 *   <li>Keep every rule of {@link Transport#submit}: in particular nothing touches the ops' local
 *       memory once the future is complete.</li>
 * </ul>
 * A future that does not implement this interface is simply waited for. The contract suite
 * ({@code TransportContractTest}, in the api test-jar) checks these rules on every transport
 * whose future implements it.
 */
public interface RunOnJoin {

    /** Does or helps the work of this submission on the calling thread, and returns (see the class documentation). */
    void runOnJoin();
}
