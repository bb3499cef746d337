package io.rdma4j.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class ReportTest {

    static final PerfResult WRITE = new PerfResult("write", 4096, 100, "tcp", 123.4567, 33.25, 30.0, 90.5, 30140.3,
            120.25, 7.5, 130, 1, 1, 2.0);
    static final PerfResult READ = new PerfResult("read", 8, 10, "tcp", 0.5, 16.0, 15.0, 20.0, 62500, 21, 1.25, 22, 4, 2,
            0.5);

    private static RunHeader header() {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("rdma4j", "1.2.3");
        f.put("cpus", 2);
        f.put("peer", Map.of("os", "Linux"));
        f.put("not_running", Map.of());
        f.put("settings", List.of(RunHeader.ordered("key", "rdma.x", "value", "1", "source", "default")));
        return new RunHeader(f);
    }

    @Test
    void json_isAnObject_withTheHeaderAndOneRowPerResult_rowsKeepTheirFieldsAndOrder() {
        String json = Report.toJson(header(), List.of(WRITE, READ));
        assertEquals("""
                {
                  "header": {
                    "rdma4j": "1.2.3",
                    "cpus": 2,
                    "peer": {
                      "os": "Linux"
                    },
                    "not_running": {},
                    "settings": [{"key": "rdma.x", "value": "1", "source": "default"}]
                  },
                  "results": [
                    {"op": "write", "size_bytes": 4096, "iters": 100, "transport": "tcp", "bandwidth_mb_s": 123.457, \
                "lat_avg_us": 33.25, "lat_p50_us": 30, "lat_p99_us": 90.5, "msg_rate_per_s": 30140.3, \
                "lat_p999_us": 120.25, "lat_stddev_us": 7.5, "lat_max_us": 130, "batch": 1, "inflight": 1, "elapsed_s": 2},
                    {"op": "read", "size_bytes": 8, "iters": 10, "transport": "tcp", "bandwidth_mb_s": 0.5, \
                "lat_avg_us": 16, "lat_p50_us": 15, "lat_p99_us": 20, "msg_rate_per_s": 62500, \
                "lat_p999_us": 21, "lat_stddev_us": 1.25, "lat_max_us": 22, "batch": 4, "inflight": 2, "elapsed_s": 0.5}
                  ]
                }
                """, json);
    }

    @Test
    void json_noResults_isAnEmptyArray() {
        String json = Report.toJson(new RunHeader(Map.of()), List.of());
        assertEquals("{\n  \"header\": {},\n  \"results\": []\n}\n", json);
    }

    @Test
    void json_stringsAreEscaped() {
        assertEquals("\"a\\\"b\\\\c\\n\\t\\u0001\"", Report.jsonString("a\"b\\c\n\t\u0001"));
        PerfResult weird = new PerfResult("read", 8, 1, "we\"ird\\", 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
        String json = Report.toJson(new RunHeader(Map.of("mode", "a\"b")), List.of(weird));
        assertTrue(json.contains("\"transport\": \"we\\\"ird\\\\\""), json);
        assertTrue(json.contains("\"mode\": \"a\\\"b\""), json);
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
    void table_rowsLineUpWithHeader_andShowEveryColumn() {
        String header = Report.tableHeader();
        String row = Report.tableRow(WRITE);
        assertEquals(header.indexOf("transport"), row.indexOf("tcp"), header + "\n" + row);
        assertEquals(header.indexOf("p99 us") + "p99 us".length(), row.indexOf("90.50") + "90.50".length());
        assertEquals(header.indexOf("p99.9 us") + "p99.9 us".length(), row.indexOf("120.3") + "120.3".length(),
                header + "\n" + row);
        assertEquals(row.stripTrailing(), row);
        assertTrue(header.startsWith("op "), header);
        for (String column : new String[]{"size", "iters", "MB/s", "Mmsg/s", "avg us", "p50 us", "p99 us", "p99.9 us",
                "stddev us", "transport"}) {
            assertTrue(header.contains(column), column);
        }
        assertTrue(row.contains("4 KiB") && row.contains("123.5") && row.contains("0.0301") && row.contains("7.50"), row);
    }
}
