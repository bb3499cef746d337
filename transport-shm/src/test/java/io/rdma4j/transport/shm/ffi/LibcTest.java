package io.rdma4j.transport.shm.ffi;

import io.rdma4j.unix.Errno;
import io.rdma4j.transport.shm.PtraceScope;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class LibcTest {

    @Test
    void allowAnyPtracer_andItsUndo_succeedUnderYama_andAreInvalidWithout() throws Exception {
        int expected = PtraceScope.current() == PtraceScope.NO_YAMA ? Errno.EINVAL : 0;

        int allowed = Libc.allowAnyPtracer();
        int cleared = Libc.clearPtracer();          // never leaves this test JVM loosened

        assertEquals(expected, allowed, Errno.describe(allowed));
        assertEquals(expected, cleared, Errno.describe(cleared));
    }
}
