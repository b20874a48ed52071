// Command stickyproof-sarama-peer serves one of sarama's BalanceStrategy implementations over
// stickyproof's assignor protocol (models/assignor-protocol.md, assignor/1) in wire mode.
//
// It is built against a published github.com/IBM/sarama module (go.mod here;
// stickyproof.peers.sarama sets the version) and uses only sarama's public API, doing what sarama's
// consumer group does as the group leader (consumerGroup.joinSync and consumerGroup.balance); see
// leaderPlan. The decoding of every member's bytes, the balancing and the encoding of the SyncGroup
// assignments are sarama's own code.
//
// Usage: stickyproof-sarama-peer -strategy range|roundrobin|sticky|cooperative-sticky
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

const protocolVersion = "assignor/1"

// strategies are sarama's built-in strategies by protocol name; cooperative.go adds
// cooperative-sticky where the release has it. Each request gets a new instance, as each
// consumer group has its own (sarama's cooperative-sticky strategy is stateful).
var strategies = map[string]func() sarama.BalanceStrategy{
	"range":      sarama.NewBalanceStrategyRange,
	"roundrobin": sarama.NewBalanceStrategyRoundRobin,
	"sticky":     sarama.NewBalanceStrategySticky,
}

// protocolsOf is the rebalance protocols a strategy takes part in; releases without
// RebalanceProtocolBalanceStrategy only rebalance eagerly.
var protocolsOf = func(sarama.BalanceStrategy) []string { return []string{"eager"} }

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
	ID            int64                     `json:"id"`
	Assignment    map[string]map[string]any `json:"assignment,omitempty"`
	AssignSeconds *float64                  `json:"assign_seconds,omitempty"`
	Error         *failure                  `json:"error,omitempty"`
}

func main() {
	var known []string
	for name := range strategies {
		known = append(known, name)
	}
	sort.Strings(known)
	name := flag.String("strategy", "", "sarama balance strategy: "+strings.Join(known, ", "))
	flag.Parse()
	newStrategy, ok := strategies[*name]
	if !ok {
		fmt.Fprintf(os.Stderr, "stickyproof-sarama-peer: -strategy must be one of %s, got %q\n", strings.Join(known, ", "), *name)
		os.Exit(2)
	}

	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	write := func(v any) {
		line, err := json.Marshal(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "stickyproof-sarama-peer: cannot encode an answer: %v\n", err)
			os.Exit(1)
		}
		out.Write(line)
		out.WriteByte('\n')
		out.Flush()
	}
	write(hello{protocolVersion, "sarama:" + *name, *name, protocolsOf(newStrategy()), []string{"ranges"}, true})

	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			write(serve(newStrategy, line))
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "stickyproof-sarama-peer: reading standard input: %v\n", err)
			os.Exit(1)
		}
	}
}

// serve answers one request line. A request the harness cannot read is answered with an error of
// type "stickyproof.BadRequest" when its id could be read, and ends the process otherwise.
func serve(newStrategy func() sarama.BalanceStrategy, line []byte) answer {
	var req request
	if err := json.Unmarshal(line, &req); err != nil || req.ID == nil {
		fmt.Fprintf(os.Stderr, "stickyproof-sarama-peer: unreadable request (%v): %.200s\n", err, line)
		os.Exit(2)
	}
	id := *req.ID
	join, metadata, err := joinResponse(&req)
	if err != nil {
		return answer{ID: id, Error: &failure{"stickyproof.BadRequest", err.Error()}}
	}
	started := time.Now()
	plan, err := lead(newStrategy(), join, metadata)
	seconds := time.Since(started).Seconds()
	if err != nil {
		kind := fmt.Sprintf("%T", err)
		var p panicked
		if errors.As(err, &p) {
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

type panicked struct{ value any }

func (p panicked) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// lead runs leaderPlan, turning a panic into an error: a panicking strategy is the assignor's
// failure for that group, not a crash of the harness.
func lead(strategy sarama.BalanceStrategy, join *sarama.JoinGroupResponse, metadata map[string]int32) (plan map[string]map[string][]int32, err error) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "panic in sarama's %s strategy: %v\n%s", strategy.Name(), r, debug.Stack())
			plan, err = nil, panicked{r}
		}
	}()
	return leaderPlan(strategy, join, metadata)
}

