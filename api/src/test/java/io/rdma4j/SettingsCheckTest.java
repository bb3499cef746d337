package io.rdma4j;

import io.rdma4j.testing.LogCapture;
import io.rdma4j.testing.Managers;
import io.rdma4j.testing.StubProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.Map;
import java.util.logging.Level;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SettingsCheckTest {

    @RegisterExtension
    final Managers managers = new Managers();
    @RegisterExtension
    final LogCapture logs = new LogCapture();

    private static RdmaManagerBuilder builder(Map<String, String> properties, Map<String, String> environment) {
        RdmaManagerBuilder b = RdmaManager.newBuilder().providers(List.of(new StubProvider("stub", 1)));
        b.properties = () -> properties;
        b.environment = () -> environment;
        return b;
    }

    private List<String> warnings() {
        return logs.messages(Level.WARNING);
    }

    @Test
    void build_misspeltRdmaProperty_warnsNamingTheClosestSetting() {
        managers.track(builder(Map.of("rdma.tcp.paralelism", "4"), Map.of()).build());

        assertEquals(1, warnings().size(), warnings().toString());
        assertTrue(warnings().getFirst().contains("unknown system property rdma.tcp.paralelism (did you mean "
                + "rdma.tcp.parallelism?)"), warnings().toString());
    }

    @Test
    void build_misspeltRdmaEnvironmentVariable_warnsNamingTheClosestSetting() {
        managers.track(builder(Map.of(), Map.of("RDMA_TOKEN_CACHE_ENTRYS", "8")).build());

        assertEquals(1, warnings().size(), warnings().toString());
        assertTrue(warnings().getFirst().contains("unknown environment variable RDMA_TOKEN_CACHE_ENTRYS (did you mean "
                + "RDMA_TOKEN_CACHE_ENTRIES?)"), warnings().toString());
    }

    @Test
    void build_unknownPropertyUnderStrictSettings_failsNamingItAndTheClosestSetting() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> builder(Map.of("rdma.strictSettings", "true", "rdma.bindhots", "0.0.0.0"), Map.of()).build());

        assertTrue(e.getMessage().contains("unknown system property rdma.bindhots (did you mean rdma.bindHost?)"),
                e.getMessage());
    }

    @Test
    void build_unknownVariableUnderStrictSettingsFromTheEnvironment_failsNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> builder(Map.of(), Map.of("RDMA_STRICT_SETTINGS", "true", "RDMA_CONTROL_PROT", "1")).build());

        assertTrue(e.getMessage().contains("unknown environment variable RDMA_CONTROL_PROT (did you mean "
                + "RDMA_CONTROL_PORT?)"), e.getMessage());
    }

    @Test
    void build_otherPropertiesAndVariables_reportNothing() {
        managers.track(builder(Map.of("java.version", "25", "rdmaperf.stderr.tty", "true", "rdma.bindHost", "127.0.0.1"),
                Map.of("RDMAV_FORK_SAFE", "1", "RDMA_PERF_JAVA_OPTS", "-Xmx1g", "RDMA_CONTROL_PORT", "0",
                        "RDMA_STRICT_SETTINGS", "true")).build());

        assertEquals(List.of(), warnings());
    }

    @Test
    void build_builderSettingOfAnAbsentProjectTransport_acceptedWithAWarning() {
        managers.track(RdmaManager.newBuilder().isolated().providers(List.of(new StubProvider("stub", 1)))
                .set("rdma.disableIbverbs", "true").build());

        assertEquals(1, warnings().size(), warnings().toString());
        assertTrue(warnings().getFirst().contains("setting rdma.disableIbverbs belongs to the ibverbs transport, which is "
                + "not on the class or module path"), warnings().toString());
    }

    @Test
    void build_propertyAndVariableOfAnAbsentProjectTransportUnderStrictSettings_acceptedWithWarnings() {
        managers.track(builder(Map.of("rdma.strictSettings", "true", "rdma.shm.disable", "true"),
                Map.of("RDMA_TCP_FALLBACK_PARALLELISM", "4")).build());

        assertEquals(2, warnings().size(), warnings().toString());
        assertTrue(warnings().get(0).contains("system property rdma.shm.disable belongs to the shm transport"),
                warnings().toString());
        assertTrue(warnings().get(1).contains("environment variable RDMA_TCP_FALLBACK_PARALLELISM belongs to the tcp "
                + "transport"), warnings().toString());
    }

    @Test
    void build_unknownBuilderKey_failsNamingTheClosestSetting() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RdmaManager.newBuilder().isolated()
                .providers(List.of(new StubProvider("stub", 1))).set("rdma.tokenCacheEntrie", "4").build());

        assertTrue(e.getMessage().contains("unknown setting 'rdma.tokenCacheEntrie' (did you mean rdma.tokenCacheEntries?)"),
                e.getMessage());
    }

    @Test
    void hint_nameFarFromEveryKnownOne_suggestsNothing() {
        SettingsCheck check = new SettingsCheck(RdmaSettings.all());

        assertEquals("", check.hint("rdma.somethingElseEntirely.quiteLong"));
    }

    @Test
    void distance_countsInsertionsDeletionsAndSubstitutions() {
        assertEquals(0, SettingsCheck.distance("abc", "abc"));
        assertEquals(1, SettingsCheck.distance("paralelism", "parallelism"));
        assertEquals(2, SettingsCheck.distance("bindhots", "bindhost"));
        assertEquals(3, SettingsCheck.distance("", "abc"));
        assertEquals(3, SettingsCheck.distance("kitten", "sitting"));
    }
}
