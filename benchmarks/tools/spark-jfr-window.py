#!/usr/bin/env python3
# usage: spark-jfr-window.py START_MS END_MS file.jfr... : per executor JFR file, compilations (above JFR's threshold), deoptimizations, GCs, heap committed after GCs and sampled allocation by top frames, within a stage's window (the epoch ms of TeraSortBenchmark's "BENCH stage" lines); run it under flock -s
import json, subprocess, sys, collections, datetime
JFR='/usr/lib/jvm/temurin-25-jdk-amd64/bin/jfr'
t0, t1 = int(sys.argv[1]), int(sys.argv[2])
def ms(s):
    return datetime.datetime.fromisoformat(s.replace('Z','+00:00')).timestamp()*1000
def dur(s):  # ISO duration PT0.001S
    if not s: return 0
    s=s[2:]; tot=0; num=''
    for c in s:
        if c in 'HMS':
            tot += float(num)*{'H':3600,'M':60,'S':1}[c]; num=''
        else: num+=c
    return tot*1000
for path in sys.argv[3:]:
    out = subprocess.run([JFR,'print','--json','--stack-depth','12','--events','jdk.Compilation,jdk.GarbageCollection,jdk.ObjectAllocationSample,jdk.Deoptimization,jdk.GCPhasePause,jdk.G1HeapRegionTypeChange,jdk.GCHeapSummary',path],capture_output=True,text=True).stdout
    ev = json.loads(out)['recording']['events']
    comp=collections.Counter(); compms=collections.Counter(); gc=[]; alloc=collections.Counter(); deopt=collections.Counter(); heap=[]
    allocthr=collections.Counter()
    for e in ev:
        v=e['values']; st=ms(v['startTime'])
        if not (t0<=st<=t1): continue
        t=e['type']
        if t=='jdk.Compilation':
            m=v['method']; name=m['type']['name']+'.'+m['name']
            pkg='.'.join(m['type']['name'].replace('/','.').split('.')[:3])
            comp[(v.get('compileLevel'),pkg)]+=1; compms[v.get('compileLevel')]+=dur(v['duration'])
        elif t=='jdk.GarbageCollection':
            gc.append((v['name'],v['cause'],round(dur(v['duration'])),round(dur(v['sumOfPauses']))))
        elif t=='jdk.ObjectAllocationSample':
            fr=(v.get('stackTrace') or {}).get('frames',[])
            key=' < '.join(f['method']['type']['name'].split('/')[-1]+'.'+f['method']['name'] for f in fr[:3])
            alloc[(v['objectClass']['name'],key)]+=v['weight']
            th=(v.get('eventThread') or {}).get('javaName','?')
            allocthr[th.split(' ')[0]]+=v['weight']
        elif t=='jdk.Deoptimization':
            deopt[(v.get('reason'),v.get('action'))]+=1
        elif t=='jdk.GCHeapSummary':
            heap.append((v['when'],v['heapUsed']//2**20,(v.get('heapSpace') or {}).get('committedSize',0)//2**20))
    print('==',path)
    print(' compilations by level:',sorted(collections.Counter({k[0]:0 for k in comp}).items()), {lvl:sum(n for (l,p),n in comp.items() if l==lvl) for lvl in set(k[0] for k in comp)}, 'ms by level', {k:round(v) for k,v in compms.items()})
    print(' top compiled packages:',comp.most_common(8))
    print(' deopts:',sum(deopt.values()),deopt.most_common(5))
    print(' GCs:',len(gc),'pauses ms',sum(g[3] for g in gc),'by cause',collections.Counter((g[0],g[1]) for g in gc).most_common(6))
    print(' heap committed MB (after GCs):',[h[2] for h in heap if h[0]=='After GC'][:40])
    tot=sum(alloc.values())
    print(' allocation sampled total MB:',tot//2**20,'by thread',[(k,v//2**20) for k,v in allocthr.most_common(5)])
    for (cls,key),w in alloc.most_common(12):
        print('   %6d MB %s  %s'%(w//2**20,cls,key))
