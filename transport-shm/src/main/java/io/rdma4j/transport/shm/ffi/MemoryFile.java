package io.rdma4j.transport.shm.ffi;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * Memory a same-host peer can map: an anonymous memory file ({@code memfd_create}) mapped
 * shared into this process, its size sealed, its descriptor {@link ParkedFd parked}.
 *
 * <p>Who can reach it: the kernel lets every process of this user open a descriptor of this
 * process through {@code /proc/<pid>/fd/<n>} (a {@code PTRACE_MODE_READ} check that Yama does not
 * restrict), so the file's descriptor is not left there: right after mapping it is parked in a
 * socket's queue, and a peer gets one only when this process hands it over ({@code SCM_RIGHTS},
 * {@link ParkedFd#take()}). Two short windows remain in which the number exists in this
 * process's table: between {@code memfd_create} and parking (creation), and between a take and the
 * close that follows the hand-over. {@code /proc/<pid>/map_files/} also names the mapping, but
 * opening it needs {@code CAP_SYS_ADMIN} (or {@code CAP_CHECKPOINT_RESTORE}).
 */
@SuppressWarnings("restricted")     // a mapping's address becomes a segment with its unmapping attached
public final class MemoryFile {

    private MemoryFile() {
    }

    /**
     * Creates a memory file of {@code size} bytes, maps all of it read-write, and parks its
     * descriptor. When {@code arena} closes, {@code onClose} is told first, then the mapping is
     * removed and the parked descriptor closed; pages stay alive while a peer still maps them.
     *
     * @param name    a name for {@code /proc/<pid>/maps} listings
     * @param size    bytes, at least 1
     * @param arena   the lifetime of the mapping and of the parked descriptor; owned by the caller
     * @param onClose told the file just before it is unmapped; runs in {@code arena}'s close, must not throw
     * @return the zeroed, page-aligned mapping, of {@code arena}'s lifetime, and its parked descriptor
     * @throws IOException if the file cannot be created, sized, mapped or parked (nothing is left open)
     */
    public static Mapped create(String name, long size, Arena arena, Consumer<Mapped> onClose) throws IOException {
        return create(name, size, arena, onClose, false);
    }

    /**
     * {@link #create} of a file that only this process writes: after this process mapped it
     * writable, it is sealed against every new writable mapping ({@code F_SEAL_FUTURE_WRITE}), so
     * a peer it is handed to can map it read-only only ({@link #mapReadOnly}).
     *
     * @throws IOException as {@link #create} does, or if the kernel lacks the seal (before Linux 5.1)
     */
    public static Mapped createPeerReadOnly(String name, long size, Arena arena) throws IOException {
        return create(name, size, arena, m -> { }, true);
    }

    private static Mapped create(String name, long size, Arena arena, Consumer<Mapped> onClose, boolean peerReadOnly)
            throws IOException {
        int fd = Libc.memfdCreate(name, size, peerReadOnly ? Libc.SEAL_SIZE_OPEN : Libc.SEAL_SIZE);
        long address;
        try {
            address = Libc.mmapShared(fd, size);
            if (peerReadOnly) {
                try {
                    Libc.sealFutureWrites(fd);
                } catch (IOException | RuntimeException e) {
                    Libc.munmap(address, size);
                    throw e;
                }
            }
        } catch (IOException | RuntimeException e) {
            Libc.close(fd);
            throw e;
        }
        ParkedFd parked;
        try {
            parked = ParkedFd.park(fd);     // closes fd
        } catch (IOException | RuntimeException e) {
            Libc.munmap(address, size);
            throw e;
        }
        AtomicReference<Mapped> self = new AtomicReference<>();
        MemorySegment segment = MemorySegment.ofAddress(address).reinterpret(size, arena, s -> {
            onClose.accept(self.get());
            Libc.munmap(address, size);
            parked.close();
        });
        Mapped mapped = new Mapped(segment, parked);
        self.set(mapped);
        return mapped;
    }

    /**
     * Maps {@code size} bytes of a memory file a peer handed over, read-write and shared, into
     * {@code arena}. The descriptor is not needed afterwards: the caller closes it (the mapping
     * keeps the pages).
     *
     * @param fd    a memory file's descriptor
     * @param size  bytes to map from offset 0
     * @param arena the mapping's lifetime; closing it unmaps
     * @return the mapping
     * @throws IOException if the file is shorter than {@code size}, is not sealed against shrinking
     *                     (a shrink under the mapping would fault this process's next access), or
     *                     cannot be mapped
     */
    public static MemorySegment map(int fd, long size, Arena arena) throws IOException {
        return map(fd, size, arena, true);
    }

    /**
     * {@link #map} read-only: for a file this process may not write (one sealed by
     * {@link #createPeerReadOnly}).
     *
     * @throws IOException as {@link #map} does
     */
    public static MemorySegment mapReadOnly(int fd, long size, Arena arena) throws IOException {
        return map(fd, size, arena, false).asReadOnly();
    }

    private static MemorySegment map(int fd, long size, Arena arena, boolean writable) throws IOException {
        long[] sizeAndSeals = Libc.sizeAndSeals(fd);
        if (sizeAndSeals[0] < size) {
            throw new IOException("the memory file is " + sizeAndSeals[0] + " bytes, expected at least " + size);
        }
        if ((sizeAndSeals[1] & Libc.SEAL_SHRINK) == 0) {
            throw new IOException("the memory file is not sealed against shrinking (seals " + sizeAndSeals[1] + ")");
        }
        long address = Libc.mmapShared(fd, size, writable);
        return MemorySegment.ofAddress(address).reinterpret(size, arena, s -> Libc.munmap(address, size));
    }

    /**
     * A mapped memory file.
     *
     * @param segment the mapping, of the creating arena's lifetime
     * @param parked  its descriptor, parked until that arena closes: {@link ParkedFd#take()} for a hand-over
     */
    public record Mapped(MemorySegment segment, ParkedFd parked) {
    }
}
