#!/usr/bin/env bash
# The tested compatibility matrix (README.md, "Compatibility"), one cell at a time. `./mvnw -B verify` is the main cell
# (JDK 17, Spring Boot 4.1, every test, the contract also on the embedded Redis 6.2); each cell here compiles the
# auto-configuration module, the modules it builds on (lock-core, lock-redis) and its harness (lock-test-support) from
# clean (-pl ... -am) with one JDK and one Spring Boot line, and runs the starter's
# contract tests (LockServiceContractTests, against the redis-server on PATH and against the embedded Redis 6.2) and
# its auto-configuration tests, and (except on 6.2) the AspectJ mode, woven at compile time by ajc and at load time by
# the agent, with the cell's JDK and Spring Boot line. The JDK 25 and 21 cells build the Javadoc too, so it stays
# doclint-clean on them.
#
#   .ci/matrix.sh            the cells CI runs (a missing JDK skips its cell, saying so)
#   .ci/matrix.sh all        every cell
#   .ci/matrix.sh CELL...    only these cells
#   .ci/matrix.sh --list     the cells
#
# Cells:
#   jdk25           JDK 25, Spring Boot 4.1.x, Redis on PATH (7.x in CI) + 6.2
#   jdk21           JDK 21, Spring Boot 4.1.x, Redis on PATH + 6.2 (only where a JDK 21 is installed)
#   boot-4.0        JDK 17, Spring Boot 4.0.x (profile boot-4.0), Redis on PATH + 6.2
#   boot-4.0-jdk25  JDK 25, Spring Boot 4.0.x, Redis on PATH + 6.2 (on demand: not in CI's time budget)
#   redis-6.2       JDK 17, Spring Boot 4.1.x, only the embedded Redis 6.2 (DISTLOCK_REDIS_BINARY=embedded): the
#                   contract and auto-configuration tests, plus the fault tests (stopped, restarted, paused server)
#                   and the operator and local hand-over integration tests
#   redis-7.2.4     JDK 17, Spring Boot 4.1.x, only Redis 7.2.4 from the shared servers' folder (below): the contract
#                   suite on one server (lock contract with the store queries, fair and read-write locks, a subset of
#                   the fault tests, the Cluster and Sentinel essentials) and the probe of 7.2.4's Lua number defect
#   valkey-8.0.1    the same suite on Valkey 8.0.1 from that folder
#
# The shared servers' folder is ../shared/redis-servers from the repository root (CI clones the repository beside
# it), or DISTLOCK_SHARED_REDIS_SERVERS. Where it is absent (a fresh clone elsewhere), cells redis-7.2.4 and
# valkey-8.0.1 say so and are skipped, and the tests of the full build that need it skip themselves, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."

JDK17="${JDK17_HOME:-${JAVA_HOME:-}}"
JDK25="${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
JDK21="${JDK21_HOME:-}"
if [ -z "$JDK21" ]; then
  for candidate in /usr/lib/jvm/temurin-21-jdk-amd64 /usr/lib/jvm/java-21-openjdk-amd64; do
    if [ -x "$candidate/bin/java" ]; then JDK21="$candidate"; break; fi
  done
fi

