/**
 * Not exported. The Disruptor ring that serialises every register, release and close of one
 * manager onto one consumer thread; see {@link io.rdma4j.internal.ring.RegistrationRing}.
 */
package io.rdma4j.internal.ring;
