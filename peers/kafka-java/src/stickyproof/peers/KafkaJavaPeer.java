package stickyproof.peers;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * Serves one of Kafka's client assignors over stickyproof's assignor protocol (assignor/1, wire
 * mode; models/assignor-protocol.md), doing what {@code ConsumerCoordinator.onLeaderElected} does
 * with a JoinGroup response:
 *
 * <ul>
 *   <li>each member's {@code ConsumerProtocolSubscription} bytes go through
 *       {@code ConsumerProtocol.deserializeSubscription}, the member's instance id is set with
 *       {@code setGroupInstanceId} (2.4 on), and the result is put into a {@code HashMap} in the
 *       request's member order (the JoinGroup response order: Kafka's sticky assignors iterate that
 *       map);</li>
 *   <li>the leader's metadata becomes a {@code Cluster}: one broker per distinct rack named in the
 *       request, each partition's replicas on the brokers of its racks in the listed order (the
 *       first is the leader), and a broker without a rack for partitions that list none;</li>
 *   <li>{@code assignor.assign(cluster, new GroupSubscription(subscriptions))} (before 2.4
 *       {@code assign(cluster, subscriptions)}), timed; its lists are returned in the assignor's order.</li>
 * </ul>
 *
 * The {@code Cluster} is reused while the request's metadata does not change. A new assignor instance serves each request, so that no request sees state left by another (a
 * real leader keeps its instance, but the assignors keep no state between {@code assign} calls that
 * the leader path uses). Anything the assignor throws is answered as {@code {"error": ...}} with the
 * exception's class name; its stack trace goes to standard error.
 *
 * <p>What differs between releases (the assignor interface before and after 2.4) is behind
 * {@link KafkaAssignor}; the build compiles the side the release has.
 *
 * <p>Usage: {@code java -cp ... stickyproof.peers.KafkaJavaPeer range|roundrobin|sticky|cooperative-sticky}
 * serves one assignor; {@code KafkaJavaPeer --list} prints the names the kafka-clients jar on the class
 * path offers, one a line (the build writes its manifest from them).
 */
public final class KafkaJavaPeer {
    static final String PROTOCOL = "assignor/1";
    /** STICKYPROOF_PEER_TIMING=1: one line per request on standard error with where its time went. */
    static final boolean TIMING = "1".equals(System.getenv("STICKYPROOF_PEER_TIMING"));

    private KafkaJavaPeer() {
    }

