package io.rdma4j.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

class SizesTest {

    @Test
    void parseSize_plainNumber_isBytes() {
        assertEquals(8, Sizes.parse("8"));
        assertEquals(512, Sizes.parse("512B"));
    }

    @Test
    void parseSize_kibibytes_returnsBytes() {
        assertEquals(4096, Sizes.parse("4KiB"));
    }

    @Test
    void parseSize_mebibytes_returnsBytes() {
        assertEquals(64L << 20, Sizes.parse("64MiB"));
    }

    @Test
    void parseSize_gibibytes_returnsBytes() {
        assertEquals(1L << 30, Sizes.parse("1GiB"));
    }

    @Test
    void parseSize_unitsAnyCaseAndSpaces_accepted() {
        assertEquals(32L << 10, Sizes.parse("32kib"));
        assertEquals(8L << 20, Sizes.parse(" 8 MIB "));
        assertEquals(16, Sizes.parse("16b"));
    }

    @Test
    void parseSize_decimalUnit_rejectedAsAmbiguous() {
        var e = assertThrows(IllegalArgumentException.class, () -> Sizes.parse("1KB"));
        assertTrue(e.getMessage().contains("1KB"), e.getMessage());
        assertTrue(e.getMessage().contains("KiB"), e.getMessage());
    }

    @Test
    void parseSize_garbage_rejectedNamingIt() {
        for (String bad : new String[]{"", "KiB", "-8", "8x", "1.5MiB", "0", "2GiB", "99999999999999999999"}) {
            var e = assertThrows(IllegalArgumentException.class, () -> Sizes.parse(bad), bad);
            assertTrue(e.getMessage().contains("'" + bad + "'"), e.getMessage());
        }
    }

    @Test
    void parseList_keepsOrderAndDropsDuplicates() {
        assertEquals(List.of(4096L, 8L), Sizes.parseList("4KiB,8,4096"));
    }

    @Test
    void parseList_emptyElement_rejected() {
        assertThrows(IllegalArgumentException.class, () -> Sizes.parseList("8,,64"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parseList(""));
    }

    @Test
    void format_usesLargestUnitThatDivides() {
        assertEquals("8 B", Sizes.format(8));
        assertEquals("4 KiB", Sizes.format(4096));
        assertEquals("1536 KiB", Sizes.format(1536 << 10));
        assertEquals("64 MiB", Sizes.format(64 << 20));
        assertEquals("1 GiB", Sizes.format(1L << 30));
        assertEquals("1000 B", Sizes.format(1000));
    }
}
