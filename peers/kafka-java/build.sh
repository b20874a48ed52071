#!/usr/bin/env bash
# Build stickyproof's Kafka Java harness against Kafka's own client assignors, offline.
#
#   peers/kafka-java/build.sh KAFKA_SOURCE_TREE_OR_KAFKA_CLIENTS_JAR
#
# For unreleased code: stickyproof reaches what this builds as kafka-java:NAME@local. Released
# versions need no script: kafka-java:NAME@VERSION is built by Maven from pom.xml on first use.
#
# Output: ${STICKYPROOF_PEERS_DIR:-<repo>/.peers}/kafka-java/ with the compiled harness and
# manifest.json (peers/README.md). Java and every jar come from Debian (apt-get, run when something
# is missing and we are root). From a kafka-clients jar the harness is compiled against the jar.
# From a source tree (a checkout or an extracted archive; clients/ and generator/ are read), the
# build does what Kafka's Gradle build does for the classes the assignors need:
#   1. compiles Kafka's message generator (generator/) with Debian's jackson and argparse4j, plus a
#      stand-in for jackson-datatype-jdk8, which Debian lacks and the generator only registers;
#   2. runs it over clients/src/main/resources/common/message, as the clients project's
#      processMessages task does (ConsumerProtocolSubscription and the other message classes);
#   3. generates the few OTLP protobuf classes Kafka's telemetry code names (otlp/README.md);
#   4. compiles the harness with javac -sourcepath over Kafka's clients sources, which compiles the
#      classes the harness reaches (about 1,500) and nothing else.
# STICKYPROOF_JAVA_OPTS (default "-XX:+UseParallelGC", the throughput collector: the harness is a batch
# job) is written into the manifest's java command lines; add e.g. -Xmx12g for the largest groups.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
die() { echo "kafka-java build: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: $0 KAFKA_SOURCE_TREE_OR_KAFKA_CLIENTS_JAR"
input="$1"
out="${STICKYPROOF_PEERS_DIR:-$root/.peers}/kafka-java"
started=$(date +%s)

apt_install() {  # apt_install PACKAGE...: Debian packages, when root; else say what to install
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "kafka-java build: installing $* (Debian)" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"; } >&2 \
      || die "apt-get install $* failed"
  else
    die "missing $*: install them (Debian: sudo apt-get install $*) and re-run"
  fi
}
J=/usr/share/java
need_jars() {  # need_jars PACKAGE JAR...: install PACKAGE unless every JAR is in /usr/share/java
  local package="$1"; shift
  for jar in "$@"; do [ -f "$J/$jar" ] || { apt_install "$package"; return; }; done
}

command -v javac >/dev/null 2>&1 || apt_install openjdk-17-jdk-headless
need_jars libslf4j-java slf4j-api.jar slf4j-nop.jar
java_bin="$(command -v java)"

mkdir -p "$out"
out="$(cd "$out" && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/stickyproof-kafka-java.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
classes="$out/classes"
rm -rf "$classes.new" && mkdir -p "$classes.new"
harness_api() {  # harness_api KAFKA_VERSION: the version-specific sources (v24 from 2.4, v20 before; pom.xml)
  case "$1" in 0.*|1.*|2.[0-3]|2.[0-3].*|2.[0-3]-*) echo v20 ;; *) echo v24 ;; esac
}
runtime_cp="$classes:$J/slf4j-api.jar:$J/slf4j-nop.jar"

if [ -f "$input" ] && [[ "$input" == *.jar ]]; then
  # --- against a kafka-clients jar -----------------------------------------------------------
  kind=jar
  jar="$(cd "$(dirname "$input")" && pwd)/$(basename "$input")"
  mkdir -p "$out/lib"
  cp "$jar" "$out/lib/kafka-clients.jar"
  version="$(python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
