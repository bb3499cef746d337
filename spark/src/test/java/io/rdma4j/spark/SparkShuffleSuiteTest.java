package io.rdma4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.opentest4j.AssertionFailedError;
import org.scalatest.Args;
import org.scalatest.Reporter;
import org.scalatest.events.Event;
import org.scalatest.events.TestCanceled;
import org.scalatest.events.TestFailed;
import org.scalatest.events.TestIgnored;
import org.scalatest.events.TestSucceeded;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Runs every test of Spark's {@code ShuffleSuite} with the rdma4j shuffle ({@link RdmaShuffleSuite})
 * on the JUnit platform, one dynamic test per ScalaTest test: a ScalaTest failure fails it with
 * the suite's own message and exception, a test that does not apply is skipped with its reason.
 */
class SparkShuffleSuiteTest {

    @TestFactory
    Stream<DynamicTest> sparkShuffleSuite() {
        RdmaShuffleSuite suite = new RdmaShuffleSuite();
        List<String> names = new ArrayList<>(CollectionConverters.asJava(suite.testNames()));
        assertTrue(names.size() >= 20, "ShuffleSuite has its tests: " + names);
        return names.stream().map(name -> DynamicTest.dynamicTest(name, () -> run(suite, name)));
    }

    private static void run(RdmaShuffleSuite suite, String name) {
        List<Event> events = new ArrayList<>();
        Reporter reporter = events::add;
        Args args = Args.apply(reporter, Args.apply$default$2(), Args.apply$default$3(), Args.apply$default$4(),
                Args.apply$default$5(), Args.apply$default$6(), Args.apply$default$7(), Args.apply$default$8(),
                Args.apply$default$9(), Args.apply$default$10());
        suite.run(Option.apply(name), args).waitUntilCompleted();
        List<Event> outcomes = events.stream().filter(e -> e instanceof TestSucceeded || e instanceof TestFailed
                || e instanceof TestIgnored || e instanceof TestCanceled).toList();
        assertEquals(1, outcomes.size(), "one outcome for " + name + ": " + events);
        Event outcome = outcomes.get(0);
        if (outcome instanceof TestFailed failed) {
            throw new AssertionFailedError(name + ": " + failed.message(), failed.throwable().isDefined() ? failed.throwable().get() : null);
        }
        if (outcome instanceof TestIgnored) {
            Assumptions.abort(name + ": not applicable to the rdma4j shuffle: " + RdmaShuffleSuite.NOT_APPLICABLE.get(name));
        }
        if (outcome instanceof TestCanceled canceled) {
            Assumptions.abort(name + " canceled by ShuffleSuite: " + canceled.message());
        }
    }
}
