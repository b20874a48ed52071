package stickyproof.peers;

import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;

/**
 * One of Kafka's client assignors as the harness drives it, whatever the kafka-clients release: the
 * assignor interface changed in 2.4 (KIP-429: {@code ConsumerPartitionAssignor}, with its own
 * {@code Subscription}, {@code GroupSubscription} and rebalance protocols), so each side of that change
 * has its implementation (package {@code v24}, package {@code v20}) and the build compiles the one the
 * release has (pom.xml, {@code harness.api}).
 *
 * <p>{@code decode} is the leader's decoding step (Kafka's own {@code ConsumerProtocol}), kept apart
 * from {@code assign} so that a decoding failure and the assignor's own are timed and reported apart.
 */
public interface KafkaAssignor {
    /** The assignor's own {@code name()}. */
    String kafkaName();

    /** Its rebalance protocols, lower case ({@code eager}, {@code cooperative}): {@code eager} only before 2.4. */
    List<String> supportedProtocols();

    /**
     * Each member's subscription bytes through {@code ConsumerProtocol.deserializeSubscription}, in
     * member order, into what {@link #assign} takes. {@code instanceIds} holds each member's JoinGroup
     * instance id (or null); releases whose subscriptions carry one get it set.
     */
    Object decode(List<String> memberIds, List<String> instanceIds, List<byte[]> metadata);

    /** {@code assign} on the decoded subscriptions: each member's partitions, in the assignor's order. */
    Map<String, List<TopicPartition>> assign(Cluster cluster, Object decoded);
}
