package io.rdma4j.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

class ReportTest {

    private static final PerfResult WRITE = new PerfResult("write", 4096, 100, "tcp", 123.4567, 33.25, 30.0, 90.5);
    private static final PerfResult READ = new PerfResult("read", 8, 10, "tcp", 0.5, 16.0, 15.0, 20.0);

    @Test
    void json_isAnArrayWithOneObjectPerResult() {
        String json = Report.toJson(List.of(WRITE, READ));
        assertEquals("""
                [
                  {"op": "write", "size_bytes": 4096, "iters": 100, "transport": "tcp", "bandwidth_mb_s": 123.457, \
                "lat_avg_us": 33.25, "lat_p50_us": 30, "lat_p99_us": 90.5},
                  {"op": "read", "size_bytes": 8, "iters": 10, "transport": "tcp", "bandwidth_mb_s": 0.5, \
                "lat_avg_us": 16, "lat_p50_us": 15, "lat_p99_us": 20}
                ]
                """, json);
    }

    @Test
    void json_empty_isEmptyArray() {
        assertEquals("[]\n", Report.toJson(List.of()));
    }

    @Test
    void json_stringsAreEscaped() {
        assertEquals("\"a\\\"b\\\\c\\n\\t\\u0001\"", Report.jsonString("a\"b\\c\n\t\u0001"));
        String json = Report.toJson(List.of(new PerfResult("read", 8, 1, "we\"ird\\", 1, 1, 1, 1)));
        assertTrue(json.contains("\"transport\": \"we\\\"ird\\\\\""), json);
    }

    @Test
    void json_nonFiniteNumbers_becomeNull() {
        assertEquals("null", Report.jsonNumber(Double.NaN));
        assertEquals("null", Report.jsonNumber(Double.POSITIVE_INFINITY));
        assertEquals("1.5", Report.jsonNumber(1.5));
        assertEquals("0", Report.jsonNumber(0));
        assertEquals("0.0174123", Report.jsonNumber(0.017412345));
        assertEquals("2848.71", Report.jsonNumber(2848.7123));
        assertEquals("123457", Report.jsonNumber(123456.7));
        assertEquals("1500", Report.jsonNumber(1500));
    }

    @Test
    void table_numbers_keepThreeSignificantPlacesOrMore() {
        assertEquals("1387.3", Report.readable(1387.26));
        assertEquals("15.70", Report.readable(15.7));
        assertEquals("0.0029", Report.readable(0.00291));
    }

    @Test
    void table_rowsLineUpWithHeader() {
        String header = Report.tableHeader();
        String row = Report.tableRow(WRITE);
        assertEquals(header.indexOf("transport"), row.indexOf("tcp"), header + "\n" + row);
        assertEquals(header.indexOf("p99 us") + "p99 us".length(), row.indexOf("90.50") + "90.50".length());
        assertEquals(row.stripTrailing(), row);
        assertTrue(header.startsWith("op "), header);
        for (String column : new String[]{"size", "iters", "MB/s", "avg us", "p50 us", "p99 us", "transport"}) {
            assertTrue(header.contains(column), column);
        }
        assertTrue(row.contains("4 KiB") && row.contains("123.5") && row.contains("90.50") && row.contains("tcp"), row);
    }
}
