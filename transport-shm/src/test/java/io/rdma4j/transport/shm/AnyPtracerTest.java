package io.rdma4j.transport.shm;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The owner's permission plan, for every Yama scope with and without the opt-in. */
class AnyPtracerTest {

    @ParameterizedTest(name = "{0}, allowAnyPtracer={1}")
    @CsvSource({
            "NO_YAMA,    false, false, true",
            "NO_YAMA,    true,  false, true",
            "CLASSIC,    false, false, true",
            "CLASSIC,    true,  false, true",
            "RESTRICTED, false, false, false",
            "RESTRICTED, true,  true,  true",
            "ADMIN_ONLY, false, false, false",
            "ADMIN_ONLY, true,  false, false",
            "NO_ATTACH,  false, false, false",
            "NO_ATTACH,  true,  false, false"})
    void plan_loosensOnlyYama1_andOnlyWhenOptedIn(PtraceScope scope, boolean allowAnyPtracer,
                                                  boolean setsAnyPtracer, boolean peersMayAttach) {
        AnyPtracer.Plan plan = AnyPtracer.plan(scope, allowAnyPtracer);

        assertEquals(setsAnyPtracer, plan.setAnyPtracer());
        assertEquals(peersMayAttach, plan.refusal().isEmpty(), plan.refusal());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "RESTRICTED | Yama ptrace_scope=1 lets only the owner's ancestors attach to it, and rdma.shm.allowAnyPtracer is false",
            "ADMIN_ONLY | Yama ptrace_scope=2 lets only CAP_SYS_PTRACE holders attach"})
    void plan_withoutAttach_saysWhy(PtraceScope scope, String why) {
        assertEquals(why, AnyPtracer.plan(scope, false).refusal());
    }
}
