// Command stickyproof-franz-go-peer serves one of franz-go's group balancers over stickyproof's
// assignor protocol (models/assignor-protocol.md, assignor/1) in wire mode.
//
// peers/franz-go/build.sh places this file inside a temporary copy of a franz-go checkout, beside
// a small bridge added to package kgo (zz_stickyproof_bridge.go), and builds it there: the balancers
// and the leader's decoding are franz-go's own, compiled from that checkout.
//
// Each request's raw ConsumerProtocolSubscription bytes become JoinGroup response members (member
// id, instance id, metadata) in the request's order, and kgo.StickyproofBalance runs franz-go's
// leader steps on them. The decoded group of the request is used only for the leader's metadata
// (partition counts, and each partition's first replica rack as its leader's rack) and for the
// member ids and instance ids a JoinGroup response carries.
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
	Partitions int32      `json:"partitions"`
	Racks      [][]string `json:"racks"`
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
	members, metadata, racks, err := joinMembers(&req)
	if err != nil {
		return answer{ID: id, Error: &failure{"stickyproof.BadRequest", err.Error()}}
	}
	started := time.Now()
	plan, err := balance(balancer, members, metadata, racks)
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
func balance(balancer string, members []kmsg.JoinGroupResponseMember, metadata map[string]int32, racks map[string][]string) (plan map[string]map[string][]int32, err error) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "panic in franz-go's %s balancer: %v\n%s", balancer, r, debug.Stack())
			plan, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return kgo.StickyproofBalance(balancer, members, metadata, racks)
}

// joinMembers builds what the broker's JoinGroup response would hand franz-go's leader.
func joinMembers(req *request) ([]kmsg.JoinGroupResponseMember, map[string]int32, map[string][]string, error) {
	metadata := make(map[string]int32, len(req.Group.Topics))
	racks := make(map[string][]string)
	for topic, raw := range req.Group.Topics {
		var doc topicDoc
		if err := json.Unmarshal(raw, &doc.Partitions); err != nil {
			if err := json.Unmarshal(raw, &doc); err != nil {
				return nil, nil, nil, fmt.Errorf("group.topics.%s: %v", topic, err)
			}
		}
		metadata[topic] = doc.Partitions
		if doc.Racks != nil {
			leaders := make([]string, len(doc.Racks))
			for p, replicas := range doc.Racks {
				if len(replicas) > 0 {
					leaders[p] = replicas[0]
				}
			}
			racks[topic] = leaders
		}
	}
	members := make([]kmsg.JoinGroupResponseMember, 0, len(req.Group.Members))
	for i, m := range req.Group.Members {
		encoded, ok := req.Subscriptions[m.ID]
		if !ok {
			return nil, nil, nil, fmt.Errorf("subscriptions: no bytes for group.members[%d] %q (this harness runs in wire mode)", i, m.ID)
		}
		raw, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("subscriptions.%s: not base64: %v", m.ID, err)
		}
		member := kmsg.NewJoinGroupResponseMember()
		member.MemberID = m.ID
		member.InstanceID = m.InstanceID
		member.ProtocolMetadata = raw
		members = append(members, member)
	}
	return members, metadata, racks, nil
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
