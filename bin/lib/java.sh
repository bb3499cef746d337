# Sourced by the scripts in bin/ and it/: finds a JDK >= 22 and builds what they run.
# Needs $root (the repository's root) set by the caller.

readonly MIN_JAVA=22

# Prints the feature version of a java executable (17, 25; 1 for 1.8), or nothing.
java_version() {
    local v
    v="$("$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p' | head -n 1)" || true
    v="${v%%.*}"
    [[ "$v" =~ ^[0-9]+$ ]] && echo "$v"
}

# Prints the path of a `java` of version >= MIN_JAVA: JAVA_HOME's when it is one, else the newest
# of /usr/lib/jvm/* and `java` on PATH. Prints nothing and fails when there is none.
find_java() {
    local v
    if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
        v="$(java_version "$JAVA_HOME/bin/java")"
        if [[ -n "$v" && "$v" -ge $MIN_JAVA ]]; then
            echo "$JAVA_HOME/bin/java"
            return
        fi
    fi
    local best="" best_v=0 candidate
    local candidates=(/usr/lib/jvm/*/bin/java)
    if command -v java >/dev/null 2>&1; then
        candidates+=("$(command -v java)")
    fi
    for candidate in "${candidates[@]}"; do
        [[ -x "$candidate" ]] || continue
        v="$(java_version "$candidate")"
        if [[ -n "$v" && "$v" -ge $MIN_JAVA && "$v" -gt $best_v ]]; then
            best="$candidate"
            best_v="$v"
        fi
    done
    [[ -n "$best" ]] && echo "$best"
}

# find_java or exit with a message naming what was looked at.
require_java() {
    local java_bin
    java_bin="$(find_java)" || true
    if [[ -z "$java_bin" ]]; then
        echo "$(basename "$0"): no JDK $MIN_JAVA or newer found (looked at JAVA_HOME${JAVA_HOME:+=$JAVA_HOME}, /usr/lib/jvm/*, java on PATH); install one or point JAVA_HOME at it" >&2
        exit 1
    fi
    echo "$java_bin"
}

# Builds benchmarks/target/benchmarks.jar (the library, both transports and the tools in one jar)
# with the Maven Wrapper when it is missing or older than any main source, resource or pom.
# Nothing is installed anywhere: `package` only. Build output goes to stderr.
ensure_benchmarks_jar() {
    local java_bin="$1" jar="$root/benchmarks/target/benchmarks.jar" stale="" newer
    if [[ ! -f "$jar" ]]; then
        stale="benchmarks/target/benchmarks.jar is missing"
    else
        newer="$(find "$root" \( -name target -o -name .git -o -name it \) -prune -o -type f \
            \( -name pom.xml -o -path '*/src/main/*' \) -newer "$jar" -print -quit)"
        [[ -n "$newer" ]] && stale="${newer#"$root"/} changed"
    fi
    [[ -z "$stale" ]] && return 0
    echo "$(basename "$0"): $stale; building (./mvnw -q -DskipTests package) ..." >&2
    # Maven runs on the JDK found too: the toolchains plugin still picks the compiler, and tools
    # that run inside Maven's own JVM can then read class files of release 22.
    (cd "$root" && JAVA_HOME="$(dirname "$(dirname "$(readlink -f "$java_bin")")")" \
        ./mvnw -B -q -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true package) >&2 \
        || { echo "$(basename "$0"): the build failed" >&2; exit 1; }
    [[ -f "$jar" ]] || { echo "$(basename "$0"): the build did not produce $jar" >&2; exit 1; }
}