    static final Assignors ASSIGNORS = Assignors.forThisRelease();

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("--list")) {
            for (String name : ASSIGNORS.names()) System.out.println(name);
            System.exit(0);
        }
        KafkaAssignor first = args.length == 1 ? ASSIGNORS.create(args[0]) : null;
        if (first == null) {
            System.err.println("usage: KafkaJavaPeer " + String.join("|", ASSIGNORS.names()) + " (this kafka-clients release's)");
            System.exit(2);
        }
        String name = args[0];
        // Standard output carries the protocol only: whatever else prints goes to standard error.
        PrintStream protocolOut = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
        System.setOut(System.err);

        StringBuilder hello = new StringBuilder("{\"stickyproof\":\"" + PROTOCOL + "\",\"name\":");
        Json.quote(hello, "kafka-java:" + name);
        hello.append(",\"kafka_name\":");
        Json.quote(hello, first.kafkaName());
        hello.append(",\"supported_protocols\":[");
        List<String> protocols = first.supportedProtocols();
        for (int i = 0; i < protocols.size(); i++) {
            if (i > 0) hello.append(',');
            Json.quote(hello, protocols.get(i));
        }
        hello.append("],\"accepts\":[\"ranges\"],\"wire\":true}");
        emit(protocolOut, hello);

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 20);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().isEmpty()) continue;
            emit(protocolOut, serve(name, line));
        }
        protocolOut.flush();
        System.exit(0);
    }

    private static void emit(PrintStream out, CharSequence line) {
        out.append(line).append('\n');
        out.flush();
        if (out.checkError()) System.exit(1);  // stickyproof went away
    }

    /** One request line to one answer line. A request without a readable id ends the process (exit 2). */
    static CharSequence serve(String name, String line) {
        long t0 = System.nanoTime();
        Map<String, Object> request;
        long id;
        try {
            request = asObject(Json.parse(line), "request");
            id = ((Number) request.get("id")).longValue();
        } catch (RuntimeException e) {
            System.err.println("KafkaJavaPeer: unreadable request (" + e + "): "
                + line.substring(0, Math.min(200, line.length())));
            System.exit(2);
            return null;
        }
        Cluster cluster;
        List<Object> members;
        Map<String, byte[]> wire;
        try {
            Map<String, Object> group = asObject(request.get("group"), "group");
            cluster = cachedCluster(asObject(group.get("topics"), "group.topics"));
            members = asList(group.get("members"), "group.members");
            wire = wireBytes(members, asObject(request.get("subscriptions"), "subscriptions"));
        } catch (RuntimeException e) {
            return error(id, "stickyproof.BadRequest", String.valueOf(e.getMessage()));
        }
        long t1 = System.nanoTime();
        KafkaAssignor assignor = ASSIGNORS.create(name);
        Object subscriptions;
        try {
            subscriptions = subscriptions(assignor, members, wire);
        } catch (Throwable t) {  // Kafka's leader fails the rebalance here: graded as the assignor's failure
            t.printStackTrace(System.err);
            return error(id, t.getClass().getName(), String.valueOf(t.getMessage()));
        }
        Map<String, List<TopicPartition>> assignments;
        long started = System.nanoTime();
        try {
            assignments = assignor.assign(cluster, subscriptions);
        } catch (Throwable t) {
            t.printStackTrace(System.err);
            return error(id, t.getClass().getName(), String.valueOf(t.getMessage()));
        }
        long t2 = System.nanoTime();
        double seconds = (t2 - started) / 1e9;
        CharSequence answer = answer(id, assignments, seconds);
        if (TIMING) {
            System.err.printf("timing id=%d request+metadata=%.1fms decode=%.1fms assign=%.1fms answer=%.1fms%n",
                id, (t1 - t0) / 1e6, (started - t1) / 1e6, (t2 - started) / 1e6, (System.nanoTime() - t2) / 1e6);
        }
        return answer;
    }

    /** Each member's subscription bytes, base64-decoded, by member id. */
    static Map<String, byte[]> wireBytes(List<Object> members, Map<String, Object> wire) {
        Map<String, byte[]> out = new HashMap<>();
        for (int i = 0; i < members.size(); i++) {
            Map<String, Object> member = asObject(members.get(i), "group.members[" + i + "]");
            Object memberId = member.get("id");
            if (!(memberId instanceof String)) throw new IllegalArgumentException("group.members[" + i + "].id: expected a string");
            Object encoded = wire.get(memberId);
            if (!(encoded instanceof String))
                throw new IllegalArgumentException("subscriptions: no bytes for group.members[" + i + "] " + memberId
                    + " (this harness runs in wire mode)");
            try {
                out.put((String) memberId, Base64.getDecoder().decode((String) encoded));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("subscriptions." + memberId + ": not base64 (" + e.getMessage() + ")");
            }
        }
        return out;
    }

    /**
     * What {@code ConsumerCoordinator.onLeaderElected} builds: decoded subscriptions, with the
     * JoinGroup response's instance ids, inserted into a {@code HashMap} in member order
     * ({@link KafkaAssignor#decode}).
     */
    static Object subscriptions(KafkaAssignor assignor, List<Object> members, Map<String, byte[]> wire) {
        List<String> ids = new ArrayList<>();
        List<String> instanceIds = new ArrayList<>();
        List<byte[]> metadata = new ArrayList<>();
        for (Object value : members) {
            @SuppressWarnings("unchecked")
            Map<String, Object> member = (Map<String, Object>) value;
            String memberId = (String) member.get("id");
            ids.add(memberId);
            instanceIds.add((String) member.get("instance_id"));
            metadata.add(wire.get(memberId));
        }
        return assignor.decode(ids, instanceIds, metadata);
    }

    private static Map<String, Object> lastTopics;
    private static Cluster lastCluster;

    /**
     * {@link #cluster}, reused while the metadata stays the same from one request to the next: a
     * {@code Cluster} of a million partitions takes seconds to build, and a real leader builds it once
     * per metadata change, not per rebalance. ({@code Cluster} is immutable; the assignors only read it.)
     */
    static Cluster cachedCluster(Map<String, Object> topics) {
        if (!topics.equals(lastTopics)) {
            lastCluster = cluster(topics);
            lastTopics = topics;
        }
        return lastCluster;
    }

    /** The leader's metadata as a {@code Cluster} whose replicas carry the request's racks. */
    static Cluster cluster(Map<String, Object> topics) {
        Node rackless = new Node(0, "broker-0", 9092);
        Map<String, Node> byRack = new LinkedHashMap<>();
        List<PartitionInfo> partitions = new ArrayList<>();
        for (Map.Entry<String, Object> entry : topics.entrySet()) {
            String topic = entry.getKey();
            Object doc = entry.getValue();
            int count;
            List<Object> racks = null;
            if (doc instanceof Number) {
                count = ((Number) doc).intValue();
            } else {
                Map<String, Object> spec = asObject(doc, "group.topics." + topic);
                count = ((Number) spec.get("partitions")).intValue();
                if (spec.get("racks") != null) racks = asList(spec.get("racks"), "group.topics." + topic + ".racks");
            }
            for (int p = 0; p < count; p++) {
                Node[] replicas = {rackless};
                if (racks != null) {
                    List<Object> names = asList(racks.get(p), "group.topics." + topic + ".racks[" + p + "]");
                    if (!names.isEmpty()) {
                        replicas = new Node[names.size()];
                        for (int r = 0; r < replicas.length; r++) {
                            String rack = (String) names.get(r);
                            replicas[r] = byRack.computeIfAbsent(rack, k -> new Node(byRack.size() + 1, "broker-" + (byRack.size() + 1), 9092, k));
                        }
                    }
                }
                partitions.add(new PartitionInfo(topic, p, replicas[0], replicas, replicas));
            }
        }
        List<Node> nodes = new ArrayList<>();
        nodes.add(rackless);
        nodes.addAll(byRack.values());
        return new Cluster("stickyproof", nodes, partitions, java.util.Collections.emptySet(), java.util.Collections.emptySet());
    }

    static CharSequence answer(long id, Map<String, List<TopicPartition>> assignments, double seconds) {
        StringBuilder out = new StringBuilder(64 + 16 * assignments.size());
        out.append("{\"id\":").append(id).append(",\"assignment\":{");
        boolean firstMember = true;
        for (Map.Entry<String, List<TopicPartition>> entry : assignments.entrySet()) {
            if (!firstMember) out.append(',');
            firstMember = false;
            Json.quote(out, entry.getKey());
            out.append(":{");
            Map<String, List<Integer>> byTopic = new LinkedHashMap<>();
            for (TopicPartition tp : entry.getValue())
                byTopic.computeIfAbsent(tp.topic(), k -> new ArrayList<>()).add(tp.partition());
            boolean firstTopic = true;
            for (Map.Entry<String, List<Integer>> topic : byTopic.entrySet()) {
                if (!firstTopic) out.append(',');
                firstTopic = false;
                Json.quote(out, topic.getKey());
                out.append(':');
                partitionList(out, topic.getValue());
            }
            out.append('}');
        }
        out.append("},\"assign_seconds\":").append(seconds).append('}');
        return out;
    }

    /** The assignor's order; an ascending list as inclusive ranges when that is shorter (protocol §4). */
    static void partitionList(StringBuilder out, List<Integer> partitions) {
        int runs = partitions.isEmpty() ? 0 : 1;
        boolean ascending = true;
        for (int i = 1; i < partitions.size(); i++) {
            int prev = partitions.get(i - 1), p = partitions.get(i);
            if (p < prev) ascending = false;
            if (p != prev + 1) runs++;
        }
        if (ascending && 2 * runs < partitions.size()) {
            out.append("{\"ranges\":[");
            for (int i = 0; i < partitions.size(); ) {
                int j = i;
                while (j + 1 < partitions.size() && partitions.get(j + 1) == partitions.get(j) + 1) j++;
                if (i > 0) out.append(',');
                out.append('[').append(partitions.get(i)).append(',').append(partitions.get(j)).append(']');
                i = j + 1;
            }
            out.append("]}");
            return;
        }
        out.append('[');
        for (int i = 0; i < partitions.size(); i++) {
            if (i > 0) out.append(',');
            out.append(partitions.get(i));
        }
        out.append(']');
    }

    static CharSequence error(long id, String type, String message) {
        StringBuilder out = new StringBuilder("{\"id\":").append(id).append(",\"error\":{\"type\":");
        Json.quote(out, type);
        out.append(",\"message\":");
        Json.quote(out, message);
        return out.append("}}");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asObject(Object value, String path) {
        if (!(value instanceof Map)) throw new IllegalArgumentException(path + ": expected an object");
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> asList(Object value, String path) {
        if (!(value instanceof List)) throw new IllegalArgumentException(path + ": expected an array");
        return (List<Object>) value;
    }
}
