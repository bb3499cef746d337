package io.rdma4j.transport.ibverbs;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Which local NIC may talk to which remote NIC. Immutable and thread-safe. Three policies:
 *
 * <ul>
 *   <li>{@link Any} ({@code ""} or {@code any}): every pair is allowed;</li>
 *   <li>{@link MatchName} ({@code match_name}): only NICs with the same name pair;</li>
 *   <li>{@link Groups} ({@code groups:a,b|c,d}): NICs pair only within one group; a NIC in no
 *       group pairs with nothing.</li>
 * </ul>
 *
 * <p>The policy is validated when a manager starts and steers routing: the verbs transport pairs
 * its devices with a token's as {@link #pairs} does, and a token none of whose devices may pair
 * with this manager's goes to the next transport.
 */
public sealed interface PeerAffinity permits PeerAffinity.Any, PeerAffinity.MatchName, PeerAffinity.Groups {

    /** The accepted forms, as quoted in every parse error. */
    String GRAMMAR = "expected '' or any, match_name, or groups:<a,b|c,d>";

    /**
     * Every pair is allowed.
     *
     * @return the {@link Any} policy
     */
    static PeerAffinity any() {
        return Any.INSTANCE;
    }

    /**
     * Only NICs with equal names pair.
     *
     * @return the {@link MatchName} policy
     */
    static PeerAffinity matchName() {
        return MatchName.INSTANCE;
    }

    /**
     * NICs pair only within one group.
     *
     * @param groups the groups of NIC names, in order
     * @return the {@link Groups} policy
     * @throws IllegalArgumentException if there is no group, a group is empty, a name is blank, or a
     *                                  name appears in two groups
     * @throws NullPointerException     if {@code groups}, a group or a name is null
     */
    static PeerAffinity groups(List<? extends Collection<String>> groups) {
        return new Groups(Groups.copy(groups));
    }

    /**
     * Parses a policy. The text is trimmed first; then {@code ""} and {@code any} mean
     * {@link Any}, {@code match_name} means {@link MatchName}, and {@code groups:} is followed by
     * {@code |}-separated groups of {@code ,}-separated names (names are trimmed, empty names
     * dropped). Keywords are case-sensitive. This is the parser of
     * {@link VerbsSettings#PEER_AFFINITY}.
     *
     * @param text the policy
     * @return the policy
     * @throws IllegalArgumentException naming {@code text} for an unknown policy, a group left empty
     *                                  (also {@code groups:} alone), or a name in two groups
     * @throws NullPointerException     if {@code text} is null
     */
    static PeerAffinity parse(String text) {
        String t = Objects.requireNonNull(text, "text").trim();
        if (t.isEmpty() || t.equals("any")) {
            return Any.INSTANCE;
        }
        if (t.equals("match_name")) {
            return MatchName.INSTANCE;
        }
        if (!t.startsWith("groups:")) {
            throw new IllegalArgumentException("unknown peer affinity policy '" + t + "'; " + GRAMMAR);
        }
        String[] rawGroups = t.substring("groups:".length()).split("\\|", -1);
        List<Set<String>> groups = new ArrayList<>(rawGroups.length);
        Map<String, Integer> groupOf = new HashMap<>();
        for (int g = 0; g < rawGroups.length; g++) {
            Set<String> group = new LinkedHashSet<>();
            for (String name : rawGroups[g].split(",", -1)) {
                String n = name.trim();
                if (n.isEmpty()) {
                    continue;
                }
                Integer earlier = groupOf.putIfAbsent(n, g);
                if (earlier != null && earlier != g) {
                    throw new IllegalArgumentException("NIC '" + n + "' appears in peer affinity groups "
                            + (earlier + 1) + " and " + (g + 1) + " of '" + t + "'; a NIC may belong to one group only");
                }
                group.add(n);
            }
            if (group.isEmpty()) {
                throw new IllegalArgumentException("peer affinity group " + (g + 1) + " of '" + t
                        + "' is empty; " + GRAMMAR);
            }
            groups.add(group);
        }
        return new Groups(groups);
    }

    /**
     * Whether the local NIC {@code local} may talk to the remote NIC {@code remote}.
     *
     * @param local  the local NIC's name
     * @param remote the remote NIC's name
     * @return whether the policy allows the pair
     * @throws NullPointerException if either name is null
     */
    boolean canPair(String local, String remote);

