// Command stickyproof-franz-go-peer serves one of franz-go's group balancers over stickyproof's
// assignor protocol (models/assignor-protocol.md, assignor/1) in wire mode.
//
// It is built against a published franz-go module (go.mod here; stickyproof.peers.franz_go sets
// the version) and drives the balancers only through kgo's public API, the way franz-go's group
// leader (groupConsumer.balanceGroup) drives them between the JoinGroup response and the SyncGroup
// request; see leaderBalance. The balancing itself and the decoding of every member's bytes are
// franz-go's own code.
//
// Each request's raw ConsumerProtocolSubscription bytes become JoinGroup response members (member
// id, instance id, metadata) in the request's order. The decoded group of the request is used only
// for the leader's metadata (partition counts) and for the member ids and instance ids a JoinGroup
// response carries.
//
// Usage: stickyproof-franz-go-peer -balancer sticky|cooperative-sticky|range|roundrobin
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const protocolVersion = "assignor/1"

var balancers = []string{"sticky", "cooperative-sticky", "range", "roundrobin"}

type hello struct {
	Stickyproof        string   `json:"stickyproof"`
	Name               string   `json:"name"`
	KafkaName          string   `json:"kafka_name"`
	SupportedProtocols []string `json:"supported_protocols"`
	Accepts            []string `json:"accepts"`
	Wire               bool     `json:"wire"`
}

type request struct {
	ID    *int64 `json:"id"`
	Group struct {
		Topics  map[string]json.RawMessage `json:"topics"`
		Members []struct {
			ID         string  `json:"id"`
			InstanceID *string `json:"instance_id"`
		} `json:"members"`
	} `json:"group"`
	Subscriptions map[string]string `json:"subscriptions"`
}

type topicDoc struct {
	Partitions int32 `json:"partitions"`
}

type failure struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type answer struct {
	ID            int64                      `json:"id"`
	Assignment    map[string]map[string]any `json:"assignment,omitempty"`
	AssignSeconds *float64                   `json:"assign_seconds,omitempty"`
	Error         *failure                   `json:"error,omitempty"`
}

func main() {
	name := flag.String("balancer", "", "franz-go balancer: "+strings.Join(balancers, ", "))
	flag.Parse()
	known := false
	for _, b := range balancers {
		known = known || b == *name
	}
	if !known {
		fmt.Fprintf(os.Stderr, "stickyproof-franz-go-peer: -balancer must be one of %s, got %q\n", strings.Join(balancers, ", "), *name)
		os.Exit(2)
	}
	protocols := []string{"eager"}
	if *name == "cooperative-sticky" {
		// franz-go runs its cooperative-sticky balancer only in cooperative groups (IsCooperative).
		protocols = []string{"cooperative"}
	}

	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	write := func(v any) {
		line, err := json.Marshal(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "stickyproof-franz-go-peer: cannot encode an answer: %v\n", err)
			os.Exit(1)
		}
		out.Write(line)
		out.WriteByte('\n')
		out.Flush()
	}
	write(hello{protocolVersion, "franz-go:" + *name, *name, protocols, []string{"ranges"}, true})

	timing := os.Getenv("STICKYPROOF_PEER_TIMING") == "1"
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			started := time.Now()
			a := serve(*name, line)
			served := time.Now()
			write(a)
			if timing {
				// STICKYPROOF_PEER_TIMING=1: where each request's time went, on standard error.
				assign := 0.0
				if a.AssignSeconds != nil {
					assign = *a.AssignSeconds
				}
				fmt.Fprintf(os.Stderr, "timing id=%d request+decode+balance=%.1fms (balance %.1fms) answer=%.1fms\n",
					a.ID, served.Sub(started).Seconds()*1e3, assign*1e3, time.Since(served).Seconds()*1e3)
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "stickyproof-franz-go-peer: reading standard input: %v\n", err)
			os.Exit(1)
		}
	}
}

// serve answers one request line. A request the harness cannot read is answered with an error of
// type "stickyproof.BadRequest" when its id could be read, and ends the process otherwise.
func serve(balancer string, line []byte) answer {
	var req request
	if err := json.Unmarshal(line, &req); err != nil || req.ID == nil {
		fmt.Fprintf(os.Stderr, "stickyproof-franz-go-peer: unreadable request (%v): %.200s\n", err, line)
		os.Exit(2)
	}
	id := *req.ID
	members, metadata, err := joinMembers(&req)
	if err != nil {
		return answer{ID: id, Error: &failure{"stickyproof.BadRequest", err.Error()}}
	}
	started := time.Now()
	plan, err := balance(balancer, members, metadata)
	seconds := time.Since(started).Seconds()
	if err != nil {
		kind := "error"
		if strings.HasPrefix(err.Error(), "panic: ") {
			kind = "panic"
		}
		return answer{ID: id, Error: &failure{kind, err.Error()}}
	}
	assignment := make(map[string]map[string]any, len(plan))
	for member, topics := range plan {
		mine := make(map[string]any, len(topics))
		for topic, partitions := range topics {
			mine[topic] = partitionList(partitions)
		}
		assignment[member] = mine
	}
	return answer{ID: id, Assignment: assignment, AssignSeconds: &seconds}
}

// balance calls franz-go, turning a panic into an error: a panicking balancer is the assignor's
// failure for that group, not a crash of the harness.
func balance(balancer string, members []kmsg.JoinGroupResponseMember, metadata map[string]int32) (plan map[string]map[string][]int32, err error) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "panic in franz-go's %s balancer: %v\n%s", balancer, r, debug.Stack())
			plan, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return leaderBalance(balancer, members, metadata)
}

