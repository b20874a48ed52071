package stickyproof.peers.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

/**
 * Runs one of Kafka's server-side assignors on consumer-group scenarios, one JSON document per
 * line on standard input (docs/scenario-format.md, group_protocol "consumer"), one JSON answer per
 * line on standard output: {"assignment": {member: {topic: [partitions]}}} or
 * {"error": {"exception": class, "message": text}}.
 *
 * The input reaches the assignor as the coordinator builds it (TargetAssignmentBuilder.build): a
 * HashMap of member specs filled in document order and wrapped unmodifiable; each member's
 * subscription as a TopicIds-like view over new HashSet<String>(topics) (ids of names the metadata
 * knows, in the name set's order, size() counting every name); each target as Assignment.fromRecord
 * builds it (a HashMap of topic id to new HashSet<Integer>(partitions), topics in document order);
 * the subscription type as ModernGroup.subscriptionType decides it; the inverted target assignment
 * from all targets. A topic's id is the one the scenario states ("id", Uuid.toString form), else
 * UUID.nameUUIDFromBytes of the name's UTF-8 bytes.
 *
 * Every answer carries "assign_seconds": the wall time of the assign call alone (no JSON, no
 * GroupSpec building). A request with "timing": {"warmup": W, "iterations": N} runs the assign call
 * W times unmeasured (JIT warm-up, as JMH's warmup iterations) and then N times measured on the
 * same GroupSpec, and answers the N times as a list, plus "heap_used_bytes" after the last call,
 * so benchmarks/server_side.py can compare Kafka's assign call with the ports' alone.
 *
 * Usage: CoordinatorPeer NAME (uniform | consumer-range), or --list.
 */
