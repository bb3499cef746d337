package io.rdma4j.transport.shm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * Who this process is, as far as reaching another process's memory is concerned: the kernel's
 * boot id (one per boot of one machine, so two hosts never share it, even with the same name),
 * the inode numbers of this process's pid, user and mount namespaces, and its real user id.
 *
 * <p>Two processes can copy each other's memory with cross-memory attach only when all of them
 * say so: the same boot (same kernel), the same pid namespace (a pid means the same process to
 * both), the same user namespace and the same uid (the kernel's ptrace check). The mount
 * namespace is carried for a future shared-mapping path and reported, not required. The host
 * name is never used.
 *
 * <p>Immutable; travels in tokens as {@link #ENCODED_BYTES} bytes ({@link #toBytes()}).
 *
 * @param bootId         {@code /proc/sys/kernel/random/boot_id}
 * @param pidNamespace   inode of {@code /proc/self/ns/pid}
 * @param userNamespace  inode of {@code /proc/self/ns/user}
 * @param mountNamespace inode of {@code /proc/self/ns/mnt}
 * @param uid            the real user id of the process
 */
public record HostIdentity(UUID bootId, long pidNamespace, long userNamespace, long mountNamespace, int uid) {

    /** Size of {@link #toBytes()}: a format byte, the boot id, three inodes and the uid. */
    public static final int ENCODED_BYTES = 1 + 16 + 3 * 8 + 4;

    private static final byte FORMAT = 1;

    /**
     * Validates.
     *
     * @throws NullPointerException if {@code bootId} is null
     */
    public HostIdentity {
        Objects.requireNonNull(bootId, "bootId");
    }

    /**
     * This process's identity, read from {@code /proc}.
     *
     * @return the identity
     * @throws UncheckedIOException if {@code /proc} cannot be read (not Linux, or {@code /proc} not mounted)
     */
    public static HostIdentity current() {
        return current(Path.of("/proc"));
    }

    /**
     * The identity read from a {@code /proc}-like tree; for tests.
     *
     * @param proc the {@code /proc} directory
     * @return the identity
     * @throws UncheckedIOException if a file is missing or unreadable
     * @throws IllegalArgumentException if a file holds something unexpected
     */
    static HostIdentity current(Path proc) {
        try {
            UUID boot = UUID.fromString(Files.readString(proc.resolve("sys/kernel/random/boot_id")).trim());
            Path self = proc.resolve("self");
            return new HostIdentity(boot,
                    namespaceInode(self.resolve("ns/pid")),
                    namespaceInode(self.resolve("ns/user")),
                    namespaceInode(self.resolve("ns/mnt")),
                    (Integer) Files.getAttribute(self, "unix:uid"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read this process's identity under " + proc, e);
        }
    }

    /** {@code pid:[4026531836]} -> 4026531836: the link text names the namespace's inode. */
    private static long namespaceInode(Path link) throws IOException {
        String text = Files.readSymbolicLink(link).toString();
        int open = text.indexOf('[');
        int close = text.lastIndexOf(']');
        if (open < 0 || close < open) {
            throw new IllegalArgumentException("unexpected namespace link " + link + " -> " + text);
        }
        return Long.parseLong(text.substring(open + 1, close));
    }

    /**
     * Why this process cannot copy {@code peer}'s memory with cross-memory attach, or empty when
     * nothing in the two identities forbids it (the kernel may still refuse: Yama, seccomp).
     *
     * @param peer the other process's identity
     * @return the first reason found, e.g. "different host (boot id ...)", or empty
     */
    public Optional<String> whyNotReachable(HostIdentity peer) {
        Objects.requireNonNull(peer, "peer");
        if (!bootId.equals(peer.bootId)) {
            return Optional.of("different host (boot id " + peer.bootId + ", here " + bootId + ")");
        }
        if (pidNamespace != peer.pidNamespace) {
            return Optional.of("different pid namespace (" + peer.pidNamespace + ", here " + pidNamespace + ")");
        }
        if (userNamespace != peer.userNamespace) {
            return Optional.of("different user namespace (" + peer.userNamespace + ", here " + userNamespace + ")");
        }
        if (uid != peer.uid) {
            return Optional.of("different user (uid " + peer.uid + ", here " + uid + ")");
        }
        return Optional.empty();
    }

    /**
     * The {@link #ENCODED_BYTES}-byte form: format 1, boot id, pid, user and mount namespace
     * inodes, uid; big-endian.
     *
     * @return a new array
     */
    public byte[] toBytes() {
        return ByteBuffer.allocate(ENCODED_BYTES).put(FORMAT)
                .putLong(bootId.getMostSignificantBits()).putLong(bootId.getLeastSignificantBits())
                .putLong(pidNamespace).putLong(userNamespace).putLong(mountNamespace).putInt(uid).array();
    }

    /**
     * Reads {@link #toBytes()}'s form from {@code in}'s position, advancing it.
     *
     * @param in the bytes
     * @return the identity
     * @throws IllegalArgumentException if fewer than {@link #ENCODED_BYTES} bytes remain or the
     *                                  format is unknown
     */
    public static HostIdentity read(ByteBuffer in) {
        if (in.remaining() < ENCODED_BYTES) {
            throw new IllegalArgumentException("truncated host identity: " + in.remaining()
                    + " bytes, need " + ENCODED_BYTES);
        }
        byte format = in.get();
        if (format != FORMAT) {
            throw new IllegalArgumentException("unknown host identity format " + format);
        }
        return new HostIdentity(new UUID(in.getLong(), in.getLong()), in.getLong(), in.getLong(), in.getLong(),
                in.getInt());
    }
}
