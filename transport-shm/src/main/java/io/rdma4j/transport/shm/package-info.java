/**
 * The same-host transport, {@code "shm"}: a holder on the same machine as a buffer's owner
 * copies the owner's memory itself, one copy, no work on the owner's CPU per op: an
 * {@code allocate()}d buffer is a memory file the owner hands over ({@code SCM_RIGHTS}, after
 * checking the key) and the holder maps; other registered memory goes by cross-memory attach
 * ({@code process_vm_readv} / {@code process_vm_writev}) where the kernel allows it.
 * docs/shm-security.md has the security model.
 *
 * <p>Same host is decided from a {@link io.rdma4j.transport.shm.HostIdentity} (boot id, namespaces, uid),
 * never from a host name. Yama's {@link io.rdma4j.transport.shm.PtraceScope} decides whether the owner
 * must first allow its peers to attach.
 *
 * <p>The native calls live in {@code io.rdma4j.transport.shm.ffi}; this package holds the logic and never
 * touches {@code Linker} or {@code MethodHandle}.
 *
 * <h2>Map of the package</h2>
 * One process is usually both: the <b>owner</b> of the buffers it registered and a <b>holder</b>
 * of other processes' tokens.
 *
 * <p><b>Entry points</b> (both sides):
 * <ul>
 * <li>{@code ShmTransportProvider}: the provider (public, priority 300): probes the kernel once, declares the settings, opens a transport.</li>
 * <li>{@code ShmTransport}: the transport of one manager: the owner's registrations and hand-over answers; submits go to its {@code ShmHolder}.</li>
 * <li>{@code ShmSettings}: the transport's settings (public).</li>
 * </ul>
 *
 * <p><b>Owner side</b> (serving registered memory):
 * <ul>
 * <li>{@code AccessTable}: the slots and rows tables shared with holders that make "no access after release" hold (the holder's view enters and exits copies).</li>
 * <li>{@code GrantedHolders}: the owner's record of each holder process it granted a buffer, and a release's wait for their copies.</li>
 * <li>{@code ArenaWatch}: looks at caller memory whose arena may close without release while holders copy; dormant when they stop.</li>
 * <li>{@code StagingServers}: the owner's staging channels: one per STAGE request, capped, closed with the transport.</li>
 * <li>{@code StagingServer}: the owner's end of one staging channel: a thread that checks each request and copies between the buffer and the staging file.</li>
 * <li>{@code AnyPtracer}: whether peers may cross-memory attach to this process, and the opt-in prctl that widens it.</li>
 * <li>{@code PtraceScope}: Yama's {@code ptrace_scope} (public), read from {@code /proc}.</li>
 * </ul>
 *
 * <p><b>Holder side</b> (reading and writing a remote buffer):
 * <ul>
 * <li>{@code ShmHolder}: runs ops: the grant asked once per buffer, the copy announced in the owner's table, split in parts on helper threads.</li>
 * <li>{@code ShmPeers}: decides once per owner whether it can be reached and which path each kind of its memory takes.</li>
 * <li>{@code ShmPeer}: one owner as the holder sees it: pid, pidfd, hand-over socket, its mapped access table, the grants by buffer.</li>
 * <li>{@code ShmRemote}: a decoded token: this manager's own buffer, an attached one (mapping or cross-memory attach), or a staged one.</li>
 * <li>{@code ShmCopy}: one op's copy in pieces, checking deadline, release and cancellation before each.</li>
 * <li>{@code ShmBatchCopy}: a run of small ops on one buffer, copied together (one table row, vectored calls).</li>
 * <li>{@code StagingChannel}: the holder's end of a staging channel: the way to an owner's memory that needs no ptrace rights.</li>
 * <li>{@code Cancellation}: stops an op between two pieces; {@code cancel()} returns once no piece is in flight.</li>
 * </ul>
 *
 * <p><b>Wire formats and the hand-over</b> (both sides):
 * <ul>
 * <li>{@code ShmContext}: the shm part of a token: owner identity, process, hand-over socket, access table, refusal.</li>
 * <li>{@code ShmProtocol}: the messages on the hand-over socket: ATTACH and STAGE, grants and refusals.</li>
 * <li>{@code StagingProtocol}: the messages of a staging channel.</li>
 * <li>{@code Handover}: the owner's hand-over socket ({@code AF_UNIX}, {@code SO_PEERCRED}, {@code SCM_RIGHTS}) and the holder's requests to it.</li>
 * <li>{@code HostIdentity}: who this process is, for deciding whether another process is reachable (boot id, namespaces, uid).</li>
 * </ul>
 *
 * <p><b>Native calls</b>: {@code io.rdma4j.transport.shm.ffi} (memory files, parked descriptors,
 * {@code process_vm_readv}/{@code writev}, unix sockets, {@code prctl}).
 */
package io.rdma4j.transport.shm;
