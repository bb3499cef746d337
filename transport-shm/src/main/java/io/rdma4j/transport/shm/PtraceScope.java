package io.rdma4j.transport.shm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * The Yama security module's {@code /proc/sys/kernel/yama/ptrace_scope}, which decides, on top
 * of the classic same-user rule, who may attach to (and so {@code process_vm_readv}) a process.
 */
public enum PtraceScope {
    /** No Yama in this kernel: the classic rule alone (same user, or {@code CAP_SYS_PTRACE}). */
    NO_YAMA,
    /** 0: the classic rule. */
    CLASSIC,
    /**
     * 1: only ancestors, or the process the target named with {@code prctl(PR_SET_PTRACER)}: the
     * owner must allow its peers before they can read it.
     */
    RESTRICTED,
    /** 2: only holders of {@code CAP_SYS_PTRACE}. */
    ADMIN_ONLY,
    /** 3: nobody, until reboot. */
    NO_ATTACH;

    /** Where Yama publishes the setting. */
    public static final Path FILE = Path.of("/proc/sys/kernel/yama/ptrace_scope");

    /**
     * The scope in force, read from {@link #FILE}.
     *
     * @return the scope; {@link #NO_YAMA} when the file does not exist
     * @throws IOException              if the file exists but cannot be read
     * @throws IllegalArgumentException if it holds something other than 0 to 3
     */
    public static PtraceScope current() throws IOException {
        return read(FILE);
    }

    /**
     * The scope written in {@code file}; for tests.
     *
     * @param file a file holding 0, 1, 2 or 3
     * @return the scope; {@link #NO_YAMA} when the file does not exist
     * @throws IOException              if the file exists but cannot be read
     * @throws IllegalArgumentException if it holds something else
     */
    static PtraceScope read(Path file) throws IOException {
        String text;
        try {
            text = Files.readString(file).trim();
        } catch (NoSuchFileException e) {
            return NO_YAMA;
        }
        return switch (text) {
            case "0" -> CLASSIC;
            case "1" -> RESTRICTED;
            case "2" -> ADMIN_ONLY;
            case "3" -> NO_ATTACH;
            default -> throw new IllegalArgumentException("unexpected " + file + ": '" + text + "'");
        };
    }
}
