package io.rdma4j.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.TaskInfo;

/**
 * Where a benchmark job's wall time goes, from the scheduler's events (the benchmark's own
 * measurement, not a test): per stage its span, how long the executors sat idle in it, the tasks'
 * scheduler delay and deserialization, and the gaps between stages and jobs.
 */
final class TaskTimeline extends SparkListener {

    private record Task(int stage, String executor, long launch, long finish, long run, long deserialize,
                        long resultSerialize, long gettingResult) {
        long duration() {
            return finish - launch;
        }

        long schedulerDelay() {
            return Math.max(0, duration() - run - deserialize - resultSerialize - gettingResult);
        }
    }

    private final List<Task> tasks = new CopyOnWriteArrayList<>();
    private final Map<Integer, long[]> stages = new ConcurrentHashMap<>();    // submitted, completed
    private final Map<Integer, long[]> jobs = new ConcurrentHashMap<>();      // start, end

    @Override
    public void onJobStart(SparkListenerJobStart start) {
        jobs.put(start.jobId(), new long[] {start.time(), 0});
    }

    @Override
    public void onJobEnd(SparkListenerJobEnd end) {
        long[] j = jobs.get(end.jobId());
        if (j != null) {
            j[1] = end.time();
        }
    }

    @Override
    public void onStageSubmitted(SparkListenerStageSubmitted submitted) {
        var info = submitted.stageInfo();
        stages.put(info.stageId(), new long[] {info.submissionTime().isDefined()
                ? (Long) info.submissionTime().get() : System.currentTimeMillis(), 0});
    }

    @Override
    public void onStageCompleted(SparkListenerStageCompleted done) {
        long[] s = stages.get(done.stageInfo().stageId());
        if (s != null && done.stageInfo().completionTime().isDefined()) {
            s[1] = (Long) done.stageInfo().completionTime().get();
        }
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
        TaskInfo info = end.taskInfo();
        var m = end.taskMetrics();
        if (m == null) {
            return;
        }
        tasks.add(new Task(end.stageId(), info.executorId(), info.launchTime(), info.finishTime(), m.executorRunTime(),
                m.executorDeserializeTime(), m.resultSerializationTime(), info.gettingResultTime() == 0 ? 0
                : info.finishTime() - info.gettingResultTime()));
    }

    /**
     * One line per stage, in submission order: {@code s<id> <tasks>t span <ms> idle <ms> (executor
     * time not in a task, over 2 executors) start <ms from submission to the first launch> end <ms
     * from the last finish to completion> delay <scheduler delay sum> deser <sum>}, and the gaps
     * before each stage (from the previous stage's completion or the first job's start).
     */
    String summary(int executors) {
        List<Map.Entry<Integer, long[]>> ordered = new ArrayList<>(new TreeMap<>(stages).entrySet());
        ordered.sort((a, b) -> Long.compare(a.getValue()[0], b.getValue()[0]));
        long jobStart = jobs.values().stream().mapToLong(j -> j[0]).min().orElse(0);
        long previous = jobStart;
        StringBuilder sb = new StringBuilder("{");
        for (Map.Entry<Integer, long[]> e : ordered) {
            List<Task> mine = tasks.stream().filter(t -> t.stage() == e.getKey()).toList();
            if (mine.isEmpty()) {
                continue;
            }
            long first = mine.stream().mapToLong(Task::launch).min().orElseThrow();
            long last = mine.stream().mapToLong(Task::finish).max().orElseThrow();
            long busy = mine.stream().mapToLong(Task::duration).sum();
            long span = last - first;
            sb.append(sb.length() > 1 ? "; " : "").append("gap ").append(e.getValue()[0] - previous)
                    .append(" s").append(e.getKey()).append(' ').append(mine.size()).append("t span ").append(span)
                    .append(" idle ").append(executors * span - busy)
                    .append(" start ").append(first - e.getValue()[0])
                    .append(" end ").append(e.getValue()[1] - last)
                    .append(" delay ").append(mine.stream().mapToLong(Task::schedulerDelay).sum())
                    .append(" deser ").append(mine.stream().mapToLong(Task::deserialize).sum())
                    .append(" max ").append(mine.stream().mapToLong(Task::duration).max().orElseThrow());
            previous = e.getValue()[1];
        }
        long jobEnd = jobs.values().stream().mapToLong(j -> j[1]).max().orElse(0);
        return sb.append("; tail ").append(jobEnd - previous).append(" jobs ").append(jobs.size()).append('}').toString();
    }
}
