// Command stickyproof-kafka-go-peer serves one of segmentio/kafka-go's GroupBalancers over
// stickyproof's assignor protocol (models/assignor-protocol.md, assignor/1) in wire mode.
//
// It does for each request what kafka-go's group leader does in ConsumerGroup.assignTopicPartitions
// (consumergroup.go), with kafka-go's own balancers (RangeGroupBalancer, RoundRobinGroupBalancer,
// RackAffinityGroupBalancer) compiled from the module version the build pins:
//
//   - each member's raw ConsumerProtocolSubscription bytes are read as makeMemberProtocolMetadata
//     reads them (groupMetadata.readFrom: version, topics, user data), failing the rebalance when
//     the read fails or leaves bytes unread, with kafka-go's message. That reader is unexported, so
//     metadata.go reproduces it (and the readers it calls) line for line;
//   - the topic list is extractTopics (the members' topics, each once, sorted), and the partitions
//     are what Conn.ReadPartitions returns for them from the request's metadata: partitions in
//     ascending order with the leader's broker rack (the first rack listed for the partition), and,
//     as readTopicMetadata does on a connection without a topic, no partitions at all when one
//     of the topics is missing (the broker's UNKNOWN_TOPIC_OR_PARTITION, which the leader ignores);
//   - balancer.AssignGroups(members, partitions) runs, timed, and its GroupMemberAssignments is the
//     answer, in the balancer's order.
//
// Which bytes the leader reads is the group's makeup (-members):
//
//   - kafka-go (the default): a group of kafka-go clients. Each member's metadata is what a kafka-go
//     member writes in makeJoinGroupRequest: groupMetadata version 1, its topics (those its
//     ConsumerProtocolSubscription bytes name), and its balancer's UserData() (none for range and
//     roundrobin; for rack-affinity, RackAffinityGroupBalancer{Rack: the member's rack}'s rack);
//     kafka-go writes no owned partitions;
//   - java: a kafka-go leader among Java members (range and roundrobin, the protocol names both
//     clients share): the leader reads each member's ConsumerProtocolSubscription bytes exactly as
//     the Java member of that version sent them.
//
// Usage: stickyproof-kafka-go-peer -balancer range|roundrobin|rack-affinity [-members kafka-go|java]
package main

import (
	"bufio"
	"bytes"
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

	kafka "github.com/segmentio/kafka-go"
)

const protocolVersion = "assignor/1"

// balancers are kafka-go's GroupBalancers by the protocol name each registers under. A leader
// needs no Rack of its own: RackAffinityGroupBalancer reads the members' racks from their user data.
var balancers = map[string]kafka.GroupBalancer{
	"range":         kafka.RangeGroupBalancer{},
	"roundrobin":    kafka.RoundRobinGroupBalancer{},
	"rack-affinity": kafka.RackAffinityGroupBalancer{},
}

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
			ID   string  `json:"id"`
			Rack *string `json:"rack"`
		} `json:"members"`
	} `json:"group"`
	Subscriptions map[string]string `json:"subscriptions"`
}

type topicDoc struct {
	Partitions int        `json:"partitions"`
	Racks      [][]string `json:"racks"`
}

type failure struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type answer struct {
	ID            int64                      `json:"id"`
	Assignment    *map[string]map[string]any `json:"assignment,omitempty"` // a pointer: an empty plan is still sent
	AssignSeconds *float64                   `json:"assign_seconds,omitempty"`
	Error         *failure                   `json:"error,omitempty"`
}

