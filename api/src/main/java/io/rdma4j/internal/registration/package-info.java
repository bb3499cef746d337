/**
 * Not exported. Registration, in one place but for the two classes that mint public types:
 * <ul>
 *   <li>{@link io.rdma4j.internal.registration.RegistrationRing}: the Disruptor ring that
 *       serialises every register, release and close of one manager onto one consumer thread, the
 *       registration thread;</li>
 *   <li>{@link io.rdma4j.internal.registration.RegistrationTable}: the registrations, written by
 *       that thread only and read by any thread: the lookup transports serve peers through (stale,
 *       unknown, released and wrong-key requests refused alike);</li>
 *   <li>{@link io.rdma4j.internal.registration.Registration}: one registered segment, its contexts
 *       and its pins (taken and closed by transport threads).</li>
 * </ul>
 * The ring's worker is {@code io.rdma4j.Registrar} (wrapped by {@code ObservedRegistrar} for
 * statistics and JFR events): it assigns ids and keys, registers with every transport, and mints
 * the {@code RdmaRemoteBuffer} token and the API's exceptions, whose constructors are package-private
 * in {@code io.rdma4j}; so it stays there.
 */
package io.rdma4j.internal.registration;
