package stickyproof.peers.v20;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.clients.consumer.internals.PartitionAssignor;
import org.apache.kafka.clients.consumer.internals.PartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.internals.PartitionAssignor.Subscription;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;

import stickyproof.peers.Assignors;
import stickyproof.peers.KafkaAssignor;

/**
 * kafka-clients before 2.4: the internal {@code PartitionAssignor} interface. What the leader's
 * {@code ConsumerCoordinator.performAssignment} does there: each member's bytes through
 * {@code ConsumerProtocol.deserializeSubscription} (which reads the v0 fields, topics and user data, of
 * any version: these releases know no owned partitions), into a {@code HashMap} in member order, then
 * {@code assign(cluster, subscriptions)}. A subscription carries no instance id before 2.4, and every
 * assignor runs the eager protocol (there is no other); {@code CooperativeStickyAssignor} does not exist.
 */
public final class Assignors20 implements Assignors {
    private static final Map<String, String> CLASSES = new LinkedHashMap<>();
    static {
        CLASSES.put("range", "org.apache.kafka.clients.consumer.RangeAssignor");
        CLASSES.put("roundrobin", "org.apache.kafka.clients.consumer.RoundRobinAssignor");
        CLASSES.put("sticky", "org.apache.kafka.clients.consumer.StickyAssignor");
    }

    @Override
    public List<String> names() {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, String> e : CLASSES.entrySet())
            if (Assignors.present(e.getValue())) out.add(e.getKey());
        return out;
    }

    @Override
    public KafkaAssignor create(String name) {
        String className = CLASSES.get(name);
        if (className == null || !Assignors.present(className)) return null;
        try {
            return new Served((PartitionAssignor) Class.forName(className).getDeclaredConstructor().newInstance());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(className + ": " + e, e);
        }
    }

    static final class Served implements KafkaAssignor {
        private final PartitionAssignor assignor;

        Served(PartitionAssignor assignor) {
            this.assignor = assignor;
        }

        @Override
        public String kafkaName() {
            return assignor.name();
        }

        @Override
        public List<String> supportedProtocols() {
            return Collections.singletonList("eager");
        }

        @Override
        public Object decode(List<String> memberIds, List<String> instanceIds, List<byte[]> metadata) {
            Map<String, Subscription> out = new HashMap<>();
            for (int i = 0; i < memberIds.size(); i++)
                out.put(memberIds.get(i), ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(metadata.get(i))));
            return out;
        }

        @Override
        @SuppressWarnings("unchecked")
        public Map<String, List<TopicPartition>> assign(Cluster cluster, Object decoded) {
            Map<String, Assignment> assignments = assignor.assign(cluster, (Map<String, Subscription>) decoded);
            Map<String, List<TopicPartition>> out = new LinkedHashMap<>();
            for (Map.Entry<String, Assignment> e : assignments.entrySet()) out.put(e.getKey(), e.getValue().partitions());
            return out;
        }
    }
}
