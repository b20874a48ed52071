package stickyproof.peers.v24;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.RebalanceProtocol;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;

import stickyproof.peers.Assignors;
import stickyproof.peers.KafkaAssignor;

/**
 * kafka-clients 2.4 and later: {@code ConsumerPartitionAssignor} (KIP-429). What
 * {@code ConsumerCoordinator.onLeaderElected} does: each member's bytes through
 * {@code ConsumerProtocol.deserializeSubscription} (v0 to the newest the release reads), the JoinGroup
 * instance id set with {@code setGroupInstanceId}, the subscriptions put into a {@code HashMap} in
 * member order (the JoinGroup response order, which the sticky assignors iterate), then
 * {@code assign(cluster, new GroupSubscription(subscriptions))}.
 */
public final class Assignors24 implements Assignors {
    private static final Map<String, String> CLASSES = new LinkedHashMap<>();
    static {
        CLASSES.put("range", "org.apache.kafka.clients.consumer.RangeAssignor");
        CLASSES.put("roundrobin", "org.apache.kafka.clients.consumer.RoundRobinAssignor");
        CLASSES.put("sticky", "org.apache.kafka.clients.consumer.StickyAssignor");
        CLASSES.put("cooperative-sticky", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
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
            return new Served((ConsumerPartitionAssignor) Class.forName(className).getDeclaredConstructor().newInstance());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(className + ": " + e, e);
        }
    }

    static final class Served implements KafkaAssignor {
        private final ConsumerPartitionAssignor assignor;

        Served(ConsumerPartitionAssignor assignor) {
            this.assignor = assignor;
        }

        @Override
        public String kafkaName() {
            return assignor.name();
        }

        @Override
        public List<String> supportedProtocols() {
            List<String> out = new ArrayList<>();
            for (RebalanceProtocol p : assignor.supportedProtocols()) out.add(p.name().toLowerCase(Locale.ROOT));
            return out;
        }

        @Override
        public Object decode(List<String> memberIds, List<String> instanceIds, List<byte[]> metadata) {
            Map<String, Subscription> out = new HashMap<>();
            for (int i = 0; i < memberIds.size(); i++) {
                Subscription subscription = ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(metadata.get(i)));
                subscription.setGroupInstanceId(Optional.ofNullable(instanceIds.get(i)));
                out.put(memberIds.get(i), subscription);
            }
            return out;
        }

        @Override
        @SuppressWarnings("unchecked")
        public Map<String, List<TopicPartition>> assign(Cluster cluster, Object decoded) {
            Map<String, Assignment> assignments =
                assignor.assign(cluster, new GroupSubscription((Map<String, Subscription>) decoded)).groupAssignment();
            Map<String, List<TopicPartition>> out = new LinkedHashMap<>();
            for (Map.Entry<String, Assignment> e : assignments.entrySet()) out.put(e.getKey(), e.getValue().partitions());
            return out;
        }
    }
}