// leaderPlan does what sarama's consumer group does as the leader between the JoinGroup response
// and the SyncGroup request (consumerGroup.joinSync, consumerGroup.balance, syncGroupRequest):
//
//  1. JoinGroupResponse.GetMembers: sarama's own decoding of every member's
//     ConsumerGroupMemberMetadata bytes into a map by member id (instance ids are not kept; a
//     decoding error fails the rebalance);
//  2. the topics any member subscribes to, and for each the partition ids of the leader's
//     metadata, ascending (client.Partitions); a subscribed topic the metadata lacks fails the
//     rebalance with ErrUnknownTopicOrPartition, as sarama's metadata refresh does when the broker
//     does not create the topic;
//  3. BalanceStrategy.Plan(members, topics) (cooperative-sticky withholds transferring partitions
//     there, adjustCooperativeAssignment);
//  4. each planned member's ConsumerGroupMemberAssignment encoded into the SyncGroup request with
//     AssignmentData's user data, an empty one for every other member, and each read back as the
//     member would (SyncGroupResponse.GetMemberAssignment).
func leaderPlan(strategy sarama.BalanceStrategy, join *sarama.JoinGroupResponse, metadata map[string]int32) (map[string]map[string][]int32, error) {
	members, err := join.GetMembers()
	if err != nil {
		return nil, err
	}

	topics := make(map[string][]int32)
	for _, meta := range members {
		for _, topic := range meta.Topics {
			topics[topic] = nil
		}
	}
	for topic := range topics {
		n, ok := metadata[topic]
		if !ok {
			return nil, fmt.Errorf("topic %s: %w", topic, sarama.ErrUnknownTopicOrPartition)
		}
		partitions := make([]int32, n)
		for p := range partitions {
			partitions[p] = int32(p)
		}
		topics[topic] = partitions
	}

	plan, err := strategy.Plan(members, topics)
	if err != nil {
		return nil, err
	}

	const generation = 1 // AssignmentData's generation: only the user data it writes depends on it
	sync := &sarama.SyncGroupRequest{}
	for memberID, assigned := range plan {
		userData, err := strategy.AssignmentData(memberID, assigned, generation)
		if err != nil {
			return nil, err
		}
		if err := sync.AddGroupAssignmentMember(memberID, &sarama.ConsumerGroupMemberAssignment{Topics: assigned, UserData: userData}); err != nil {
			return nil, err
		}
		delete(members, memberID)
	}
	for memberID := range members {
		if err := sync.AddGroupAssignmentMember(memberID, &sarama.ConsumerGroupMemberAssignment{}); err != nil {
			return nil, err
		}
	}

	out := make(map[string]map[string][]int32, len(sync.GroupAssignments))
	for _, a := range sync.GroupAssignments {
		received, err := (&sarama.SyncGroupResponse{MemberAssignment: a.Assignment}).GetMemberAssignment()
		if err != nil {
			return nil, fmt.Errorf("member %s: sarama wrote an assignment it cannot read back: %w", a.MemberId, err)
		}
		out[a.MemberId] = received.Topics
	}
	return out, nil
}

// joinResponse builds what the broker's JoinGroup response would hand sarama's leader, and the
// leader's metadata (topic -> partition count).
func joinResponse(req *request) (*sarama.JoinGroupResponse, map[string]int32, error) {
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
	join := &sarama.JoinGroupResponse{}
	for i, m := range req.Group.Members {
		encoded, ok := req.Subscriptions[m.ID]
		if !ok {
			return nil, nil, fmt.Errorf("subscriptions: no bytes for group.members[%d] %q (this harness runs in wire mode)", i, m.ID)
		}
		raw, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			return nil, nil, fmt.Errorf("subscriptions.%s: not base64: %v", m.ID, err)
		}
		join.Members = append(join.Members, sarama.GroupMember{MemberId: m.ID, GroupInstanceId: m.InstanceID, Metadata: raw})
	}
	return join, metadata, nil
}

// partitionList keeps sarama's order; a sorted list is sent as inclusive ranges when that is
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