    /**
     * Pairs local NICs with remote NICs, using each remote NIC at most once. Both lists are
     * expected in ranking order, so that two processes reach the same answer without talking.
     *
     * <ol>
     *   <li>Every local NIC whose exact name exists on the remote side takes that NIC, whatever
     *       the policy.</li>
     *   <li>The remaining local NICs, in order, take the first remote NIC not yet taken that
     *       they {@link #canPair} with (greedy, not a maximum matching).</li>
     * </ol>
     *
     * @param local  local NIC names
     * @param remote remote NIC names
     * @return for each local index, the index of its remote NIC, or empty when it has none; an
     *         immutable list of {@code local.size()} elements
     * @throws NullPointerException if a list or a name is null
     */
    default List<OptionalInt> pairs(List<String> local, List<String> remote) {
        int[] chosen = new int[local.size()];
        boolean[] taken = new boolean[remote.size()];
        Arrays.fill(chosen, -1);
        for (int i = 0; i < chosen.length; i++) {                       // pass 1: exact names
            String name = Objects.requireNonNull(local.get(i), "local name");
            for (int j = 0; j < taken.length; j++) {
                if (!taken[j] && name.equals(remote.get(j))) {
                    chosen[i] = j;
                    taken[j] = true;
                    break;
                }
            }
        }
        for (int i = 0; i < chosen.length; i++) {                       // pass 2: first reachable
            if (chosen[i] >= 0) {
                continue;
            }
            for (int j = 0; j < taken.length; j++) {
                if (!taken[j] && canPair(local.get(i), Objects.requireNonNull(remote.get(j), "remote name"))) {
                    chosen[i] = j;
                    taken[j] = true;
                    break;
                }
            }
        }
        List<OptionalInt> result = new ArrayList<>(chosen.length);
        for (int c : chosen) {
            result.add(c < 0 ? OptionalInt.empty() : OptionalInt.of(c));
        }
        return Collections.unmodifiableList(result);
    }

    /** Every pair is allowed; text form {@code any}. */
    record Any() implements PeerAffinity {
        static final Any INSTANCE = new Any();

        @Override
        public boolean canPair(String local, String remote) {
            Objects.requireNonNull(local, "local");
            Objects.requireNonNull(remote, "remote");
            return true;
        }

        @Override
        public String toString() {
            return "any";
        }
    }

    /** Only equal names pair; text form {@code match_name}. */
    record MatchName() implements PeerAffinity {
        static final MatchName INSTANCE = new MatchName();

        @Override
        public boolean canPair(String local, String remote) {
            return local.equals(Objects.requireNonNull(remote, "remote"));
        }

        @Override
        public String toString() {
            return "match_name";
        }
    }

    /**
     * NICs pair only within one group; text form {@code groups:a,b|c,d}.
     *
     * @param groups the groups, in order; immutable, each non-empty, disjoint
     */
    record Groups(List<Set<String>> groups) implements PeerAffinity {

        /**
         * Copies and validates the groups.
         *
         * @throws IllegalArgumentException if there is no group, a group is empty, a name is blank, or
         *                                  a name appears in two groups
         * @throws NullPointerException     if {@code groups}, a group or a name is null
         */
        public Groups {
            groups = copy(groups);
        }

        @Override
        public boolean canPair(String local, String remote) {
            Objects.requireNonNull(local, "local");
            Objects.requireNonNull(remote, "remote");
            for (Set<String> group : groups) {
                if (group.contains(local)) {
                    return group.contains(remote);
                }
            }
            return false;
        }

        /** The text form, {@code groups:a,b|c,d}, which {@link PeerAffinity#parse} reads back. */
        @Override
        public String toString() {
            return groups.stream().map(g -> String.join(",", g)).collect(Collectors.joining("|", "groups:", ""));
        }

        private static List<Set<String>> copy(List<? extends Collection<String>> groups) {
            Objects.requireNonNull(groups, "groups");
            if (groups.isEmpty()) {
                throw new IllegalArgumentException("a groups policy needs at least one group");
            }
            List<Set<String>> copy = new ArrayList<>(groups.size());
            Set<String> seen = new HashSet<>();
            for (int g = 0; g < groups.size(); g++) {
                Collection<String> group = Objects.requireNonNull(groups.get(g), "group");
                if (group.isEmpty()) {
                    throw new IllegalArgumentException("peer affinity group " + (g + 1) + " is empty");
                }
                Set<String> names = new LinkedHashSet<>();
                for (String name : group) {
                    if (Objects.requireNonNull(name, "name").isBlank()) {
                        throw new IllegalArgumentException("peer affinity group " + (g + 1) + " holds a blank name");
                    }
                    if (names.add(name) && !seen.add(name)) {
                        throw new IllegalArgumentException(
                                "NIC '" + name + "' appears in two peer affinity groups; a NIC may belong to one group only");
                    }
                }
                copy.add(Collections.unmodifiableSet(names));
            }
            return List.copyOf(copy);
        }
    }
}
