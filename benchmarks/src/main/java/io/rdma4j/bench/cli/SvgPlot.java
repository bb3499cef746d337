package io.rdma4j.bench.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;

/**
 * Draws results as an SVG image: bandwidth (MB/s) and p50 latency (us) against message size,
 * side by side, both axes logarithmic, one line per transport and op. Written by hand: the
 * format needs nothing more. Pure function, thread-safe.
 */
final class SvgPlot {

    private static final String[] COLOURS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
            "#e377c2", "#17becf"};
    private static final int PANEL_W = 460;
    private static final int PANEL_H = 330;
    private static final int LEFT = 70;
    private static final int TOP = 50;
    private static final int GAP = 40;

    private SvgPlot() {
    }

    /**
     * The image.
     *
     * @param title   first line of the image, e.g. the transport and library version
     * @param results rows of any ops, sizes and transports; rows whose value is not positive are left out of a panel
     */
    static String render(String title, List<PerfResult> results) {
        Map<String, List<PerfResult>> series = new TreeMap<>();
        for (PerfResult r : results) {
            series.computeIfAbsent(r.series(), k -> new ArrayList<>()).add(r);
        }
        series.values().forEach(l -> l.sort((a, b) -> Long.compare(a.sizeBytes(), b.sizeBytes())));
        TreeSet<Long> sizes = new TreeSet<>();
        results.forEach(r -> sizes.add(r.sizeBytes()));

        int width = LEFT + PANEL_W + GAP + LEFT + PANEL_W + 40;
        int legendTop = TOP + PANEL_H + 50;
        int height = legendTop + 20 * ((series.size() + 3) / 4) + 10;
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">%n", width, height, width, height));
        sb.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", width, height));
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"22\" font-size=\"15\">%s</text>%n", LEFT, escape(title)));
        panel(sb, LEFT, "bandwidth (MB/s)", series, sizes, PerfResult::bandwidthMBps);
        panel(sb, LEFT + PANEL_W + GAP + LEFT, "p50 latency (us)", series, sizes, PerfResult::latP50Us);
        int i = 0;
        for (String name : series.keySet()) {
            int x = LEFT + (i % 4) * 230;
            int y = legendTop + (i / 4) * 20;
            sb.append(String.format(Locale.ROOT, "<g class=\"legend\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
                    + "stroke=\"%s\" stroke-width=\"2\"/><text x=\"%d\" y=\"%d\">%s</text></g>%n",
                    x, y - 4, x + 24, y - 4, colour(i), x + 30, y, escape(name)));
            i++;
        }
        return sb.append("</svg>\n").toString();
    }

    private static void panel(StringBuilder sb, int left, String label, Map<String, List<PerfResult>> series,
                              TreeSet<Long> sizes, ToDoubleFunction<PerfResult> value) {
        double minY = Double.MAX_VALUE;
        double maxY = -Double.MAX_VALUE;
        for (List<PerfResult> rows : series.values()) {
            for (PerfResult r : rows) {
                double v = value.applyAsDouble(r);
                if (v > 0) {
                    minY = Math.min(minY, v);
                    maxY = Math.max(maxY, v);
                }
            }
        }
        if (minY > maxY) { // nothing positive to draw
            minY = 1;
            maxY = 10;
        }
        int loDecade = (int) Math.floor(Math.log10(minY));
        int hiDecade = Math.max(loDecade + 1, (int) Math.ceil(Math.log10(maxY)));
        double loX = Math.log(sizes.isEmpty() ? 1 : sizes.first()) / Math.log(2);
        double hiX = Math.log(sizes.isEmpty() ? 2 : sizes.last()) / Math.log(2);
        if (hiX - loX < 1) {
            loX -= 0.5;
            hiX += 0.5;
        }
        double lx = loX;
        double spanX = hiX - loX;
        Axis x = v -> left + (Math.log(v) / Math.log(2) - lx) / spanX * PANEL_W;
        Axis y = v -> TOP + PANEL_H - (Math.log10(v) - loDecade) / (hiDecade - loDecade) * PANEL_H;

        sb.append(String.format(Locale.ROOT, "<g class=\"panel\" data-label=\"%s\">%n", escape(label)));
        sb.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                + "stroke=\"#888\"/>%n", left, TOP, PANEL_W, PANEL_H));
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>%n", left, TOP - 10,
                escape(label)));
        for (int d = loDecade; d <= hiDecade; d++) {
            double py = y.at(Math.pow(10, d));
            sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n",
                    left, py, left + PANEL_W, py, left - 6, py + 4, decade(d)));
        }
        for (long s : sizes) {
            double px = x.at(s);
            sb.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>"
                    + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                    px, TOP, px, TOP + PANEL_H, px, TOP + PANEL_H + 16, escape(Sizes.format(s).replace(" ", ""))));
        }
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">message size</text>%n",
                left + PANEL_W / 2, TOP + PANEL_H + 34));
        int i = 0;
        for (Map.Entry<String, List<PerfResult>> e : series.entrySet()) {
            StringBuilder points = new StringBuilder();
            StringBuilder dots = new StringBuilder();
            for (PerfResult r : e.getValue()) {
                double v = value.applyAsDouble(r);
                if (v > 0) {
                    String p = String.format(Locale.ROOT, "%.1f,%.1f", x.at(r.sizeBytes()), y.at(v));
                    points.append(points.isEmpty() ? "" : " ").append(p);
                    String[] xy = p.split(",");
                    dots.append(String.format(Locale.ROOT, "<circle cx=\"%s\" cy=\"%s\" r=\"3\" fill=\"%s\"/>",
                            xy[0], xy[1], colour(i)));
                }
            }
            sb.append(String.format(Locale.ROOT, "<g class=\"series\" data-series=\"%s\"><polyline fill=\"none\" "
                    + "stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>%s</g>%n", escape(e.getKey()), colour(i), points, dots));
            i++;
        }
        sb.append("</g>\n");
    }

    private interface Axis {
        double at(double value);
    }

    private static String colour(int i) {
        return COLOURS[i % COLOURS.length];
    }

    /** 10^d as a short label: 0.01, 1, 100, 10k, 1M. */
    static String decade(int d) {
        if (d < 0) {
            return java.math.BigDecimal.ONE.scaleByPowerOfTen(d).toPlainString();
        }
        if (d >= 6) {
            return "1" + "0".repeat(d - 6) + "M";
        }
        if (d >= 3) {
            return "1" + "0".repeat(d - 3) + "k";
        }
        return "1" + "0".repeat(d);
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
