package io.rdma4j.shm.ffi;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.IntConsumer;

/**
 * Memory a same-host peer can map: an anonymous memory file ({@code memfd_create}) mapped
 * shared into this process, its size sealed. A peer opens the same file through
 * {@code /proc/<pid>/fd/<fd>} and maps the same pages, so copies between them are plain memory
 * copies. The kernel lets every process of this user open that path, Yama or not (a
 * {@code PTRACE_MODE_READ} check): the file's contents are as reachable as the descriptor
 * number is guessable, whatever key guards the buffer.
 */
@SuppressWarnings("restricted")     // the cleanup that closes the descriptor is tied to the arena here
public final class MemoryFile {

    private MemoryFile() {
    }

    /**
     * Creates a memory file of {@code size} bytes and maps all of it read-write. When
     * {@code arena} closes, the mapping is removed and the descriptor closed (then
     * {@code onClose} receives it); pages stay alive while a peer still maps them.
     *
     * @param name    a name for {@code /proc/<pid>/fd} listings
     * @param size    bytes, at least 1
     * @param arena   the lifetime of the mapping and of the descriptor; owned by the caller
     * @param onClose told the descriptor number just before it is closed (to forget it); runs in
     *                {@code arena}'s close, must not throw
     * @return the zeroed, page-aligned mapping, of {@code arena}'s lifetime; its descriptor is
     *         open until the arena closes
     * @throws IOException if the file cannot be created, sized or mapped (nothing is left open)
     */
    public static Mapped create(String name, long size, Arena arena, IntConsumer onClose) throws IOException {
        int fd = Libc.memfdCreate(name, size);
        MemorySegment mapping;
        try {
            mapping = map(Path.of("/proc/self/fd/" + fd), size, arena);
        } catch (IOException | RuntimeException e) {
            Libc.close(fd);
            throw e;
        }
        // The descriptor must outlive the mapping's users, so it is closed by the same arena.
        // onClose runs first: once closed, the number may be reused by another thread's new file.
        MemorySegment withCleanup = mapping.reinterpret(arena, s -> {
            onClose.accept(fd);
            Libc.close(fd);
        });
        return new Mapped(withCleanup, fd);
    }

    /**
     * Maps {@code size} bytes of {@code file} read-write, shared, into {@code arena}.
     *
     * @param file a memory file, e.g. {@code /proc/<pid>/fd/<fd>} of a peer
     * @param size bytes to map from offset 0; the file must be at least this long
     * @param arena the mapping's lifetime; closing it unmaps
     * @return the mapping
     * @throws IOException if the file cannot be opened (no permission, the peer exited) or is shorter
     */
    public static MemorySegment map(Path file, long size, Arena arena) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (channel.size() < size) {
                throw new IOException(file + " is " + channel.size() + " bytes, expected at least " + size);
            }
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
        }
    }

    /**
     * A mapped memory file.
     *
     * @param segment the mapping, of the creating arena's lifetime
     * @param fd      the descriptor, open until that arena closes
     */
    public record Mapped(MemorySegment segment, int fd) {
    }
}
