package io.rdma4j.transport.ibverbs.ffi;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Error messages name the C function, the errno and its text; ENOMEM from ibv_reg_mr names the locked-memory limit. */
class IbverbsExceptionTest {

    @Test
    void failed_namesFunctionErrnoAndText() {
        IbverbsException e = IbverbsException.failed("ibv_create_qp", 22, "");

        assertEquals("ibv_create_qp failed: errno 22 (Invalid argument)", e.getMessage());
        assertEquals("ibv_create_qp", e.function());
        assertEquals(22, e.errno());
    }

    @Test
    void registrationFailed_enomem_givesTheCurrentLockedMemoryLimit() throws IOException, InterruptedException {
        String ulimit = shell("ulimit -l");

        IbverbsException e = IbverbsException.registrationFailed(1L << 30, io.rdma4j.unix.Errno.ENOMEM);

        assertTrue(e.getMessage().startsWith("ibv_reg_mr failed: errno 12 (Cannot allocate memory); registering 1073741824 bytes;"),
                e.getMessage());
        assertTrue(e.getMessage().contains("the likely cause is the locked-memory limit: ulimit -l is " + ulimit + " (KiB)"),
                e.getMessage() + " / ulimit -l: " + ulimit);
    }

    @Test
    void registrationFailed_otherErrno_doesNotBlameTheLimit() {
        IbverbsException e = IbverbsException.registrationFailed(4096, 14);

        assertEquals("ibv_reg_mr failed: errno 14 (Bad address); registering 4096 bytes", e.getMessage());
    }

    private static String shell(String command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("sh", "-c", command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertEquals(0, p.waitFor(), out);
        return out;
    }
}
