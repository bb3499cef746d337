package io.rdma4j;

import io.rdma4j.spi.Setting;
import io.rdma4j.spi.TransportProvider;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code docs/settings.md}, the settings reference, says what the {@link Setting} declarations say:
 * api's {@link RdmaSettings#all()} and the settings of each of the project's transports (all on
 * this module's class path). Its table has one row per declared setting, generated from the
 * declaration (key, environment variable, default, description), and its text names no
 * {@code rdma.*} key or {@code RDMA_*} variable that nothing declares. On a mismatch the failure
 * message carries the table as the declarations would write it, to paste into the file.
 */
class SettingsReferenceTest {

    private static final Path REFERENCE = Path.of("..", "docs", "settings.md");
    /** Names the reference misspells on purpose, to show the warning a typo gets. */
    private static final Set<String> MISSPELT_ON_PURPOSE = Set.of("rdma.tcp.paralelism");
    private static final Pattern KEY = Pattern.compile("rdma\\.[A-Za-z][A-Za-z0-9.]*[A-Za-z0-9]");
    private static final Pattern ENV = Pattern.compile("RDMA_[A-Z0-9_]*[A-Z0-9]");

    @Test
    void everyDeclaredSetting_hasItsGeneratedRowInTheReference() throws IOException {
        Map<String, String> expected = new LinkedHashMap<>();
        declared().forEach(s -> expected.put(s.key(), row(s)));
        Map<String, String> documented = new LinkedHashMap<>();
        for (String line : Files.readAllLines(REFERENCE)) {
            if (line.startsWith("| `rdma.")) {
                documented.put(line.substring(3, line.indexOf('`', 3)), line.strip());
            }
        }

        assertEquals(expected, documented, () -> "docs/settings.md and the Setting declarations disagree; "
                + "the table as the declarations write it:\n" + String.join("\n", expected.values()));
    }

    @Test
    void theReference_namesOnlyDeclaredKeysAndVariables() throws IOException {
        String text = Files.readString(REFERENCE);
        Set<String> keys = declared().stream().map(Setting::key).collect(Collectors.toSet());
        Set<String> envVars = declared().stream().map(Setting::envVar).collect(Collectors.toSet());

        Set<String> unknown = new TreeSet<>();
        for (Matcher m = KEY.matcher(text); m.find(); ) {
            if (!keys.contains(m.group()) && !MISSPELT_ON_PURPOSE.contains(m.group())) {
                unknown.add(m.group());
            }
        }
        for (Matcher m = ENV.matcher(text); m.find(); ) {
            if (!envVars.contains(m.group())) {
                unknown.add(m.group());
            }
        }

        assertTrue(unknown.isEmpty(), () -> "docs/settings.md names settings nothing declares: " + unknown);
    }

    @Test
    void everyProjectTransport_isOnThisClassPath() {
        Set<String> found = new TreeSet<>();
        ServiceLoader.load(TransportProvider.class).forEach(p -> found.add(p.name()));

        assertTrue(found.containsAll(SettingsCheck.PROJECT_TRANSPORT_SETTINGS.keySet()),
                () -> "the reference is checked against " + found + ", not every project transport "
                        + SettingsCheck.PROJECT_TRANSPORT_SETTINGS.keySet());
    }

    /** api's settings, then each project transport's, highest priority first. */
    private static List<Setting<?>> declared() {
        List<Setting<?>> all = new ArrayList<>(RdmaSettings.all());
        ServiceLoader.load(TransportProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> SettingsCheck.PROJECT_TRANSPORT_SETTINGS.containsKey(p.name()))
                .sorted(Comparator.comparingInt(TransportProvider::priority).reversed())
                .forEach(p -> all.addAll(p.settings()));
        return all;
    }

    /** The reference's row for {@code s}: key, environment variable, default, description. */
    private static String row(Setting<?> s) {
        return "| `" + s.key() + "` | " + (s.envVar().isEmpty() ? "(none)" : "`" + s.envVar() + "`") + " | "
                + (s.defaultText().isEmpty() ? "(empty)" : "`" + s.defaultText() + "`") + " | "
                + s.description().replace("|", "\\|") + " |";
    }
}
