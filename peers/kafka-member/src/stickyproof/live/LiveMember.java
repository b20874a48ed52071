package stickyproof.live;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * One real member of a live group (docs/live.md): Kafka's own {@code KafkaConsumer}, driven by
 * stickyproof over standard input and reporting over standard output, one JSON object a line.
 *
 * <p>The consumer is not thread-safe, so one thread (the poll loop) owns it: commands read from
 * standard input are queued and run between two polls. Every rebalance callback is reported as it
 * runs, with the generation {@code groupMetadata()} gives inside it (the member epoch under
 * {@code group.protocol=consumer}) and the monotonic clock ({@code System.nanoTime}, the host's
 * CLOCK_MONOTONIC on Linux, which every process on the host shares), so stickyproof can order the
 * reports of several members on one time line. A member consumes what it was assigned from its
 * {@code onPartitionsAssigned} until the revocation or loss; a stall stops the poll loop (so it
 * consumes nothing), and {@code resumed} is reported only after the first poll after the stall
 * returned, so a loss that poll found is reported before the member consumes again.
 *
 * <p>{@code crash} halts the JVM at once: no LeaveGroup, no callbacks, as a killed process.
 * The same program answers admin commands (create topics, add partitions) with an {@code Admin}.
 */
public final class LiveMember {
    private static final PrintStream OUT = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
            StandardCharsets.UTF_8);
    private static final Object WRITE = new Object();
    private static final long POLL_MS = 50;

    private static String name = "?";
    private static final ConcurrentLinkedQueue<Map<String, Object>> commands = new ConcurrentLinkedQueue<>();
    private static volatile boolean running = true;

    private LiveMember() {
    }

    public static void main(String[] args) throws Exception {
        warmUp();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Admin admin = null;
        Thread poller = null;
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            Map<String, Object> cmd;
            try {
                cmd = asMap(Json.parse(line));
            } catch (RuntimeException e) {
                report("error", "message", "bad command: " + e.getMessage());
                continue;
            }
            String op = String.valueOf(cmd.get("op"));
            try {
                switch (op) {
                    case "start": {
                        if (poller != null) throw new IllegalStateException("already started");
                        name = String.valueOf(cmd.get("name"));
                        Map<String, Object> start = cmd;
                        poller = new Thread(() -> pollLoop(start), "poll-loop");
                        poller.start();
                        break;
                    }
                    case "crash":
                        report("crashing");
                        Runtime.getRuntime().halt(3);
                        break;
                    case "admin":
                        name = "admin";
                        Properties props = new Properties();
                        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cmd.get("bootstrap"));
                        admin = Admin.create(props);
                        report("admin-ready");
                        break;
                    case "create-topics": {
                        List<NewTopic> topics = new ArrayList<>();
                        for (Map.Entry<String, Object> e : asMap(cmd.get("topics")).entrySet()) {
                            topics.add(new NewTopic(e.getKey(), ((Long) e.getValue()).intValue(), (short) 1));
                        }
                        org.apache.kafka.clients.admin.CreateTopicsResult created = admin.createTopics(topics);
                        created.all().get();
                        Map<String, Integer> counts = new HashMap<>();
                        for (NewTopic t : topics) counts.put(t.name(), t.numPartitions());
                        awaitTopics(admin, counts);
                        // the ids the broker drew: KIP-848's assignors break ties by them
                        Map<String, Object> ids = new java.util.TreeMap<>();
                        for (NewTopic t : topics) ids.put(t.name(), created.topicId(t.name()).get().toString());
                        report("topics-created", "topics", cmd.get("topics"), "ids", ids);
                        break;
                    }
                    case "add-partitions": {
                        String topic = String.valueOf(cmd.get("topic"));
                        int count = ((Long) cmd.get("count")).intValue();
                        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
                        int total = d.partitions().size() + count;
                        admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(total))).all().get();
                        awaitTopics(admin, Map.of(topic, total));
                        report("partitions-added", "topic", topic, "partitions", (long) total);
                        break;
                    }
                    case "watch-group": {
                        // KIP-848 groups: every target the coordinator computes, read by describing
                        // the group every watch_ms (a target the next one replaced within that
                        // time is missed; the reader sees the gap in the epochs)
                        final Admin watching = admin;
                        startWatch(cmd, "group-watch", "watching", (group, every) -> watchGroup(watching, group, every));
                        break;
                    }
                    case "watch-type": {
                        // migration runs: the group's type (classic/consumer), state, epochs and
                        // members as the admin's describe shows them, reported on every change
                        final Admin describing = admin;
                        startWatch(cmd, "type-watch", "watching-type", (group, every) -> watchType(describing, group, every));
                        break;
                    }
                    case "delete-topic": {
                        String topic = String.valueOf(cmd.get("topic"));
                        admin.deleteTopics(List.of(topic)).all().get();
                        report("topic-deleted", "topic", topic);
                        break;
                    }
                    case "exit":
                        running = false;
                        if (admin != null) admin.close(Duration.ofSeconds(5));
                        if (poller != null) poller.join(30_000);
                        report("exited");
                        System.exit(0);
                        break;
                    default:  // subscribe, stall, leave: the poll loop's
                        commands.add(cmd);
                }
            } catch (Exception e) {
                Throwable cause = e.getCause() != null && e instanceof java.util.concurrent.ExecutionException ? e.getCause() : e;
                report("error", "op", op, "message", cause.getClass().getSimpleName() + ": " + cause.getMessage());
            }
        }
        // standard input closed: stickyproof is gone, so is this member (as a crash: no LeaveGroup)
        Runtime.getRuntime().halt(4);
    }

    /**
     * Builds and closes a consumer of each group protocol against an address nothing listens on (a
     * constructor connects to nothing), so the classes a member needs are loaded before stickyproof
     * asks it to join: started ahead of need, a member then joins when the history says, not seconds
     * of class loading later. Commands sent meanwhile wait in the pipe.
     */
    private static void warmUp() {
        for (String protocol : new String[] {"classic", "consumer"}) {
            Properties props = new Properties();
            props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9");
            props.put(ConsumerConfig.GROUP_ID_CONFIG, "stickyproof-warm-up");
            props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
            props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
                c.subscribe(List.of("stickyproof-warm-up"));
            } catch (RuntimeException e) {
                // a warm-up only: the real start reports what is wrong
            }
        }
    }

    private static void pollLoop(Map<String, Object> start) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, start.get("bootstrap"));
        props.put(ConsumerConfig.GROUP_ID_CONFIG, start.get("group"));
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, String.valueOf(start.get("max_poll_interval_ms")));
        if (start.get("metadata_max_age_ms") != null) {
            props.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, String.valueOf(start.get("metadata_max_age_ms")));
        }
        if (start.get("instance_id") != null) props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, start.get("instance_id"));
        String protocol = String.valueOf(start.getOrDefault("group_protocol", "classic"));
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        if (protocol.equals("classic")) {
            // the classic protocol's timing is the client's; KIP-848's is the broker's (refused here)
            props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, String.valueOf(start.get("session_timeout_ms")));
            props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, String.valueOf(start.get("heartbeat_interval_ms")));
            props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, String.join(",", strings(start.get("assignors"))));
        } else if (start.get("remote_assignor") != null) {
            props.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, start.get("remote_assignor"));
        }
        KafkaConsumer<byte[], byte[]> consumer;
        try {
            consumer = new KafkaConsumer<>(props);
        } catch (RuntimeException e) {
            report("error", "op", "start", "message", e.getClass().getSimpleName() + ": " + e.getMessage(), "fatal", true);
            return;
        }
        Listener listener = new Listener(consumer);
        consumer.subscribe(strings(start.get("topics")), listener);
        report("started", "topics", start.get("topics"), "group_protocol", protocol);
        boolean resumePending = false;
        String lastError = null;
        while (running) {
            Map<String, Object> cmd;
            while ((cmd = commands.poll()) != null) {
                String op = String.valueOf(cmd.get("op"));
                try {
                    if (op.equals("subscribe")) {
                        consumer.subscribe(strings(cmd.get("topics")), listener);
                        report("subscribed", "topics", cmd.get("topics"));
                    } else if (op.equals("stall")) {
                        long ms = (Long) cmd.get("ms");
                        report("stalled", "ms", ms);
                        Thread.sleep(ms);
                        resumePending = true;
                    } else if (op.equals("leave")) {
                        consumer.close(Duration.ofSeconds(10));
                        report("closed");
                        OUT.flush();
                        Runtime.getRuntime().halt(0);
                    } else {
                        report("error", "op", op, "message", "unknown command");
                    }
                } catch (Exception e) {
                    report("error", "op", op, "message", e.getClass().getSimpleName() + ": " + e.getMessage());
                }
            }
            try {
                consumer.poll(Duration.ofMillis(POLL_MS));
                lastError = null;
            } catch (RuntimeException e) {
                // e.g. FencedInstanceIdException: reported once while it repeats, and the loop goes on
                String message = e.getClass().getSimpleName() + ": " + e.getMessage();
                if (!message.equals(lastError)) report("error", "op", "poll", "message", message);
                lastError = message;
                sleepQuietly(10 * POLL_MS);
            }
            if (resumePending) {
                resumePending = false;
                report("resumed", "partitions", partitions(consumer.assignment()), "generation", (long) generation(consumer));
            }
        }
        consumer.close(Duration.ofSeconds(10));
    }

    /** Reports every callback as it runs; {@code groupMetadata()} is legal inside them (the poll thread). */
    private static final class Listener implements ConsumerRebalanceListener {
        private final KafkaConsumer<byte[], byte[]> consumer;

        Listener(KafkaConsumer<byte[], byte[]> consumer) {
            this.consumer = consumer;
        }

        private void say(String what, Collection<TopicPartition> tps) {
            ConsumerGroupMetadata meta = consumer.groupMetadata();
            report(what, "partitions", partitions(tps), "generation", (long) meta.generationId(), "member_id", meta.memberId());
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> tps) {
            say("revoked", tps);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> tps) {
            say("assigned", tps);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> tps) {
            say("lost", tps);
        }
    }

    private static int generation(KafkaConsumer<byte[], byte[]> consumer) {
        try {
            return consumer.groupMetadata().generationId();
        } catch (RuntimeException e) {
            return -1;
        }
    }

    /** Reports {@code target} each time the group's target assignment epoch changes and has caught up
     *  with the group epoch: the epoch, and per member (by client id) its member id, member epoch and target. */
    private static void watchGroup(Admin admin, String group, long everyMs) {
        int last = -1;
        int lastGroup = -1;
        // each member id's last (member epoch, assigned partitions): a change is reported as a "member-state"
        Map<String, List<Object>> states = new HashMap<>();
        while (running) {
            try {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                int groupEpoch = d.groupEpoch().orElse(-1);
                Set<String> present = new HashSet<>();
                for (MemberDescription m : d.members()) {
                    present.add(m.consumerId());
                    long memberEpoch = m.memberEpoch().orElse(-1);
                    List<Object> assigned = partitions(m.assignment().topicPartitions());
                    List<Object> state = List.of(memberEpoch, assigned);
                    if (!state.equals(states.get(m.consumerId()))) {
                        states.put(m.consumerId(), state);
                        report("member-state", "member", m.clientId(), "member_id", m.consumerId(),
                               "member_epoch", memberEpoch, "assigned", assigned,
                               "target", partitions(m.targetAssignment().map(a -> a.topicPartitions()).orElse(Set.of())),
                               "group_epoch", (long) groupEpoch,
                               "target_epoch", (long) d.targetAssignmentEpoch().orElse(-1));
                    }
                }
                for (String gone : new ArrayList<>(states.keySet())) {  // a member id the group no longer has
                    if (!present.contains(gone)) {
                        states.remove(gone);
                        report("member-gone", "member_id", gone, "group_epoch", (long) groupEpoch);
                    }
                }
                if (groupEpoch >= 0 && groupEpoch != lastGroup) {  // who is in the group at each group epoch: join order
                    List<Object> clients = new ArrayList<>();
                    for (MemberDescription m : d.members()) clients.add(m.clientId());
                    Collections.sort((List) clients);
                    report("group-epoch", "epoch", (long) groupEpoch, "members", clients);
                    lastGroup = groupEpoch;
                }
                int epoch = d.targetAssignmentEpoch().orElse(-1);
                // only a description whose group epoch is the target's: its members are the ones the
                // target was computed for (a member that joined since is listed with no target yet)
                if (epoch >= 0 && epoch == d.groupEpoch().orElse(-2) && epoch != last) {
                    Map<String, Object> members = new java.util.TreeMap<>();
                    for (MemberDescription m : d.members()) {
                        Map<String, Object> one = new java.util.TreeMap<>();
                        one.put("member_id", m.consumerId());
                        one.put("member_epoch", (long) m.memberEpoch().orElse(-1));
                        one.put("target", partitions(m.targetAssignment().map(a -> a.topicPartitions()).orElse(Set.of())));
                        members.put(m.clientId(), one);
                    }
                    report("target", "epoch", (long) epoch, "group_epoch", (long) d.groupEpoch().orElse(-1),
                           "members", members);
                    last = epoch;
                }
            } catch (Exception e) {
                // the group does not exist yet, or the broker is going away: look again
            }
            try {
                Thread.sleep(everyMs);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Reports {@code described} each time the admin's description of the group changes: its type
     *  (CLASSIC or CONSUMER), state, group epoch and target assignment epoch (empty while classic: the
     *  classic DescribeGroups answer has no generation), and per member (by client id) its member
     *  epoch, whether it speaks the consumer protocol ({@code upgraded}) and its assignment. A group
     *  that does not exist (it was deleted, or not yet created) is reported as type {@code NONE}. */
    private static void watchType(Admin admin, String group, long everyMs) {
        Map<String, Object> last = null;
        while (running) {
            Map<String, Object> now = new java.util.TreeMap<>();
            try {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                now.put("type", String.valueOf(d.type()));
                now.put("state", String.valueOf(d.groupState()));
                now.put("group_epoch", (long) d.groupEpoch().orElse(-1));
                now.put("target_epoch", (long) d.targetAssignmentEpoch().orElse(-1));
                Map<String, Object> members = new java.util.TreeMap<>();
                for (MemberDescription m : d.members()) {
                    Map<String, Object> one = new java.util.TreeMap<>();
                    one.put("member_epoch", (long) m.memberEpoch().orElse(-1));
                    one.put("upgraded", m.upgraded().map(String::valueOf).orElse("unknown"));
                    one.put("assignment", partitions(m.assignment().topicPartitions()));
                    members.put(m.clientId(), one);
                }
                now.put("members", members);
            } catch (Exception e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                if (!(cause instanceof org.apache.kafka.common.errors.GroupIdNotFoundException)) {
                    now = null;  // the broker is busy or going away: look again, report nothing
                } else {
                    now.put("type", "NONE");
                }
            }
            if (now != null && !now.equals(last)) {
                List<Object> kv = new ArrayList<>();
                for (Map.Entry<String, Object> e : now.entrySet()) {
                    kv.add(e.getKey());
                    kv.add(e.getValue());
                }
                report("described", kv.toArray());
                last = now;
            }
            try {
                Thread.sleep(everyMs);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static List<Object> partitions(Collection<TopicPartition> tps) {
        Set<String> seen = new HashSet<>();
        TreeSet<String> keys = new TreeSet<>();
        Map<String, TopicPartition> byKey = new HashMap<>();
        for (TopicPartition tp : tps) {
            String key = tp.topic() + "\u0000" + String.format("%010d", tp.partition());
            if (seen.add(key)) {
                keys.add(key);
                byKey.put(key, tp);
            }
        }
        List<Object> out = new ArrayList<>();
        for (String key : keys) {
            TopicPartition tp = byKey.get(key);
            out.add(List.of(tp.topic(), (long) tp.partition()));
        }
        return out;
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @SuppressWarnings("unchecked")
    /**
     * Starts a daemon thread running {@code body(group, watch_ms)} (the command's {@code group} and
     * {@code watch_ms}, 100 ms when absent) and reports {@code started} with the group.
     */
    private static void startWatch(Map<String, Object> cmd, String thread, String started,
                                   java.util.function.BiConsumer<String, Long> body) {
        final String group = String.valueOf(cmd.get("group"));
        final long every = cmd.containsKey("watch_ms") ? (Long) cmd.get("watch_ms") : 100L;
        Thread watcher = new Thread(() -> body.accept(group, every), thread);
        watcher.setDaemon(true);
        watcher.start();
        report(started, "group", group);
    }

    /**
     * Waits (up to 15 s) until the broker's metadata shows every topic with its partition count and a
     * leader for each partition: createTopics and createPartitions return once the controller has
     * committed, before the broker serving the group need have applied it, and the history's next
     * step (a member subscribing, the group reading the topics) should find them there.
     */
    private static void awaitTopics(Admin admin, Map<String, Integer> counts) throws Exception {
        long deadline = System.currentTimeMillis() + 15_000;
        while (System.currentTimeMillis() < deadline) {
            boolean ready = true;
            try {
                Map<String, TopicDescription> seen = admin.describeTopics(counts.keySet()).allTopicNames().get();
                for (Map.Entry<String, Integer> e : counts.entrySet()) {
                    TopicDescription d = seen.get(e.getKey());
                    if (d == null || d.partitions().size() < e.getValue()
                            || d.partitions().stream().anyMatch(p -> p.leader() == null)) {
                        ready = false;
                    }
                }
            } catch (java.util.concurrent.ExecutionException unknownYet) {
                ready = false;
            }
            if (ready) return;
            Thread.sleep(50);
        }
    }

    private static Map<String, Object> asMap(Object o) {
        if (!(o instanceof Map)) throw new IllegalArgumentException("expected a JSON object");
        return (Map<String, Object>) o;
    }

    private static List<String> strings(Object o) {
        if (o == null) return Collections.emptyList();
        List<String> out = new ArrayList<>();
        for (Object x : (List<?>) o) out.add(String.valueOf(x));
        return out;
    }

    /** One report line: {"ev": what, "name": ..., "mono_ns": ..., "wall_ms": ..., key, value, ...}. */
    static void report(String what, Object... kv) {
        StringBuilder b = new StringBuilder("{\"ev\":");
        Json.quote(b, what);
        b.append(",\"name\":");
        Json.quote(b, name);
        b.append(",\"mono_ns\":").append(System.nanoTime());
        b.append(",\"wall_ms\":").append(System.currentTimeMillis());
        for (int i = 0; i + 1 < kv.length; i += 2) {
            b.append(',');
            Json.quote(b, String.valueOf(kv[i]));
            b.append(':');
            write(b, kv[i + 1]);
        }
        b.append('}');
        synchronized (WRITE) {
            OUT.println(b);
            OUT.flush();
        }
    }

    private static void write(StringBuilder b, Object v) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof String) {
            Json.quote(b, (String) v);
        } else if (v instanceof Number || v instanceof Boolean) {
            b.append(v);
        } else if (v instanceof Map) {
            b.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (!first) b.append(',');
                first = false;
                Json.quote(b, String.valueOf(e.getKey()));
                b.append(':');
                write(b, e.getValue());
            }
            b.append('}');
        } else if (v instanceof List) {
            b.append('[');
            boolean first = true;
            for (Object x : (List<?>) v) {
                if (!first) b.append(',');
                first = false;
                write(b, x);
            }
            b.append(']');
        } else {
            Json.quote(b, String.valueOf(v));
        }
    }
}
