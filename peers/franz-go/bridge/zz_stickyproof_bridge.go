// stickyproof harness bridge: copied into franz-go's pkg/kgo by peers/franz-go/build.sh, in a
// temporary build tree only. It is stickyproof's code (not franz-go's) and adds one exported
// function to package kgo so that the harness can drive the group leader's balancing steps, which
// need two unexported names (sortJoinMembers, ConsumerBalancer.partitionRacks).

package kgo

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// StickyproofBalance runs what franz-go's group leader does between the JoinGroup response and
// the SyncGroup request (groupConsumer.balanceGroup), without a client:
//
//  1. pick the balancer by protocol name, as findBalancer does;
//  2. sort the members by instance id, then member id (sortJoinMembers);
//  3. MemberBalancer: franz-go's own decoding of every member's ConsumerMemberMetadata bytes
//     (NewConsumerBalancer, its v1-as-v0 retry and duplicate-member drop included);
//  4. the partition counts of the topics the members are interested in, from the leader's
//     metadata (topics the metadata lacks are left out, as a metadata fetch would);
//  5. KIP-881 rack data as buildPartitionRacks derives it: only when some member sent a rack, the
//     rack of each partition's leader broker (leaderRacks), nil when no partition has one;
//  6. BalanceOrError / Balance (the sticky balancers add AdjustCooperative there);
//  7. IntoSyncAssignment, each member's assignment bytes read back with ParseConsumerSyncAssignment:
//     the plan exactly as it would go to the broker.
func StickyproofBalance(
	protocol string,
	members []kmsg.JoinGroupResponseMember,
	metadata map[string]int32,
	leaderRacks map[string][]string,
) (map[string]map[string][]int32, error) {
	var balancer GroupBalancer
	for _, b := range []GroupBalancer{RangeBalancer(), RoundRobinBalancer(), StickyBalancer(), CooperativeStickyBalancer()} {
		if b.ProtocolName() == protocol {
			balancer = b
		}
	}
	if balancer == nil {
		return nil, fmt.Errorf("franz-go has no balancer named %q", protocol)
	}

	sortJoinMembers(members)
	memberBalancer, interests, err := balancer.MemberBalancer(members)
	if err != nil {
		return nil, fmt.Errorf("unable to create group member balancer: %v", err)
	}

	counts := make(map[string]int32, len(interests))
	for topic := range interests {
		if n, ok := metadata[topic]; ok {
			counts[topic] = n
		}
	}
	if cb, ok := memberBalancer.(*ConsumerBalancer); ok {
		cb.partitionRacks = stickyproofPartitionRacks(cb, counts, leaderRacks)
	}

	var into IntoSyncAssignment
	if withError, ok := memberBalancer.(GroupMemberBalancerOrError); ok {
		if into, err = withError.BalanceOrError(counts); err != nil {
			return nil, err
		}
	} else {
		into = memberBalancer.Balance(counts)
	}
	if into == nil {
		return nil, fmt.Errorf("balancer %s returned a nil plan with no error", protocol)
	}

	plan := make(map[string]map[string][]int32)
	for _, sync := range into.IntoSyncAssignment() {
		parsed, err := ParseConsumerSyncAssignment(sync.MemberAssignment)
		if err != nil {
			return nil, fmt.Errorf("member %s: franz-go wrote an assignment it cannot read back: %v", sync.MemberID, err)
		}
		plan[sync.MemberID] = parsed
	}
	return plan, nil
}

// stickyproofPartitionRacks is buildPartitionRacks' rule over the request's metadata instead of a
// client's: nil unless some member's metadata carries a rack and some partition's leader has one.
func stickyproofPartitionRacks(cb *ConsumerBalancer, counts map[string]int32, leaderRacks map[string][]string) map[string][]string {
	memberRack := false
	for i := range cb.metadatas {
		if cb.metadatas[i].Rack != nil {
			memberRack = true
			break
		}
	}
	if !memberRack {
		return nil
	}
	racks := make(map[string][]string, len(counts))
	any := false
	for topic, n := range counts {
		perPartition := make([]string, n)
		for p, rack := range leaderRacks[topic] {
			if p < int(n) {
				perPartition[p] = rack
				any = any || rack != ""
			}
		}
		racks[topic] = perPartition
	}
	if !any {
		return nil
	}
	return racks
}