# The contract suite on one server (Lettuce, Jedis, the embedded 6.2), on Cluster and behind Sentinel (Lettuce), and the
# auto-configuration tests: named one by one, as '*LockServiceIntegrationTests' now also matches the suite's variants
# (Jedis on Cluster and Sentinel, the 6.2 cluster, the template path, the own pub/sub connection), which the full build
# runs on JDK 17 and which would double each cell's time.
CONTRACT_TESTS='RedisProcessLockServiceIntegrationTests,EmbeddedRedisLockServiceIntegrationTests,JedisLockServiceIntegrationTests,ClusterLockServiceIntegrationTests,SentinelLockServiceIntegrationTests,ContainerRedisLockServiceIntegrationTests,DistributedLockAutoConfigurationTests,ObservabilityAutoConfigurationTests'
# The AspectJ mode's modules and tests: ajc and the weaving agent are the parts that depend most on the JDK. With -am,
# lock-core, lock-redis and lock-test-support are built too (lock-aspectj needs lock-core, its tests the starter's).
ASPECTJ_MODULES='lock-spring-boot-autoconfigure,lock-aspectj,lock-aspectj-ltw-tests'
ASPECTJ_TESTS='AspectJModeIntegrationTests,LoadTimeWeavingIntegrationTests'
# On 6.2 only the embedded contract class runs (the process one would run the same binary again).
REDIS62_TESTS='EmbeddedRedisLockServiceIntegrationTests,DistributedLockAutoConfigurationTests,ObservabilityAutoConfigurationTests,LockFaultIntegrationTests,OperatorSupportIntegrationTests,LocalHandOverIntegrationTests'
# The contract suite on one Redis-compatible server that the full build does not run it on, as the only Redis
# (DISTLOCK_REDIS_SERVER): the lock contract on one server (with holder and isLocked, the store queries), the fair and
# read-write lock integration tests, the fault tests that stop, pause and cut off the server and lose replies (the
# fault matrix over every operation and lock kind included), and on Cluster and behind Sentinel the essentials of the
# contract (sharded pub/sub on each master, a waiter woken by the release, tokens, the store queries), not the whole
# contract again: each takes 30-45 s there, which would double the cell.
SHARED_SERVER_TESTS='RedisProcessLockServiceIntegrationTests,FairLockIntegrationTests,ReadWriteLockIntegrationTests,LockFaultIntegrationTests,AmbiguousFailureIntegrationTests,LeaseFaultMatrixIntegrationTests,ClusterLockServiceIntegrationTests#lockKeysSpreadOverEveryMaster+waitersSubscribeOnTheirKeysShardAndGetTheLock+aBlockedWaiterAcquiresWithin50msOfTheRelease,SentinelLockServiceIntegrationTests#aBlockedWaiterAcquiresWithin50msOfTheRelease+fencingTokensGrowStrictlyBetweenSuccessiveHolders+isLockedAndHolderAskTheStoreWhateverProcessHoldsTheKey'
SHARED_SERVERS="${DISTLOCK_SHARED_REDIS_SERVERS:-../shared/redis-servers}"
ALL_CELLS="jdk25 jdk21 boot-4.0 boot-4.0-jdk25 redis-6.2 redis-7.2.4 valkey-8.0.1"
# The cells on JDK 17 without a profile first: right after the full build (DISTLOCK_MATRIX_AFTER_FULL_BUILD=1, as
# .ci/run sets it) they find the module compiled as they would compile it, and skip the clean.
CI_CELLS="redis-6.2 redis-7.2.4 valkey-8.0.1 jdk25 jdk21 boot-4.0"
# Javadoc is checked on JDK 17 by the full build and on JDK 25 by cell jdk25; the other cells skip it.
NO_JAVADOC="-Dmaven.javadoc.skip=true"

if [ "${1:-}" = "--list" ]; then
  echo "$ALL_CELLS" | tr ' ' '\n'
  exit 0
fi
cells="${*:-$CI_CELLS}"
if [ "$cells" = "all" ]; then cells="$ALL_CELLS"; fi

# What the last cell compiled (JDK, profiles, modules): a cell that would compile the same skips the clean.
built=""
if [ "${DISTLOCK_MATRIX_AFTER_FULL_BUILD:-}" = "1" ]; then
  # ./mvnw -B verify of every module on JDK 17 has just compiled lock-spring-boot-autoconfigure, what it builds on and
  # its harness
  built="$JDK17||lock-spring-boot-autoconfigure"
fi

# run_cell NAME JDK_HOME PROFILES MODULES TESTS MAVEN_ARGS [ENV=VALUE...]
run_cell() {
  local name="$1" jdk="$2" profiles="$3" modules="$4" tests="$5" maven_args="$6"
  shift 6
  if [ -n "$jdk" ] && [ ! -x "$jdk/bin/java" ]; then
    echo "== matrix cell $name: skipped, no JDK at $jdk"
    return 0
  fi
  local java="${jdk:+$jdk/bin/}java"
  echo "== matrix cell $name: $("$java" -version 2>&1 | head -n 1), profiles ${profiles:-none}, $*"
  local start=$SECONDS
  # Compiled from clean, unless the cell before compiled the same modules with the same JDK and profiles.
  local clean="clean" build="$jdk|$profiles|$modules"
  if [ "$build" = "$built" ]; then clean=""; fi
  built=""
  # The profile that reruns the virtual-thread tests on JDK 25 is off: with -Dtest it would rerun the cell's tests.
  env ${jdk:+JAVA_HOME="$jdk"} "$@" ./mvnw -B -pl "$modules" -am $clean verify \
    -P "!virtual-threads-on-jdk25${profiles:+,$profiles}" \
    -Dtest="$tests" -Dsurefire.failIfNoSpecifiedTests=false $maven_args
  built="$build"
  echo "== matrix cell $name: passed in $((SECONDS - start))s"
}

