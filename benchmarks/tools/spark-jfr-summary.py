#!/usr/bin/env python3
"""Sums JFR execution samples of executor JFR files: by thread group, by task kind (map / reduce) and category (inclusive: a sample counts for the first category whose pattern is on its stack, searched top-down)."""
import json, subprocess, sys, collections, re
JFR = '/usr/lib/jvm/temurin-25-jdk-amd64/bin/jfr'
CATS = [  # first match from the top frame down
    ('rdma4j', r'^io\.rdma4j\.(?!spark\.(TeraSortBenchmark|RdmaShuffleWriter|RdmaShuffleReader))'),
    ('size estimation (SizeEstimator/SizeTracker)', r'SizeEstimator|SizeTracker'),
    ('ExternalSorter / collections (insert, spill)', r'ExternalSorter|PartitionedPairBuffer|AppendOnlyMap|Spillable'),
    ('lz4', r'lz4|LZ4'),
    ('kryo', r'esotericsoftware'),
    ('sort (TimSort/comparators)', r'TimSort|Sorter\$|partitionKeyComparator|keyComparator|SortDataFormat'),
    ('disk write (DiskBlockObjectWriter)', r'DiskBlockObjectWriter|ShufflePartitionPairsWriter|LocalDiskShuffleMapOutputWriter'),
    ('benchmark code (generation, hashing)', r'TeraSortBenchmark'),
    ('netty / network', r'io\.netty|network\.'),
    ('shuffle fetch (built-in)', r'ShuffleBlockFetcherIterator|BlockStoreShuffleReader'),
]
def cat(frames):
    for f in frames:
        for name, pat in CATS:
            if re.search(pat, f):
                return name
    return 'other'
def kind(frames):
    s = ' '.join(frames)
    if 'ShuffleMapTask' in s: return 'map task'
    if 'ShuffledRDD' in s: return 'reduce task'
    if 'ResultTask' in s: return 'other result task (sampling)'
    return '-'
tot = collections.Counter(); bykind = collections.Counter(); tops = collections.Counter(); threads = collections.Counter()
for path in sys.argv[1:]:
    out = subprocess.run([JFR, 'print', '--json', '--stack-depth', '200', '--events', 'jdk.ExecutionSample', path], capture_output=True, text=True).stdout
    data = json.loads(out)
    for e in data['recording']['events']:
        v = e['values']
        t = v.get('sampledThread') or {}
        tn = (t.get('javaName') or t.get('osName') or '?')
        tn = re.sub(r'[0-9]+', '#', tn)[:40]
        frames = [f['method']['type']['name'].replace('/', '.') + '.' + f['method']['name'] for f in (v.get('stackTrace') or {}).get('frames', [])]
        threads[tn] += 1
        if tn.startswith('Executor task launch'):
            k = kind(frames); c = cat(frames)
            bykind[(k, c)] += 1; tot[k] += 1
            if frames: tops[(k, frames[0])] += 1
print('samples by thread:', ', '.join(f'{k}={v}' for k, v in threads.most_common(12)))
for k in sorted(tot):
    print(f'{k}: {tot[k]} samples')
    for (kk, c), n in sorted(bykind.items(), key=lambda x: -x[1]):
        if kk == k: print(f'   {c:40s} {n:6d} {100*n/tot[k]:5.1f}%')
    for (kk, f), n in tops.most_common(400):
        if kk == k and n >= tot[k] * 0.015: print(f'      top {f:90s} {n}')
