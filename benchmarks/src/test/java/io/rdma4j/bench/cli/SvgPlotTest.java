package io.rdma4j.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

class SvgPlotTest {

    private static PerfResult row(String transport, String op, long size, double mbps, double p50) {
        return new PerfResult(op, size, 10, transport, mbps, p50, p50, p50, 1, p50, 0, p50, 1, 1, 1);
    }

    private static Document parse(String svg) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
    }

    private static List<Element> byClass(Element root, String tag, String cls) {
        List<Element> found = new ArrayList<>();
        NodeList nodes = root.getElementsByTagName(tag);
        for (int i = 0; i < nodes.getLength(); i++) {
            Element e = (Element) nodes.item(i);
            if (cls.equals(e.getAttribute("class"))) {
                found.add(e);
            }
        }
        return found;
    }

    @Test
    void plot_isWellFormedSvg_withABandwidthAndALatencyPanel_eachWithOneLinePerTransportAndOp() throws Exception {
        List<PerfResult> rows = List.of(
                row("tcp", "write", 8, 0.5, 30), row("tcp", "write", 4096, 200, 35), row("tcp", "write", 1 << 20, 2000, 500),
                row("tcp", "read", 8, 0.4, 31), row("tcp", "read", 4096, 180, 36), row("tcp", "read", 1 << 20, 1900, 520),
                row("ibverbs", "read", 8, 2, 3), row("ibverbs", "read", 4096, 900, 5), row("ibverbs", "read", 1 << 20, 11000, 90));

        Document doc = parse(SvgPlot.render("rdma-perf: tcp <loopback> & more", rows));
        Element svg = doc.getDocumentElement();

        assertEquals("svg", svg.getTagName());
        List<Element> panels = byClass(svg, "g", "panel");
        assertEquals(List.of("bandwidth (MB/s)", "p50 latency (us)"), panels.stream().map(p -> p.getAttribute("data-label")).toList());
        for (Element panel : panels) {
            List<Element> series = byClass(panel, "g", "series");
            assertEquals(List.of("ibverbs read", "tcp read", "tcp write"), series.stream().map(s -> s.getAttribute("data-series")).toList());
            for (Element s : series) {
                Element line = (Element) s.getElementsByTagName("polyline").item(0);
                assertEquals(3, line.getAttribute("points").split(" ").length, s.getAttribute("data-series"));
                assertEquals(3, s.getElementsByTagName("circle").getLength());
            }
        }
        assertEquals(3, byClass(svg, "g", "legend").size());
        assertTrue(svg.getTextContent().contains("rdma-perf: tcp <loopback> & more"));
        assertTrue(svg.getTextContent().contains("4KiB") && svg.getTextContent().contains("1MiB"), "size ticks");
    }

    @Test
    void biggerValues_plotHigher_andBiggerSizes_further_right() throws Exception {
        Document doc = parse(SvgPlot.render("t", List.of(row("tcp", "write", 8, 1, 10), row("tcp", "write", 4096, 1000, 100))));
        Element bandwidth = byClass(doc.getDocumentElement(), "g", "panel").get(0);
        String[] points = ((Element) bandwidth.getElementsByTagName("polyline").item(0)).getAttribute("points").split(" ");
        double x0 = Double.parseDouble(points[0].split(",")[0]);
        double y0 = Double.parseDouble(points[0].split(",")[1]);
        double x1 = Double.parseDouble(points[1].split(",")[0]);
        double y1 = Double.parseDouble(points[1].split(",")[1]);
        assertTrue(x1 > x0, "x grows with size");
        assertTrue(y1 < y0, "SVG y grows downwards: more bandwidth is higher up");
    }

    @Test
    void nonPositiveValues_areLeftOut_ofTheirPanelOnly() throws Exception {
        Document doc = parse(SvgPlot.render("t", List.of(row("tcp", "read", 8, 0, 10), row("tcp", "read", 64, 5, 12))));
        List<Element> panels = byClass(doc.getDocumentElement(), "g", "panel");
        assertEquals(1, ((Element) panels.get(0).getElementsByTagName("polyline").item(0)).getAttribute("points").split(" ").length);
        assertEquals(2, ((Element) panels.get(1).getElementsByTagName("polyline").item(0)).getAttribute("points").split(" ").length);
    }

    @Test
    void decadeLabels_areShort() {
        assertEquals("0.01", SvgPlot.decade(-2));
        assertEquals("1", SvgPlot.decade(0));
        assertEquals("100", SvgPlot.decade(2));
        assertEquals("10k", SvgPlot.decade(4));
        assertEquals("1M", SvgPlot.decade(6));
    }
}
