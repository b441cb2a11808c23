#!/usr/bin/env bash
# Checks the release staged by `./mvnw -B -Prelease -Drevision=X.Y.Z clean verify` (in target/staging-deploy) against
# what Maven Central requires of each published artifact (pom, jar, -sources.jar, -javadoc.jar, their .md5/.sha1,
# .asc when signed, the pom's name/description/url/licenses/developers/scm), and packs target/central-bundle.zip for
# the Central Publisher Portal. Nothing is uploaded. Options: [staging-dir] [bundle-zip] [--require-signatures].
set -euo pipefail
cd "$(dirname "$0")/.."
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
exec "$JAVA" .ci/CheckReleaseBundle.java "$@"