func main() {
	name := flag.String("balancer", "", "kafka-go balancer: range, roundrobin, rack-affinity")
	makeup := flag.String("members", "kafka-go", "whose bytes the members send: kafka-go or java")
	flag.Parse()
	balancer, ok := balancers[*name]
	if !ok {
		fmt.Fprintf(os.Stderr, "stickyproof-kafka-go-peer: -balancer must be range, roundrobin or rack-affinity, got %q\n", *name)
		os.Exit(2)
	}
	display := "kafka-go:" + *name
	switch {
	case *makeup == "java" && *name != "rack-affinity":
		display += "+java"
	case *makeup != "kafka-go":
		fmt.Fprintf(os.Stderr, "stickyproof-kafka-go-peer: -members must be kafka-go, or java for range and roundrobin, got %q\n", *makeup)
		os.Exit(2)
	}
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	write := func(v any) {
		line, err := json.Marshal(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "stickyproof-kafka-go-peer: cannot encode an answer: %v\n", err)
			os.Exit(1)
		}
		out.Write(line)
		out.WriteByte('\n')
		out.Flush()
	}
	// kafka-go has no cooperative rebalancing: every balancer runs in eager groups.
	write(hello{protocolVersion, display, balancer.ProtocolName(), []string{"eager"}, []string{"ranges"}, true})

	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			write(serve(balancer, *makeup == "kafka-go", line))
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "stickyproof-kafka-go-peer: reading standard input: %v\n", err)
			os.Exit(1)
		}
	}
}

// serve answers one request line: a request the harness cannot use is a "stickyproof.BadRequest"
// answer when its id could be read, and ends the process (status 2) otherwise.
func serve(balancer kafka.GroupBalancer, kafkaGoMembers bool, line []byte) answer {
	var req request
	if err := json.Unmarshal(line, &req); err != nil || req.ID == nil {
		fmt.Fprintf(os.Stderr, "stickyproof-kafka-go-peer: unreadable request (%v): %.200s\n", err, line)
		os.Exit(2)
	}
	id := *req.ID
	joined, metadata, err := joinResponse(&req, balancer, kafkaGoMembers)
	if err != nil {
		return answer{ID: id, Error: &failure{"stickyproof.BadRequest", err.Error()}}
	}
	started := time.Now()
	plan, err := lead(balancer, joined, metadata)
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
	return answer{ID: id, Assignment: &assignment, AssignSeconds: &seconds}
}

// lead is ConsumerGroup.assignTopicPartitions after the balancer was found by the group's
// protocol name; a panic of the balancer is its failure on that group, not the harness's.
func lead(balancer kafka.GroupBalancer, joined []joinedMember, metadata cluster) (plan kafka.GroupMemberAssignments, err error) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "panic in kafka-go's %s balancer: %v\n%s", balancer.ProtocolName(), r, debug.Stack())
			plan, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	members, err := makeMemberProtocolMetadata(joined)
	if err != nil {
		return nil, err
	}
	topics := extractTopics(members)
	partitions := metadata.readPartitions(topics...)
	return balancer.AssignGroups(members, partitions), nil
}

// joinedMember is one member of a JoinGroup response as kafka-go's joinGroupResponseMember holds it.
type joinedMember struct {
	MemberID       string
	MemberMetadata []byte
}