name = "kafka/kafka-version.properties"
props = dict(l.split("=", 1) for l in z.read(name).decode().splitlines() if "=" in l) if name in z.namelist() else {}
print(props.get("version", "").strip())' "$jar")"
  harness_sources=("$here"/src/stickyproof/peers/*.java "$here"/src/stickyproof/peers/"$(harness_api "$version")"/*.java)
  javac -nowarn -encoding UTF-8 -d "$classes.new" -cp "$out/lib/kafka-clients.jar:$J/slf4j-api.jar" "${harness_sources[@]}" \
    || die "javac failed (above) against kafka-clients ${version:-of unknown version}"
  runtime_cp="$runtime_cp:$out/lib/kafka-clients.jar"
  commit=""
  source_path="$jar"
elif [ -d "$input/clients/src/main/java" ]; then
  # --- from a Kafka source tree --------------------------------------------------------------
  kind=source-tree
  src="$(cd "$input" && pwd)"
  version="$(sed -n 's/^version=//p' "$src/gradle.properties" 2>/dev/null | head -1)"
  harness_sources=("$here"/src/stickyproof/peers/*.java "$here"/src/stickyproof/peers/"$(harness_api "$version")"/*.java)
  [ -d "$src/generator/src/main/java" ] || die "$src has clients/ but no generator/ (Kafka's message generator)"
  need_jars libjackson2-databind-java jackson-databind.jar jackson-core.jar jackson-annotations.jar
  need_jars libargparse4j-java argparse4j.jar
  need_jars liblz4-java lz4-java.jar
  need_jars libsnappy-java snappy-java.jar
  need_jars libzstd-jni-java zstd-jni.jar
  need_jars libprotobuf-java protobuf.jar
  command -v protoc >/dev/null 2>&1 || apt_install protobuf-compiler
  jackson="$J/jackson-databind.jar:$J/jackson-core.jar:$J/jackson-annotations.jar"

  echo "kafka-java build: 1/4 compiling Kafka's message generator" >&2
  mkdir -p "$tmp/jdk8/com/fasterxml/jackson/datatype/jdk8" "$tmp/generator"
  cat > "$tmp/jdk8/com/fasterxml/jackson/datatype/jdk8/Jdk8Module.java" <<'EOF'
package com.fasterxml.jackson.datatype.jdk8;

/** stickyproof's stand-in for jackson-datatype-jdk8 (not in Debian): the generator registers the
 *  module but only reads message specs, whose Optional values it builds itself. */
public class Jdk8Module extends com.fasterxml.jackson.databind.module.SimpleModule {
    public Jdk8Module() {
        super("stickyproof-jdk8-stand-in");
    }
}
EOF
  generator_main="$src/generator/src/main/java/org/apache/kafka/message/MessageGenerator.java"
  javac -nowarn -encoding UTF-8 -d "$tmp/generator" -cp "$jackson:$J/argparse4j.jar" \
    -sourcepath "$src/generator/src/main/java:$tmp/jdk8" "$generator_main" || die "compiling the generator failed (above)"

  echo "kafka-java build: 2/4 generating the clients' message classes" >&2
  generated="$tmp/generated/org/apache/kafka/common/message"
  generator=("$java_bin" -cp "$tmp/generator:$jackson:$J/argparse4j.jar" org.apache.kafka.message.MessageGenerator)
  if grep -q -- '--typeclass-generators' "$generator_main"; then  # 3.0 on: Gradle's processMessages arguments
    "${generator[@]}" -p org.apache.kafka.common.message -o "$generated" -i "$src/clients/src/main/resources/common/message" \
      -t ApiMessageTypeGenerator -m MessageDataGenerator JsonConverterGenerator >&2
  else  # before 3.0: package, output, input
    "${generator[@]}" org.apache.kafka.common.message "$generated" "$src/clients/src/main/resources/common/message" >&2
  fi || die "the message generator failed (above)"

  echo "kafka-java build: 3/4 OTLP classes for Kafka's telemetry code" >&2
  mkdir -p "$tmp/otlp"
  protoc -I "$here/otlp" --java_out="$tmp/otlp" "$here"/otlp/*.proto || die "protoc failed (above)"

  echo "kafka-java build: 4/4 compiling the harness over Kafka's clients sources (about a minute)" >&2
  javac -nowarn -encoding UTF-8 -implicit:class -d "$classes.new" \
    -cp "$J/slf4j-api.jar:$jackson:$J/lz4-java.jar:$J/snappy-java.jar:$J/zstd-jni.jar:$J/protobuf.jar" \
    -sourcepath "$src/clients/src/main/java:$tmp/generated:$tmp/otlp" "${harness_sources[@]}" 2>&1 \
    | grep -v '^Note: ' >&2 || true
  [ -f "$classes.new/stickyproof/peers/KafkaJavaPeer.class" ] || die "javac failed (above)"
  commit="$(git -C "$src" rev-parse HEAD 2>/dev/null || true)"
  source_path="$src"
else
  die "$input is neither a kafka-clients .jar nor a Kafka source tree (a directory with clients/src/main/java)"
fi
rm -rf "$classes" && mv "$classes.new" "$classes"

# --- smoke test and manifest -------------------------------------------------------------------------
read -r -a java_opts <<< "${STICKYPROOF_JAVA_OPTS--XX:+UseParallelGC}"
hello="$(echo -n | "$java_bin" "${java_opts[@]}" -cp "$runtime_cp" stickyproof.peers.KafkaJavaPeer sticky | head -1)"
case "$hello" in *'"stickyproof":"assignor/1"'*) ;; *) die "the built harness did not say hello: $hello" ;; esac
names="$("$java_bin" -cp "$runtime_cp" stickyproof.peers.KafkaJavaPeer --list | tr '\n' ' ')"  # this release's assignors
seconds=$(( $(date +%s) - started ))
python3 - "$out/manifest.json" "$java_bin" "$runtime_cp" "$kind" "$source_path" "${version:-}" "${commit:-}" "$seconds" "$names" "${java_opts[@]}" <<'EOF'
import json, os, subprocess, sys, time
path, java, cp, kind, source, version, commit, seconds, names, *opts = sys.argv[1:]
classes = cp.split(":")[0]
size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(classes) for f in fs)
runtime = subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
doc = {
    "format": "stickyproof.peer-manifest/1",
    "peer": "kafka-java",
    "protocol": "assignor/1",
    "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "build_seconds": int(seconds),
    "source": {"kind": kind, "path": source, "kafka_version": version or None, "commit": commit or None},
    "toolchain": runtime,
    "classes_bytes": size,
    "assignors": {
        name: [java, *opts, "-cp", cp, "stickyproof.peers.KafkaJavaPeer", name]
        for name in names.split()
    },
}
with open(path + ".tmp", "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
os.replace(path + ".tmp", path)
EOF
echo "kafka-java build: $classes ($(du -sh "$classes" | cut -f1)), manifest $out/manifest.json, ${seconds}s" >&2
