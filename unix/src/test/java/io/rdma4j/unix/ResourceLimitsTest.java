package io.rdma4j.unix;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ResourceLimitsTest {

    @Test
    void lockedMemory_isWhatTheKernelReportsForThisProcess_inKiB() throws IOException {
        // /proc/self/limits: "Max locked memory   <soft> <hard> bytes", or "unlimited"
        String soft = Files.readAllLines(Path.of("/proc/self/limits")).stream()
                .filter(l -> l.startsWith("Max locked memory"))
                .map(l -> l.substring("Max locked memory".length()).trim().split("\\s+")[0])
                .findFirst().orElseThrow();
        String expected = soft.equals("unlimited") ? "unlimited" : Long.toString(Long.parseLong(soft) / 1024);

        assertEquals(expected, ResourceLimits.lockedMemory());
    }
}