// joinResponse builds what the broker's JoinGroup response would hand kafka-go's leader, and the
// leader's metadata. With kafkaGoMembers each member's bytes are the ones a kafka-go member with
// this balancer writes in makeJoinGroupRequest (groupMetadata version 1, the topics its Java bytes
// name, its balancer's UserData(): a RackAffinityGroupBalancer's Rack is the member's rack, the
// v3 field of its subscription); otherwise they are the Java member's bytes as they came.
func joinResponse(req *request, balancer kafka.GroupBalancer, kafkaGoMembers bool) ([]joinedMember, cluster, error) {
	metadata := cluster{}
	for topic, raw := range req.Group.Topics {
		var doc topicDoc
		if err := json.Unmarshal(raw, &doc.Partitions); err != nil {
			if err := json.Unmarshal(raw, &doc); err != nil {
				return nil, nil, fmt.Errorf("group.topics.%s: %v", topic, err)
			}
		}
		leaders := make([]string, doc.Partitions)
		for p := range leaders {
			if p < len(doc.Racks) && len(doc.Racks[p]) > 0 {
				leaders[p] = doc.Racks[p][0]
			}
		}
		metadata[topic] = leaders
	}
	joined := make([]joinedMember, 0, len(req.Group.Members))
	for i, m := range req.Group.Members {
		encoded, ok := req.Subscriptions[m.ID]
		if !ok {
			return nil, nil, fmt.Errorf("subscriptions: no bytes for group.members[%d] %q (this harness runs in wire mode)", i, m.ID)
		}
		raw, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			return nil, nil, fmt.Errorf("subscriptions.%s: not base64: %v", m.ID, err)
		}
		if kafkaGoMembers {
			// the member's topics, read from its bytes (every ConsumerProtocolSubscription version
			// starts with kafka-go's layout); a member whose bytes do not even hold that is garbage
			metadata := groupMetadata{}
			if _, err := metadata.readFrom(bufio.NewReader(bytes.NewReader(raw)), len(raw)); err != nil {
				return nil, nil, fmt.Errorf("subscriptions.%s: no topic list in its bytes: %v", m.ID, err)
			}
			userData, err := balancer.UserData()
			if err != nil {
				return nil, nil, fmt.Errorf("%s: UserData: %v", balancer.ProtocolName(), err)
			}
			if _, rackAffinity := balancer.(kafka.RackAffinityGroupBalancer); rackAffinity && m.Rack != nil {
				userData, _ = kafka.RackAffinityGroupBalancer{Rack: *m.Rack}.UserData()
			}
			raw = encodeGroupMetadata(1, metadata.Topics, userData)
		}
		joined = append(joined, joinedMember{m.ID, raw})
	}
	return joined, metadata, nil
}

// extractTopics is kafka-go's (reader.go): every member's topics, each once, sorted.
func extractTopics(members []kafka.GroupMember) []string {
	visited := map[string]struct{}{}
	var topics []string
	for _, member := range members {
		for _, topic := range member.Topics {
			if _, seen := visited[topic]; seen {
				continue
			}
			topics = append(topics, topic)
			visited[topic] = struct{}{}
		}
	}
	sort.Strings(topics)
	return topics
}

// cluster is the leader's metadata: topic -> the rack of each partition's leader ("" for none).
type cluster map[string][]string

// readPartitions is what Conn.ReadPartitions returns on the coordinator connection (a Conn with
// no topic of its own) for these topics: the first topic the brokers do not know makes
// readTopicMetadata return UnknownTopicOrPartition and no partitions at all, which
// assignTopicPartitions ignores (the group is assigned nothing). Brokers list a topic's
// partitions in ascending order.
func (c cluster) readPartitions(topics ...string) []kafka.Partition {
	var partitions []kafka.Partition
	for _, topic := range topics {
		leaders, ok := c[topic]
		if !ok {
			return nil
		}
		for id, rack := range leaders {
			partitions = append(partitions, kafka.Partition{Topic: topic, ID: id, Leader: kafka.Broker{Rack: rack}})
		}
	}
	return partitions
}

// partitionList keeps kafka-go's order; a sorted list is sent as inclusive ranges when that is
// shorter (models/assignor-protocol.md §4).
func partitionList(partitions []int) any {
	if partitions == nil {
		return []int{}
	}
	for i := 1; i < len(partitions); i++ {
		if partitions[i] <= partitions[i-1] {
			return partitions // not strictly increasing: kept as given
		}
	}
	var ranges [][2]int
	for i, p := range partitions {
		if i > 0 && p == partitions[i-1]+1 {
			ranges[len(ranges)-1][1] = p
		} else {
			ranges = append(ranges, [2]int{p, p})
		}
	}
	if 2*len(ranges)+2 < len(partitions) {
		return map[string][][2]int{"ranges": ranges}
	}
	return partitions
}
