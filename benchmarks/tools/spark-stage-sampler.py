#!/usr/bin/env python3
"""Where a Spark benchmark's CPU goes, per stage, seen from outside the JVMs (Linux /proc).

  spark-stage-sampler.py record OUT.jsonl [interval_s]   # until killed: samples /proc every interval (0.5 s)
  spark-stage-sampler.py report OUT.jsonl BENCH.log      # per stage window of BENCH.log's "BENCH stage" lines
  spark-stage-sampler.py foreign OUT.jsonl BENCH.log     # per timed job: CPU of processes not the benchmark's

Each sample: the host's /proc/stat CPU line (user, system, iowait, steal...), a few /proc/vmstat
counters (page faults, page allocation, reclaim, writeback), /proc/meminfo's free, cached and dirty
memory, every process's CPU (utime, stime) and minor/major faults, and for each Spark executor JVM
(CoarseGrainedExecutorBackend) every thread's. The report sums, over each stage's window
(TeraSortBenchmark prints "BENCH stage <mode> <id> <name> <submitted ms> <completed ms>"), the
executors' thread CPU by kind (task threads, GC, JIT, rdma4j's, Spark's shuffle network, other),
user and system apart, and the rest of the host (driver, kernel threads, other processes).
"""
import json
import os
import re
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")
VMSTAT = ("pgfault", "pgmajfault", "pgalloc_normal", "pgalloc_dma32", "pgfree", "pgscan_kswapd", "pgscan_direct",
          "pgsteal_kswapd", "pgsteal_direct", "allocstall_normal", "allocstall_movable", "pgpgout", "pgpgin",
          "nr_dirtied", "nr_written", "thp_fault_alloc", "compact_stall", "workingset_refault_file", "pgrefill",
          "nr_dirty", "nr_writeback", "nr_mapped", "nr_file_pages")


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def stat_fields(text):
    """(comm, utime, stime, minflt, majflt) of a /proc/.../stat text."""
    comm = text[text.index("(") + 1:text.rindex(")")]
    f = text[text.rindex(")") + 2:].split()
    return comm, int(f[11]), int(f[12]), int(f[7]), int(f[9])


def sample():
    s = {"t": int(time.time() * 1000)}
    s["cpu"] = [int(x) for x in read("/proc/stat").split("\n")[0].split()[1:]]
    vm = {}
    for line in read("/proc/vmstat").split("\n"):
        p = line.split()
        if len(p) == 2 and p[0] in VMSTAT:
            vm[p[0]] = int(p[1])
    s["vm"] = vm
    mem = {}
    for line in read("/proc/meminfo").split("\n"):
        p = line.split()
        if p and p[0].rstrip(":") in ("MemFree", "Cached", "Dirty", "Writeback", "Mapped", "AnonPages"):
            mem[p[0].rstrip(":")] = int(p[1])
    s["mem"] = mem
    procs = {}
    threads = {}
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        text = read(f"/proc/{pid}/stat")
        if text is None:
            continue
        comm, ut, st, mi, ma = stat_fields(text)
        cmd = read(f"/proc/{pid}/cmdline") or ""
        kind = comm
        if int(pid) == me:
            kind = "sampler"
        elif "CoarseGrainedExecutorBackend" in cmd:
            kind = "executor"
            try:
                for tid in os.listdir(f"/proc/{pid}/task"):
                    t = read(f"/proc/{pid}/task/{tid}/stat")
                    if t:
                        tc, tu, ts, tmi, tma = stat_fields(t)
                        threads[f"{pid}/{tid}"] = [tc, tu, ts, tmi]
            except OSError:
                pass
        elif "ConsoleLauncher" in cmd:
            kind = "driver"
        elif "org.apache.spark.deploy" in cmd:
            kind = "spark-daemon"
        procs[pid] = [kind, ut, st, mi, ma]
    s["procs"] = procs
    s["threads"] = threads
    return s


def record(out, interval):
    with open(out, "a") as f:
        while True:
            t0 = time.time()
            f.write(json.dumps(sample()) + "\n")
            f.flush()
            time.sleep(max(0.05, interval - (time.time() - t0)))


def thread_kind(comm):
    if comm.startswith("Executor task"):
        return "task"
    if comm.startswith("GC Thread") or comm.startswith("G1 ") or comm.startswith("VM Thread"):
        return "gc/vm"
    if "Compiler" in comm or comm.startswith("C1 ") or comm.startswith("C2 "):
        return "jit"
    if comm.startswith("ForkJoinPool") or comm.startswith("rdma") or "registr" in comm.lower():
        return "rdma4j"
    if comm.startswith("shuffle-"):
        return "spark-shuffle-net"
    return "other"


