package io.rdma4j.transport.shm;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class PtraceScopeTest {

    @ParameterizedTest
    @CsvSource({"0, CLASSIC", "1, RESTRICTED", "2, ADMIN_ONLY", "3, NO_ATTACH", "'1\n', RESTRICTED"})
    void read_eachValue_mapsToItsScope(String text, PtraceScope expected, @TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("ptrace_scope"), text);

        assertEquals(expected, PtraceScope.read(file));
    }

    @Test
    void read_missingFile_isNoYama(@TempDir Path dir) throws IOException {
        assertEquals(PtraceScope.NO_YAMA, PtraceScope.read(dir.resolve("ptrace_scope")));
    }

    @Test
    void read_unexpectedText_throwsNamingFileAndText(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("ptrace_scope"), "7");

        var e = assertThrows(IllegalArgumentException.class, () -> PtraceScope.read(file));

        assertEquals("unexpected " + file + ": '7'", e.getMessage());
    }
}
