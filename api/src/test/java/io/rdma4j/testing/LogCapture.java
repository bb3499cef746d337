package io.rdma4j.testing;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The records the manager logs (logger {@code io.rdma4j.RdmaManager}, through System.Logger's
 * default java.util.logging back end) during one test: register as
 * {@code @RegisterExtension final LogCapture logs = new LogCapture();}.
 */
public final class LogCapture implements BeforeEachCallback, AfterEachCallback {

    private final Logger logger = Logger.getLogger("io.rdma4j.RdmaManager");
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    private Level previous;

    @Override
    public void beforeEach(ExtensionContext context) {
        previous = logger.getLevel();
        logger.setLevel(Level.ALL);
        handler.setLevel(Level.ALL);
        logger.addHandler(handler);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        logger.removeHandler(handler);
        logger.setLevel(previous);
    }

    /** The messages logged at {@code level} so far, in order. */
    public List<String> messages(Level level) {
        return records.stream().filter(r -> r.getLevel().equals(level)).map(LogRecord::getMessage).toList();
    }
}