// balanceOrError is kgo.GroupMemberBalancerOrError, named here so that releases before that
// interface existed still build (their member balancers simply do not implement it).
type balanceOrError interface {
	BalanceOrError(topics map[string]int32) (kgo.IntoSyncAssignment, error)
}

// leaderBalance does what franz-go's group leader (groupConsumer.balanceGroup) does between the
// JoinGroup response and the SyncGroup request, through kgo's public API, for a client with the
// default configuration:
//
//  1. pick the balancer by protocol name among the four built-in ones (findBalancer);
//  2. sort the members by instance id, then member id (sortJoinMembers; re-stated in
//     joinMemberLess below, since kgo does not export it);
//  3. GroupBalancer.MemberBalancer: franz-go's own decoding of every member's
//     ConsumerMemberMetadata bytes with kmsg (NewConsumerBalancer: its retry of a short v1 as v0
//     and, in releases that have it, its drop of a duplicated member id);
//  4. the partition counts of the topics the members are interested in, from the leader's
//     metadata; a topic the metadata lacks is left out, as franz-go's metadata fetch skips a topic
//     answered with an error;
//  5. BalanceOrError (or Balance): the sticky balancers' AdjustCooperative runs there for
//     cooperative-sticky;
//  6. IntoSyncAssignment, each member's assignment bytes read back with
//     ParseConsumerSyncAssignment: the plan exactly as it would go to the broker.
//
// Not reproduced: KIP-881 rack-aware balancing, which franz-go applies only under the BalanceRacks
// option (off by default) through fields kgo does not export; KIP-814 SkipAssignment (the built-in
// balancers always balance); logging.
func leaderBalance(protocol string, members []kmsg.JoinGroupResponseMember, metadata map[string]int32) (map[string]map[string][]int32, error) {
	var balancer kgo.GroupBalancer
	for _, b := range []kgo.GroupBalancer{kgo.RangeBalancer(), kgo.RoundRobinBalancer(), kgo.StickyBalancer(), kgo.CooperativeStickyBalancer()} {
		if b.ProtocolName() == protocol {
			balancer = b
		}
	}
	if balancer == nil {
		return nil, fmt.Errorf("franz-go has no balancer named %q", protocol)
	}

	sort.Slice(members, func(i, j int) bool { return joinMemberLess(&members[i], &members[j]) })
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

	var into kgo.IntoSyncAssignment
	if withError, ok := memberBalancer.(balanceOrError); ok {
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
		parsed, err := kgo.ParseConsumerSyncAssignment(sync.MemberAssignment)
		if err != nil {
			return nil, fmt.Errorf("member %s: franz-go wrote an assignment it cannot read back: %v", sync.MemberID, err)
		}
		plan[sync.MemberID] = parsed
	}
	return plan, nil
}

// joinMemberLess is franz-go's order of JoinGroup members before balancing (group_balancer.go):
// members with an instance id first, by instance id, then the others by member id.
func joinMemberLess(l, r *kmsg.JoinGroupResponseMember) bool {
	if l.InstanceID != nil {
		if r.InstanceID == nil {
			return true
		}
		return *l.InstanceID < *r.InstanceID
	}
	if r.InstanceID != nil {
		return false
	}
	return l.MemberID < r.MemberID
}

// joinMembers builds what the broker's JoinGroup response would hand franz-go's leader, and the
// leader's metadata (topic -> partition count).
func joinMembers(req *request) ([]kmsg.JoinGroupResponseMember, map[string]int32, error) {
	metadata := make(map[string]int32, len(req.Group.Topics))
	for topic, raw := range req.Group.Topics {
		var doc topicDoc
		if err := json.Unmarshal(raw, &doc.Partitions); err != nil {
			if err := json.Unmarshal(raw, &doc); err != nil {
				return nil, nil, fmt.Errorf("group.topics.%s: %v", topic, err)
			}
		}
		metadata[topic] = doc.Partitions
	}
	members := make([]kmsg.JoinGroupResponseMember, 0, len(req.Group.Members))
	for i, m := range req.Group.Members {
		encoded, ok := req.Subscriptions[m.ID]
		if !ok {
			return nil, nil, fmt.Errorf("subscriptions: no bytes for group.members[%d] %q (this harness runs in wire mode)", i, m.ID)
		}
		raw, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			return nil, nil, fmt.Errorf("subscriptions.%s: not base64: %v", m.ID, err)
		}
		member := kmsg.NewJoinGroupResponseMember()
		member.MemberID = m.ID
		member.InstanceID = m.InstanceID
		member.ProtocolMetadata = raw
		members = append(members, member)
	}
	return members, metadata, nil
}

// partitionList keeps franz-go's order; a sorted list is sent as inclusive ranges when that is
// shorter (models/assignor-protocol.md §4).
func partitionList(partitions []int32) any {
	if !sort.SliceIsSorted(partitions, func(i, j int) bool { return partitions[i] < partitions[j] }) {
		return partitions
	}
	var ranges [][2]int32
	for i, p := range partitions {
		if i > 0 && p == partitions[i-1]+1 {
			ranges[len(ranges)-1][1] = p
		} else {
			ranges = append(ranges, [2]int32{p, p})
		}
	}
	if 2*len(ranges) < len(partitions) {
		return map[string][][2]int32{"ranges": ranges}
	}
	return partitions
}
