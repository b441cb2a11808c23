#!/usr/bin/env bash
# The inventory demo in one command: several app instances sell the same stock, with no lock, a JVM-local lock and
# the distributed lock, and the table shows which oversold. Needs only a JDK 17+; Redis is started for the run (the
# redis-server on PATH, else the one shipped in the embedded-redis jar) unless --redis host:port is given.
#   ./demo.sh            full size: stock 500, 2000 attempts, 64 clients, 2 instances
#   ./demo.sh --quick    the reduced size CI runs
#   ./demo.sh --redlock  adds a redlock row: 5 more private redis-servers and as many instances again, locking with
#                        Redlock over them (combines with --quick)
#   ./demo.sh --help     all options
# Exit code 0 only if the distributed lock (and with --redlock, Redlock too) sold exactly min(stock, attempts) and never
# oversold.
set -euo pipefail
cd "$(dirname "$0")"

echo "Building the sample app (the first run downloads Maven and the dependencies)..." >&2
./mvnw -q -B -pl sample-inventory-demo -am package -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true

JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
exec "$JAVA" -jar sample-inventory-demo/target/sample-inventory-demo.jar "$@"
