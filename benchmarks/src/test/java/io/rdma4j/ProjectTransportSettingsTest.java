package io.rdma4j;

import io.rdma4j.spi.Setting;
import io.rdma4j.spi.TransportProvider;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * api's list of the settings of the project's own transports (what it accepts, with a
 * warning, when a transport's module is absent) matches what the transports declare. Here, where
 * every transport is on the class path.
 */
class ProjectTransportSettingsTest {

    @Test
    void projectTransportSettings_matchWhatEachTransportDeclares() {
        Map<String, Map<String, String>> declared = new TreeMap<>();
        for (TransportProvider p : ServiceLoader.load(TransportProvider.class)) {
            declared.put(p.name(), p.settings().stream().collect(Collectors.toMap(Setting::key, Setting::envVar,
                    (a, b) -> a, TreeMap::new)));
        }
        Map<String, Map<String, String>> listed = new TreeMap<>();
        SettingsCheck.PROJECT_TRANSPORT_SETTINGS.forEach((name, settings) -> listed.put(name, new TreeMap<>(settings)));

        assertEquals(listed, declared);
    }
}
