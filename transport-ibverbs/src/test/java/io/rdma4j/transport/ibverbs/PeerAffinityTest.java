package io.rdma4j.transport.ibverbs;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.OptionalInt;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The peer affinity grammar and pairing of the reference (behaviour spec §9.2, tests of §12.4). */
class PeerAffinityTest {

    private static final OptionalInt NONE = OptionalInt.empty();

    private static OptionalInt to(int remoteIndex) {
        return OptionalInt.of(remoteIndex);
    }

    @Nested
    class Parse {

        @ParameterizedTest
        @ValueSource(strings = {"", "any", "  any  ", " "})
        void parse_emptyOrAny_returnsAny(String text) {
            assertEquals(PeerAffinity.any(), PeerAffinity.parse(text));
        }

        @Test
        void parse_matchName_returnsMatchName() {
            assertEquals(PeerAffinity.matchName(), PeerAffinity.parse(" match_name "));
        }

        @Test
        void parse_groups_returnsGroupsInOrder() {
            PeerAffinity policy = PeerAffinity.parse("groups:mlx5_0,mlx5_1|mlx5_2");

            assertEquals(new PeerAffinity.Groups(List.of(Set.of("mlx5_0", "mlx5_1"), Set.of("mlx5_2"))), policy);
        }

        @Test
        void parse_groupsWithSpacesAndEmptyNames_trimsAndDropsThem() {
            PeerAffinity policy = PeerAffinity.parse("groups: mlx5_0 , ,mlx5_1,| mlx5_2");

            assertEquals("groups:mlx5_0,mlx5_1|mlx5_2", policy.toString());
        }

        @Test
        void parse_sameNameTwiceInOneGroup_accepted() {
            PeerAffinity policy = PeerAffinity.parse("groups:a,a,b");

            assertEquals("groups:a,b", policy.toString());
        }

        /** The reference's reject list, then keywords in another case. */
        @ParameterizedTest
        @ValueSource(strings = {"mlx5_0", "exact", "groups", "groups:", "groups:mlx5_0|", "groups:|mlx5_0",
                "groups:mlx5_0,mlx5_1|mlx5_1,mlx5_2", "ANY", "Match_Name", "groups: , |a"})
        void parse_rejectsMalformed(String text) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PeerAffinity.parse(text));

            assertTrue(e.getMessage().contains("'" + text.trim() + "'"), e.getMessage());
        }

        @Test
        void parse_nameInTwoGroups_messageNamesTheNameAndGroups() {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> PeerAffinity.parse("groups:mlx5_0,mlx5_1|mlx5_1,mlx5_2"));

            assertTrue(e.getMessage().contains("'mlx5_1' appears in peer affinity groups 1 and 2"), e.getMessage());
        }

        @Test
        void parse_emptyGroup_messageNamesTheGroup() {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> PeerAffinity.parse("groups:mlx5_0|"));

            assertTrue(e.getMessage().contains("group 2"), e.getMessage());
        }

        @ParameterizedTest
        @ValueSource(strings = {"any", "match_name", "groups:a,b|c", "groups:mlx5_0"})
        void parse_ofToString_roundTrips(String text) {
            assertEquals(text, PeerAffinity.parse(text).toString());
        }

        @Test
        void groups_nameInTwoGroups_throwsIllegalArgument() {
            assertThrows(IllegalArgumentException.class,
                    () -> PeerAffinity.groups(List.of(List.of("a", "b"), List.of("b"))));
        }
    }

    @Nested
    class CanPair {

        @Test
        void canPair_any_alwaysTrue() {
            assertTrue(PeerAffinity.any().canPair("mlx5_0", "efa_3"));
        }

        @Test
        void canPair_matchName_onlyEqualNames() {
            PeerAffinity policy = PeerAffinity.matchName();

            assertAll(
                    () -> assertTrue(policy.canPair("mlx5_0", "mlx5_0")),
                    () -> assertFalse(policy.canPair("mlx5_0", "mlx5_1")));
        }

        @Test
        void canPair_groups_onlyWithinOneGroup() {
            PeerAffinity policy = PeerAffinity.parse("groups:a,b|c");

            assertAll(
                    () -> assertTrue(policy.canPair("a", "b")),
                    () -> assertTrue(policy.canPair("b", "a")),
                    () -> assertFalse(policy.canPair("a", "c")),
                    () -> assertFalse(policy.canPair("x", "x")),
                    () -> assertFalse(policy.canPair("a", "x")));
        }
    }

    @Nested
    class Pairs {

        @Test
        void same_names_pair_before_anything_else() {
            // Greedy alone would give a -> b; the exact name b takes it first, a gets what is left.
            List<OptionalInt> pairs = PeerAffinity.any().pairs(List.of("a", "b"), List.of("b", "c"));

            assertEquals(List.of(to(1), to(0)), pairs);
        }

        @Test
        void same_names_pair_even_where_the_policy_forbids_it() {
            List<OptionalInt> pairs = PeerAffinity.parse("groups:x,y").pairs(List.of("a"), List.of("a"));

            assertEquals(List.of(to(0)), pairs);
        }

        @Test
        void match_name_pairs_only_the_same_name() {
            List<OptionalInt> pairs = PeerAffinity.matchName()
                    .pairs(List.of("mlx5_0", "mlx5_1"), List.of("mlx5_1", "mlx5_2"));

            assertEquals(List.of(NONE, to(0)), pairs);
        }

        @Test
        void groups_pair_within_a_group_only() {
            // The groups invert the lists' order; x is in no group and pairs with nothing.
            List<OptionalInt> pairs = PeerAffinity.parse("groups:a,d|b,c")
                    .pairs(List.of("a", "b", "x"), List.of("c", "d", "y"));

            assertEquals(List.of(to(1), to(0), NONE), pairs);
        }

        @Test
        void a_choice_between_peers_takes_the_first_reachable() {
            List<OptionalInt> pairs = PeerAffinity.parse("groups:a,y,z")
                    .pairs(List.of("a"), List.of("x", "y", "z"));

            assertEquals(List.of(to(1)), pairs);
        }

        @Test
        void a_remote_is_taken_at_most_once() {
            List<OptionalInt> pairs = PeerAffinity.any().pairs(List.of("a", "b", "c"), List.of("x", "y"));

            assertEquals(List.of(to(0), to(1), NONE), pairs);
        }

        @Test
        void pairs_over_empty_lists_are_empty() {
            assertAll(
                    () -> assertEquals(List.of(), PeerAffinity.any().pairs(List.of(), List.of())),
                    () -> assertEquals(List.of(), PeerAffinity.any().pairs(List.of(), List.of("a"))),
                    () -> assertEquals(List.of(NONE), PeerAffinity.any().pairs(List.of("a"), List.of())));
        }
    }
}
