package io.rdma4j.transport.ibverbs;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The target grammar of the reference (behaviour spec §9.2, tests of §12.4). */
class DeviceTargetTest {

    @Nested
    class Parse {

        @Test
        void parse_cpuNuma_returnsCpuTarget() {
            DeviceTarget target = DeviceTarget.parse("cpu:0");

            assertEquals(new DeviceTarget.Cpu(0), target);
        }

        @Test
        void parse_gpuOrdinal_returnsGpuTarget() {
            DeviceTarget target = DeviceTarget.parse("gpu:1");

            assertEquals(new DeviceTarget.Gpu(1), target);
        }

        @Test
        void parse_nicName_returnsNicTarget() {
            DeviceTarget target = DeviceTarget.parse("nic:mlx5_0");

            assertEquals(new DeviceTarget.Nic("mlx5_0"), target);
        }

        @Test
        void parse_largestU32_accepted() {
            DeviceTarget target = DeviceTarget.parse("gpu:4294967295");

            assertEquals(DeviceTarget.gpu(DeviceTarget.U32_MAX), target);
        }

        @Test
        void parse_nicNameWithColon_keepsEverythingAfterFirstColon() {
            DeviceTarget target = DeviceTarget.parse("nic:a:b");

            assertEquals(DeviceTarget.nic("a:b"), target);
        }

        /** The reference's reject list, then numbers a u32 parser also refuses. */
        @ParameterizedTest
        @ValueSource(strings = {"", "cpu", "cpu:", "cpu:x", "gpu:-1", "nic:", "other:0", "mlx5_1",
                "gpu:4294967296", "cpu:1x", "cpu: 1", "CPU:0", "cpu:\u0661"})
        void parse_rejectsMalformed(String text) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DeviceTarget.parse(text));

            assertTrue(e.getMessage().contains(DeviceTarget.GRAMMAR), e.getMessage());
            assertTrue(text.isEmpty() || e.getMessage().contains("'" + text + "'"), e.getMessage());
        }
    }

    @Nested
    class ParseConfigured {

        @Test
        void parseConfigured_empty_isUnset() {
            assertEquals(Optional.empty(), DeviceTarget.parseConfigured(""));
        }

        @Test
        void parseConfigured_blank_isUnset() {
            assertEquals(Optional.empty(), DeviceTarget.parseConfigured("  \t "));
        }

        @Test
        void parseConfigured_surroundingWhitespace_trimmed() {
            Optional<DeviceTarget> target = DeviceTarget.parseConfigured("  nic:mlx5_1  ");

            assertEquals(Optional.of(DeviceTarget.nic("mlx5_1")), target);
        }

        @Test
        void parseConfigured_malformed_throwsNamingValue() {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> DeviceTarget.parseConfigured(" mlx5_1 "));

            assertTrue(e.getMessage().contains("'mlx5_1'"), e.getMessage());
        }
    }

    @Nested
    class Values {

        @Test
        void toString_eachKind_isTheTextForm() {
            assertAll(
                    () -> assertEquals("cpu:3", DeviceTarget.cpu(3).toString()),
                    () -> assertEquals("gpu:7", DeviceTarget.gpu(7).toString()),
                    () -> assertEquals("nic:mlx5_0", DeviceTarget.nic("mlx5_0").toString()));
        }

        @ParameterizedTest
        @ValueSource(strings = {"cpu:0", "gpu:4294967295", "nic:mlx5_0", "nic:efa_0"})
        void parse_ofToString_roundTrips(String text) {
            assertEquals(text, DeviceTarget.parse(text).toString());
        }

        @Test
        void construct_outOfU32Range_throwsIllegalArgument() {
            assertAll(
                    () -> assertThrows(IllegalArgumentException.class, () -> DeviceTarget.cpu(-1)),
                    () -> assertThrows(IllegalArgumentException.class, () -> DeviceTarget.gpu(1L << 32)),
                    () -> assertThrows(IllegalArgumentException.class, () -> DeviceTarget.nic("")));
        }
    }
}
