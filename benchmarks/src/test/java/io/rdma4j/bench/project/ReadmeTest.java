package io.rdma4j.bench.project;

import io.rdma4j.RdmaSettings;
import io.rdma4j.spi.BackendProvider;
import io.rdma4j.spi.Setting;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** The README keeps up with the code. */
class ReadmeTest {

    private static String readme() throws IOException {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !(Files.exists(p.resolve("README.md")) && Files.isDirectory(p.resolve("rdma-spi")))) {
            p = p.getParent();
        }
        if (p == null) {
            fail("cannot find the repository root from " + Path.of("").toAbsolutePath());
        }
        return Files.readString(p.resolve("README.md"));
    }

    @Test
    void settingsTable_listsEveryDeclaredSettingWithItsEnvironmentVariableAndDefault() throws IOException {
        String readme = readme();
        List<Setting<?>> all = new ArrayList<>(RdmaSettings.all());
        ServiceLoader.load(BackendProvider.class).forEach(p -> all.addAll(p.settings()));

        List<String> missing = new ArrayList<>();
        for (Setting<?> s : all) {
            String defaultCell = s.defaultText().isEmpty() ? "(empty)" : "`" + s.defaultText() + "`";
            String row = "| `" + s.key() + "` | `" + s.envVar() + "` | " + defaultCell + " |";
            if (!readme.contains(row)) {
                missing.add(row);
            }
        }

        assertTrue(missing.isEmpty(), "README settings table lacks or misstates:\n" + String.join("\n", missing));
    }

    @Test
    void readme_statesTheTwoCommands() throws IOException {
        String readme = readme();

        assertTrue(readme.contains("bin/rdma-perf"));
        assertTrue(readme.contains("bin/test"));
    }
}