public final class CoordinatorPeer {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("--list")) {
            System.out.println("uniform consumer-range");
            return;
        }
        if (args.length != 1 || assignor(args[0]) == null) {
            System.err.println("usage: CoordinatorPeer uniform|consumer-range|--list");
            System.exit(2);
        }
        ConsumerGroupPartitionAssignor assignor = assignor(args[0]);
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            ObjectNode answer = JSON.createObjectNode();
            try {
                run(assignor, JSON.readTree(line), answer);
            } catch (Exception e) {
                ObjectNode error = answer.putObject("error");
                error.put("exception", e.getClass().getSimpleName());
                error.put("message", String.valueOf(e.getMessage()));
            }
            out.println(JSON.writeValueAsString(answer));
            out.flush();
        }
    }

    static ConsumerGroupPartitionAssignor assignor(String name) {
        switch (name) {
            case "uniform": return new UniformAssignor();
            case "consumer-range": return new RangeAssignor();
            default: return null;
        }
    }

    static Uuid topicId(String name) {
        UUID u = UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8));
        return new Uuid(u.getMostSignificantBits(), u.getLeastSignificantBits());
    }

    static void run(ConsumerGroupPartitionAssignor assignor, JsonNode doc, ObjectNode reply) {
        Map<String, Uuid> ids = new HashMap<>();
        Map<Uuid, String> names = new HashMap<>();
        Map<Uuid, Integer> counts = new HashMap<>();
        Map<Uuid, List<Set<String>>> racks = new HashMap<>();
        doc.get("topics").fields().forEachRemaining(e -> {
            JsonNode v = e.getValue();
            Uuid id = v.isObject() && v.hasNonNull("id") ? Uuid.fromString(v.get("id").asText()) : topicId(e.getKey());
            ids.put(e.getKey(), id);
            names.put(id, e.getKey());
            counts.put(id, v.isInt() ? v.asInt() : v.get("partitions").asInt());
            if (v.isObject() && v.has("racks")) {
                List<Set<String>> perPartition = new ArrayList<>();
                for (JsonNode r : v.get("racks")) {
                    Set<String> set = new HashSet<>();
                    r.forEach(x -> set.add(x.asText()));
                    perPartition.add(set);
                }
                racks.put(id, perPartition);
            }
        });

        List<String> memberOrder = new ArrayList<>();
        Map<String, MemberSubscriptionAndAssignmentImpl> members = new HashMap<>();
        Map<String, Integer> byName = new HashMap<>();
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        for (JsonNode m : doc.get("members")) {
            String memberId = m.get("id").asText();
            memberOrder.add(memberId);
            List<String> topicList = new ArrayList<>();
            m.get("topics").forEach(t -> topicList.add(t.asText()));
            Set<String> subscribed = new HashSet<>(topicList);
            subscribed.forEach(t -> byName.merge(t, 1, Integer::sum));
            Map<Uuid, Set<Integer>> target = new HashMap<>();
            JsonNode owned = m.get("owned");
            if (owned != null && !owned.isNull()) {
                owned.fields().forEachRemaining(e -> {
                    List<Integer> parts = new ArrayList<>();
                    e.getValue().forEach(p -> parts.add(p.asInt()));
                    Uuid id = ids.getOrDefault(e.getKey(), topicId(e.getKey()));
                    target.put(id, new HashSet<>(parts));
                    parts.forEach(p -> inverted.computeIfAbsent(id, k -> new HashMap<>()).put(p, memberId));
                });
            }
            members.put(memberId, new MemberSubscriptionAndAssignmentImpl(
                Optional.ofNullable(text(m, "rack")),
                Optional.ofNullable(text(m, "instance_id")),
                new TopicIdsView(subscribed, ids, names),
                new Assignment(target)));
        }
        int numberOfMembers = memberOrder.size();
        SubscriptionType type = SubscriptionType.HOMOGENEOUS;
        for (int count : byName.values()) {
            if (count != numberOfMembers) type = SubscriptionType.HETEROGENEOUS;
        }

        SubscribedTopicDescriber describer = new SubscribedTopicDescriber() {
            @Override
            public int numPartitions(Uuid topicId) {
                return counts.getOrDefault(topicId, -1);
            }

            @Override
            public Set<String> racksForPartition(Uuid topicId, int partition) {
                List<Set<String>> r = racks.get(topicId);
                return r == null || partition >= r.size() ? Set.of() : r.get(partition);
            }
        };
        GroupSpecImpl spec = new GroupSpecImpl(Collections.unmodifiableMap(members), type, inverted);
        JsonNode timing = doc.get("timing");
        int warmup = timing == null ? 0 : timing.path("warmup").asInt(0);
        int iterations = timing == null ? 1 : Math.max(1, timing.path("iterations").asInt(1));
        for (int i = 0; i < warmup; i++) assignor.assign(spec, describer);
        GroupAssignment result = null;
        ArrayNode seconds = JSON.createArrayNode();
        for (int i = 0; i < iterations; i++) {
            long started = System.nanoTime();
            result = assignor.assign(spec, describer);
            seconds.add((System.nanoTime() - started) / 1e9);
        }

        ObjectNode answer = JSON.createObjectNode();
        for (String memberId : memberOrder) {
            ObjectNode topics = answer.putObject(memberId);
            MemberAssignment assignment = result.members().get(memberId);
            if (assignment == null) continue;
            Map<String, TreeSet<Integer>> sorted = new java.util.TreeMap<>();
            assignment.partitions().forEach((id, parts) -> {
                if (!parts.isEmpty())
                    sorted.computeIfAbsent(names.getOrDefault(id, id.toString()), k -> new TreeSet<>()).addAll(parts);
            });
            sorted.forEach((topic, parts) -> {
                ArrayNode list = topics.putArray(topic);
                parts.forEach(list::add);
            });
        }
        reply.set("assignment", answer);
        if (timing == null) {
            reply.set("assign_seconds", seconds.get(0));
        } else {
            reply.set("assign_seconds", seconds);
            Runtime rt = Runtime.getRuntime();
            reply.put("heap_used_bytes", rt.totalMemory() - rt.freeMemory());
        }
    }

    static String text(JsonNode m, String field) {
        JsonNode v = m.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }

    /**
     * What org.apache.kafka.coordinator.group.modern.TopicIds is to the assignor (its constructor
     * changed across 4.x releases, so the harness keeps its semantics, not its signature): ids of the
     * names the metadata knows, iterated in the name set's order; size() counts every name;
     * contains(id) asks whether the id's name is subscribed.
     */
    static final class TopicIdsView extends AbstractSet<Uuid> {
        private final Set<String> topicNames;
        private final Map<String, Uuid> ids;
        private final Map<Uuid, String> names;

        TopicIdsView(Set<String> topicNames, Map<String, Uuid> ids, Map<Uuid, String> names) {
            this.topicNames = topicNames;
            this.ids = ids;
            this.names = names;
        }

        @Override
        public int size() {
            return topicNames.size();
        }

        @Override
        public boolean isEmpty() {
            return topicNames.isEmpty();
        }

        @Override
        public boolean contains(Object o) {
            if (!(o instanceof Uuid)) return false;
            String name = names.get(o);
            return name != null && topicNames.contains(name);
        }

        @Override
        public Iterator<Uuid> iterator() {
            Iterator<String> it = topicNames.iterator();
            return new Iterator<>() {
                Uuid next = advance();

                private Uuid advance() {
                    while (it.hasNext()) {
                        Uuid id = ids.get(it.next());
                        if (id != null) return id;
                    }
                    return null;
                }

                @Override
                public boolean hasNext() {
                    return next != null;
                }

                @Override
                public Uuid next() {
                    if (next == null) throw new NoSuchElementException();
                    Uuid current = next;
                    next = advance();
                    return current;
                }
            };
        }
    }
}