# shared_server_cell NAME SUB_FOLDER EXECUTABLE VERSION EXTRA_TESTS: the contract suite on one of the shared servers,
# found by path (Valkey's folder holds a redis-server "link" that is a plain file, not an executable, so PATH would
# not find it), or a skip that says why.
shared_server_cell() {
  local name="$1" binary="$SHARED_SERVERS/$2/$3" version="$4" extra_tests="$5"
  if [ ! -d "$SHARED_SERVERS" ]; then
    echo "== matrix cell $name: skipped, the shared servers' folder $SHARED_SERVERS is absent (a fresh clone:" \
      "the folder sits beside the repository on the project's machines and in CI; set DISTLOCK_SHARED_REDIS_SERVERS)"
    return 0
  fi
  if [ ! -x "$binary" ]; then
    echo "== matrix cell $name: skipped, no executable $binary in the shared servers' folder"
    return 0
  fi
  binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"
  local reported
  reported="$("$binary" --version)"
  case "$reported" in
    *"v=$version "*) ;;
    *) echo "== matrix cell $name: $binary is not version $version: $reported" >&2; return 1 ;;
  esac
  echo "== matrix cell $name: $reported"
  # Two test JVMs, as in every cell and the full build (the module's distlock.test.forks): the suite mostly waits (for
  # renewals, ttls, timeouts, failovers), each class on servers of its own on free ports. BlockHound's JVM has
  # nothing to do with the server.
  run_cell "$name" "$JDK17" "" lock-spring-boot-autoconfigure "$SHARED_SERVER_TESTS$extra_tests" \
    "$NO_JAVADOC -Ddistlock.blockhound.skip=true" DISTLOCK_REDIS_SERVER="$binary" \
    DISTLOCK_SHARED_REDIS_SERVERS="$(cd "$SHARED_SERVERS" && pwd)"
}

for cell in $cells; do
  case "$cell" in
    jdk25) run_cell jdk25 "$JDK25" "" "$ASPECTJ_MODULES" "$CONTRACT_TESTS,$ASPECTJ_TESTS" "" ;;
    jdk21)
      if [ -z "$JDK21" ]; then
        echo "== matrix cell jdk21: skipped, no JDK 21 installed (set JDK21_HOME)"
      else
        run_cell jdk21 "$JDK21" "" "$ASPECTJ_MODULES" "$CONTRACT_TESTS,$ASPECTJ_TESTS" ""
      fi
      ;;
    boot-4.0) run_cell boot-4.0 "$JDK17" boot-4.0 "$ASPECTJ_MODULES" "$CONTRACT_TESTS,$ASPECTJ_TESTS" "$NO_JAVADOC" ;;
    boot-4.0-jdk25)
      run_cell boot-4.0-jdk25 "$JDK25" boot-4.0 "$ASPECTJ_MODULES" "$CONTRACT_TESTS,$ASPECTJ_TESTS" "" ;;
    redis-6.2)
      run_cell redis-6.2 "$JDK17" "" lock-spring-boot-autoconfigure "$REDIS62_TESTS" "$NO_JAVADOC" \
        DISTLOCK_REDIS_BINARY=embedded ;;
    redis-7.2.4) shared_server_cell redis-7.2.4 redis-7.2.4 redis-server 7.2.4 ',ScientificNotationIntegrationTests' ;;
    valkey-8.0.1) shared_server_cell valkey-8.0.1 valkey-8.0.1 valkey-server 8.0.1 '' ;;
    *) echo "unknown matrix cell '$cell' (cells: $ALL_CELLS)" >&2; exit 2 ;;
  esac
done
