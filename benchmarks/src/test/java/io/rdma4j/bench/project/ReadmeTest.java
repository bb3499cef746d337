package io.rdma4j.bench.project;

import org.junit.jupiter.api.Test;

import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The README and the pages under docs/ keep up with the code (the settings reference: {@code io.rdma4j.SettingsReferenceTest}). */
class ReadmeTest {

    private static String readme() throws IOException {
        return Files.readString(Repository.root().resolve("README.md"));
    }


    @Test
    void readme_statesTheTwoCommands() throws IOException {
        String readme = readme();

        assertTrue(readme.contains("bin/rdma-perf"));
        assertTrue(readme.contains("bin/test"));
    }

    @Test
    void links_pointAtFilesOfTheRepository() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(Repository.root().resolve("README.md"), Repository.root().resolve("benchmarks/README.md")));
        try (var docs = Files.walk(Repository.root().resolve("docs"))) {
            docs.filter(f -> f.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        for (Path file : pages) {
            String name = Repository.root().relativize(file).toString();
            Matcher m = Pattern.compile("\\]\\(([^)#\\s]+)[^)]*\\)").matcher(Files.readString(file));
            while (m.find()) {
                String target = m.group(1);
                if (!target.startsWith("http")) {
                    assertTrue(Files.exists(file.getParent().resolve(target)), name + " links to missing " + target);
                }
            }
        }
    }

    /**
     * The jshell session of {@code docs/guide.md} (the README links to it), typed into a jshell with
     * the library on its class path, prints what the page shows ({@code $N}, ports and blank lines aside).
     */
    @Test
    @Timeout(120)
    void jshellSession_printsWhatTheReadmeShows() throws Exception {
        List<String> session = jshellSession(Files.readString(Repository.root().resolve("docs/guide.md")));
        List<String> input = session.stream().filter(l -> l.startsWith(PROMPT)).map(l -> l.substring(PROMPT.length())).toList();
        List<String> expected = session.stream().filter(l -> !l.startsWith(PROMPT)).map(ReadmeTest::normalise).toList();
        assertTrue(input.size() > 5 && expected.size() > 5, session.toString());

        Path jshell = Path.of(System.getProperty("java.home"), "bin", "jshell");
        Process process = new ProcessBuilder(jshell.toString(), "-q", "--class-path", System.getProperty("java.class.path"),
                "-R--enable-native-access=ALL-UNNAMED", "-R-Djava.util.logging.config.file=/dev/null")
                .redirectErrorStream(true).start();
        process.getOutputStream().write((String.join("\n", input) + "\n/exit\n").getBytes(StandardCharsets.UTF_8));
        process.getOutputStream().close();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), output);

        List<String> actual = output.replace(PROMPT, "\n").lines().map(String::strip).filter(l -> !l.isEmpty())
                .map(ReadmeTest::normalise).toList();
        List<String> shown = actual.stream().filter(expected::contains).toList();
        assertEquals(expected, shown, "jshell printed:\n" + output);
    }

    private static final String PROMPT = "jshell> ";

    /** The lines after {@code $ bin/rdma-jshell} up to the end of the code block. */
    private static List<String> jshellSession(String readme) {
        int start = readme.indexOf("$ bin/rdma-jshell\n");
        assertTrue(start >= 0, "docs/guide.md has no jshell session");
        int end = readme.indexOf("```", start);
        return readme.substring(start, end).lines().skip(1).map(String::stripTrailing)
                .map(l -> l.startsWith(PROMPT) ? l.replaceAll("\\s+//.*$", "") : l.strip()).toList();
    }

    private static String normalise(String line) {
        return line.replaceAll("^\\$\\d+ ==>", "\\$N ==>").replaceAll(":\\d{2,5}\\b", ":PORT");
    }
}