def proc_kind(kind):
    if kind in ("executor", "driver", "sampler", "spark-daemon"):
        return kind
    if re.match(r"(kworker|kswapd|jbd2|ksoftirq|kcompact|khugepaged|rcu|migration|flush|writeback|kthreadd|kblockd)", kind):
        return "kernel:" + re.sub(r"[/:].*|\d+$", "", kind)
    return "other:" + kind


def nearest(samples, t):
    return min(samples, key=lambda s: abs(s["t"] - t))


def report(path, log):
    samples = [json.loads(l) for l in open(path) if l.strip()]
    stages = []
    for line in open(log):
        m = re.search(r"BENCH stage (\S+) (\d+) (\S+) (\d+) (\d+)", line)
        if m:
            stages.append((m.group(1), int(m.group(2)), m.group(3), int(m.group(4)), int(m.group(5))))
    for mode, sid, name, t0, t1 in stages:
        a, b = nearest(samples, t0), nearest(samples, t1)
        secs = (b["t"] - a["t"]) / 1000
        if secs <= 0:
            continue
        cpu = [y - x for x, y in zip(a["cpu"], b["cpu"])]
        tot = sum(cpu) or 1
        out = {"mode": mode, "stage": sid, "name": name[:20], "span_ms": t1 - t0, "window_s": round(secs, 2)}
        names = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"]
        out["host_cpu_ms"] = {n: cpu[i] * 1000 // HZ for i, n in enumerate(names) if i < len(cpu) and cpu[i]}
        out["vm"] = {k: b["vm"].get(k, 0) - a["vm"].get(k, 0) for k in VMSTAT if not k.startswith("nr_") or True}
        out["mem_before"] = a["mem"]
        out["mem_after"] = b["mem"]
        th = {}
        for k, v in b["threads"].items():
            old = a["threads"].get(k)
            du, ds, df = v[1] - (old[1] if old else 0), v[2] - (old[2] if old else 0), v[3] - (old[3] if old else 0)
            if du or ds or df:
                e = th.setdefault(thread_kind(v[0]), [0, 0, 0])
                e[0] += du * 1000 // HZ
                e[1] += ds * 1000 // HZ
                e[2] += df
        out["executor_threads_user_sys_ms_minflt"] = th
        pr = {}
        for k, v in b["procs"].items():
            old = a["procs"].get(k)
            du, ds = v[1] - (old[1] if old else 0), v[2] - (old[2] if old else 0)
            if (du or ds) and v[0] != "executor":
                e = pr.setdefault(proc_kind(v[0]), [0, 0])
                e[0] += du * 1000 // HZ
                e[1] += ds * 1000 // HZ
        out["other_procs_user_sys_ms"] = dict(sorted(pr.items(), key=lambda x: -sum(x[1]))[:10])
        print(json.dumps(out))


def foreign(path, log):
    """Per timed job (its first stage's submission to its last stage's completion): the CPU of every
    process that is not an executor, the driver, a Spark daemon or this sampler and used >= 300 ms
    (a process that ended inside the window counts up to its last sample)."""
    samples = [json.loads(l) for l in open(path) if l.strip()]
    jobs = []
    current = None
    for line in open(log):
        m = re.search(r"BENCH stage (\S+) (\d+) (\S+) (\d+) (\d+)", line)
        if m and int(m.group(5)) - int(m.group(4)) > 2000:
            if "sortByKey" in m.group(3) or current is None or current[0] != m.group(1):
                current = [m.group(1), int(m.group(4)), 0]
                jobs.append(current)
            current[2] = int(m.group(5))
    for mode, t0, t1 in jobs:
        window = [s for s in samples if t0 - 500 <= s["t"] <= t1 + 500]
        first, last = {}, {}
        for s in window:
            for pid, v in s["procs"].items():
                first.setdefault(pid, v)
                last[pid] = v
        other = {}
        for pid, v in last.items():
            if v[0] in ("executor", "driver", "sampler", "spark-daemon"):
                continue
            cpu = (v[1] - first[pid][1] + v[2] - first[pid][2]) * 1000 // HZ
            if cpu >= 300:
                other[v[0]] = other.get(v[0], 0) + cpu
        print(json.dumps({"mode": mode, "job_ms": t1 - t0, "other_processes_cpu_ms": other}))


if __name__ == "__main__":
    if sys.argv[1] == "record":
        record(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 0.5)
    elif sys.argv[1] == "foreign":
        foreign(sys.argv[2], sys.argv[3])
    else:
        report(sys.argv[2], sys.argv[3])
