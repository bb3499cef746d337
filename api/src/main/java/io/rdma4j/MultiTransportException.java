package io.rdma4j;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One operation failed on several transports. The message has a first line such as
 * {@code RDMA submit failed on 2 transport(s):} followed by one line per transport,
 * {@code (tcp) <error>}; {@link #failures()} gives the same as data, each failure is also a
 * suppressed exception so that stack traces show every cause.
 */
public class MultiTransportException extends RdmaException {

    private static final long serialVersionUID = 1L;

    private final transient Map<String, Throwable> failures;

    /**
     * Builds the message from {@code what} and {@code failures}. A single failure becomes the
     * cause and its transport the {@link #transport()}; several are each added as suppressed.
     *
     * @param what     the operation, e.g. {@code "RDMA submit"}
     * @param failures each failing transport's error, keyed by transport name, in priority order;
     *                 copied
     */
    protected MultiTransportException(String what, Map<String, ? extends Throwable> failures) {
        super(failures.size() == 1 ? failures.keySet().iterator().next() : null,
                message(what, failures), failures.size() == 1 ? failures.values().iterator().next() : null);
        this.failures = Collections.unmodifiableMap(new LinkedHashMap<>(failures));
        if (failures.size() > 1) {
            failures.values().forEach(this::addSuppressed);
        }
    }

    /**
     * Each failing transport's error, in priority order.
     *
     * @return an unmodifiable map from transport name to its error
     */
    public Map<String, Throwable> failures() {
        return failures;
    }

    private static String message(String what, Map<String, ? extends Throwable> failures) {
        StringBuilder sb = new StringBuilder(what).append(" failed on ").append(failures.size()).append(" transport(s):");
        failures.forEach((name, t) -> sb.append("\n(").append(name).append(") ").append(describe(t)));
        return sb.toString();
    }

    static String describe(Throwable t) {
        String m = t.getMessage();
        return m == null || m.isBlank() ? t.getClass().getName() : m;
    }
}
