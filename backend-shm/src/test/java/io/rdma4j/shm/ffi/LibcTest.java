package io.rdma4j.shm.ffi;

import io.rdma4j.shm.PtraceScope;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class LibcTest {

    @Test
    void allowAnyPtracer_succeedsUnderYama_andIsInvalidWithout() throws Exception {
        int errno = Libc.allowAnyPtracer();

        assertEquals(PtraceScope.current() == PtraceScope.NO_YAMA ? Errno.EINVAL : 0, errno, Errno.describe(errno));
    }
}
