package io.rdma4j.transport.ibverbs.ffi;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Registering more than the locked-memory limit allows fails with a message that says so. */
@Tag("softroce")
class SoftRoceLockedMemoryVmTest {

    @Test
    void register_largerThanTheLockedMemoryLimit_failsNamingTheLimit() throws Throwable {
        try (VerbsContext context = VerbsContext.open("rxe0"); Arena arena = Arena.ofShared()) {
            ProtectionDomain pd = context.allocateProtectionDomain();
            MemorySegment buffer = arena.allocate(64L << 20, 4096);
            IbverbsException[] thrown = new IbverbsException[1];

            ThreadPrivileges.withoutIpcLock(4L << 20, () -> thrown[0] = assertThrows(IbverbsException.class,
                    () -> pd.register(buffer, RcPair.ACCESS)));

            assertEquals("ibv_reg_mr", thrown[0].function());
            assertEquals(12, thrown[0].errno());
            assertTrue(thrown[0].getMessage().startsWith("ibv_reg_mr failed: errno 12 (Cannot allocate memory); registering "
                    + (64L << 20) + " bytes; the likely cause is the locked-memory limit: ulimit -l is 4096 (KiB)"),
                    thrown[0].getMessage());
            pd.register(buffer, RcPair.ACCESS).close();    // with the privilege back, the same buffer registers
        }
    }
}
