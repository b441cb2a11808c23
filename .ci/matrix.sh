#!/usr/bin/env bash
# The tested compatibility matrix (README.md, "Compatibility"), one cell at a time. `./mvnw -B verify` is the main cell
# (JDK 17, Spring Boot 4.1, every test, the contract also on the embedded Redis 6.2); each cell here compiles the
# auto-configuration module and its harness from clean with one JDK and one Spring Boot line, and runs the starter's
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
# The AspectJ mode's modules and tests: ajc and the weaving agent are the parts that depend most on the JDK.
ASPECTJ_MODULES='lock-spring-boot-autoconfigure,lock-aspectj,lock-aspectj-ltw-tests'
ASPECTJ_TESTS='AspectJModeIntegrationTests,LoadTimeWeavingIntegrationTests'
# On 6.2 only the embedded contract class runs (the process one would run the same binary again).
REDIS62_TESTS='EmbeddedRedisLockServiceIntegrationTests,DistributedLockAutoConfigurationTests,ObservabilityAutoConfigurationTests,LockFaultIntegrationTests,OperatorSupportIntegrationTests,LocalHandOverIntegrationTests'
ALL_CELLS="jdk25 jdk21 boot-4.0 boot-4.0-jdk25 redis-6.2"
CI_CELLS="jdk25 jdk21 boot-4.0 redis-6.2"
# Javadoc is checked on JDK 17 by the full build and on JDK 25 by cell jdk25; the other cells skip it.
NO_JAVADOC="-Dmaven.javadoc.skip=true"

if [ "${1:-}" = "--list" ]; then
  echo "$ALL_CELLS" | tr ' ' '\n'
  exit 0
fi
cells="${*:-$CI_CELLS}"
if [ "$cells" = "all" ]; then cells="$ALL_CELLS"; fi

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
  # The profile that reruns the virtual-thread tests on JDK 25 is off: with -Dtest it would rerun the cell's tests.
  env ${jdk:+JAVA_HOME="$jdk"} "$@" ./mvnw -B -pl "$modules" -am clean verify \
    -P "!virtual-threads-on-jdk25${profiles:+,$profiles}" \
    -Dtest="$tests" -Dsurefire.failIfNoSpecifiedTests=false $maven_args
  echo "== matrix cell $name: passed in $((SECONDS - start))s"
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
    *) echo "unknown matrix cell '$cell' (cells: $ALL_CELLS)" >&2; exit 2 ;;
  esac
done
