package io.rdma4j;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.rdma4j.spi.Endpoint;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Says, once per peer at INFO, which transport serves the peer's buffers and why each other one
 * does not; again only when the choice for that peer changes.
 */
final class RouteLog {

    private static final System.Logger LOG = System.getLogger(RdmaManager.class.getName());

    private final List<TransportInfo> discovered;
    /** The transport last logged per peer (bounded: a manager talking to more peers may log one again). */
    private final Cache<Endpoint, String> logged = Caffeine.newBuilder().maximumSize(4096).executor(Runnable::run).build();

    RouteLog(List<TransportInfo> discovered) {
        this.discovered = discovered;
    }

    /**
     * Records that ops on {@code remote} go to {@code chosen}.
     *
     * @param declined why transports that both sides run declined the token, by name
     */
    void chosen(RdmaRemoteBuffer remote, String chosen, Map<String, String> declined) {
        if (Objects.equals(logged.getIfPresent(remote.owner()), chosen) || !LOG.isLoggable(Level.INFO)) {
            return;
        }
        logged.put(remote.owner(), chosen);
        LOG.log(Level.INFO, "peer " + remote.owner() + " is served by " + chosen + why(remote, chosen, declined));
    }

    /** {@code "; not by: a (reason), b (reason)"} for every other transport either side knows, or {@code ""}. */
    String why(RdmaRemoteBuffer remote, String chosen, Map<String, String> declined) {
        List<String> others = new ArrayList<>();
        boolean afterChosen = false;
        Set<String> peerOnly = new TreeSet<>(remote.transports());
        for (TransportInfo t : discovered) {
            peerOnly.remove(t.name());
            if (t.name().equals(chosen)) {
                afterChosen = true;
            } else if (!t.open()) {
                others.add(t.name() + " (" + (t.available() ? "failed to open here: " : "not available here: ") + t.reason() + ")");
            } else if (declined.containsKey(t.name())) {
                others.add(t.name() + " (declined: " + declined.get(t.name()) + ")");
            } else if (!remote.hasTransport(t.name())) {
                others.add(t.name() + " (the peer does not offer it)");
            } else if (afterChosen) {
                others.add(t.name() + " (lower priority than " + chosen + ")");
            } else {
                others.add(t.name() + " (not allowed for this manager or action)");
            }
        }
        peerOnly.forEach(name -> others.add(name + " (the peer offers it; this process does not have it)"));
        return others.isEmpty() ? "" : "; not by: " + String.join(", ", others);
    }
}
