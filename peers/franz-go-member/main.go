// Command stickyproof-franz-go-member is a franz-go (kgo) consumer driven over a pipe: stickyproof's
// live-member protocol (docs/live.md), the one peers/kafka-member and the Python members speak.
//
// Commands arrive on standard input, one JSON object a line: start, subscribe, stall, leave, crash,
// exit. Reports go to standard output, one JSON object a line, each stamped with CLOCK_MONOTONIC in
// nanoseconds (mono_ns: the clock Java's System.nanoTime and Python's time.monotonic_ns read on
// Linux), so the reports of members of several libraries order on one time line.
//
// kgo runs its group management on goroutines of its own, not inside a poll as the Java consumer
// does. BlockRebalanceOnPoll is what brings it closest: a rebalance's callbacks wait until the poll
// loop allows a rebalance after a poll, so a stalled loop holds the member's part of a rebalance as
// a stalled Java poll does. kgo has no max.poll.interval.ms: a stall with no rebalance leaves the
// member in the group (its heartbeats go on), and a rebalance during the stall waits for it until
// the coordinator's rebalance timeout (set to max_poll_interval_ms) removes it. Generation and member
// id are kgo's Client.GroupMetadata. Only group.protocol=classic is spoken here.
//
// Usage: stickyproof-franz-go-member -mode member
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kgo"
)

// monoNs reads CLOCK_MONOTONIC (1 on Linux). Go's time package keeps a monotonic reading but does not
// expose it as a number on the host's clock, which the other members' reports are stamped with.
func monoNs() int64 {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return time.Now().UnixNano()
	}
	return ts.Nano()
}

var (
	writeMu sync.Mutex
	name    = "?"
)

// report writes one line: {"ev", "name", "mono_ns", "wall_ms", ...fields}.
func report(ev string, fields map[string]any) {
	doc := map[string]any{"ev": ev, "name": name, "mono_ns": monoNs(), "wall_ms": time.Now().UnixMilli()}
	for k, v := range fields {
		doc[k] = v
	}
	line, err := json.Marshal(doc)
	if err != nil {
		line = []byte(fmt.Sprintf(`{"ev":"error","name":%q,"mono_ns":%d,"wall_ms":%d,"message":"unencodable report"}`,
			name, monoNs(), time.Now().UnixMilli()))
	}
	writeMu.Lock()
	os.Stdout.Write(append(line, '\n'))
	writeMu.Unlock()
}

type startCmd struct {
	Op                  string   `json:"op"`
	Name                string   `json:"name"`
	Bootstrap           string   `json:"bootstrap"`
	Group               string   `json:"group"`
	GroupProtocol       string   `json:"group_protocol"`
	Topics              []string `json:"topics"`
	InstanceID          *string  `json:"instance_id"`
	SessionTimeoutMs    int      `json:"session_timeout_ms"`
	MaxPollIntervalMs   int      `json:"max_poll_interval_ms"`
	HeartbeatIntervalMs int      `json:"heartbeat_interval_ms"`
	MetadataMaxAgeMs    int      `json:"metadata_max_age_ms"`
	Assignors           []string `json:"assignors"`
	Ms                  int      `json:"ms"`
}

// balancer maps the protocol names the group matches across libraries to kgo's balancers.
func balancer(protocol string) (kgo.GroupBalancer, error) {
	switch protocol {
	case "range":
		return kgo.RangeBalancer(), nil
	case "roundrobin":
		return kgo.RoundRobinBalancer(), nil
	case "sticky":
		return kgo.StickyBalancer(), nil
	case "cooperative-sticky":
		return kgo.CooperativeStickyBalancer(), nil
	}
	return nil, fmt.Errorf("franz-go has no balancer %q (it has range, roundrobin, sticky, cooperative-sticky)", protocol)
}

// member is the consumer and what its callbacks have been handed (kgo has no accessor for a
// group member's current assignment, so the callbacks keep it).
type member struct {
	cl     *kgo.Client
	mu     sync.Mutex
	owned  map[string]map[int32]bool
	topics []string
}

func pairs(m map[string][]int32) [][]any {
	out := [][]any{}
	for t, ps := range m {
		for _, p := range ps {
			out = append(out, []any{t, p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][0].(string) != out[j][0].(string) {
			return out[i][0].(string) < out[j][0].(string)
		}
		return out[i][1].(int32) < out[j][1].(int32)
	})
	return out
}

func (m *member) say(ev string, cl *kgo.Client, tps map[string][]int32) {
	m.mu.Lock()
	for t, ps := range tps {
		for _, p := range ps {
			if ev == "assigned" {
				if m.owned[t] == nil {
					m.owned[t] = map[int32]bool{}
				}
				m.owned[t][p] = true
			} else {
				delete(m.owned[t], p)
			}
		}
	}
	m.mu.Unlock()
	memberID, generation := cl.GroupMetadata()
	var id any
	if memberID != "" {
		id = memberID
	}
	report(ev, map[string]any{"partitions": pairs(tps), "generation": generation, "member_id": id})
}

func (m *member) assignment() [][]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	tps := map[string][]int32{}
	for t, ps := range m.owned {
		for p := range ps {
			tps[t] = append(tps[t], p)
		}
	}
	return pairs(tps)
}

func open(s startCmd, m *member) (*kgo.Client, error) {
	if s.GroupProtocol != "" && s.GroupProtocol != "classic" {
		return nil, errors.New("the franz-go member speaks only group.protocol=classic")
	}
	names := s.Assignors
	if len(names) == 0 {
		names = []string{"range"}
	}
	var balancers []kgo.GroupBalancer
	for _, n := range names {
		b, err := balancer(n)
		if err != nil {
			return nil, err
		}
		balancers = append(balancers, b)
	}
	ms := func(v, dflt int) time.Duration {
		if v <= 0 {
			v = dflt
		}
		return time.Duration(v) * time.Millisecond
	}
	// kgo refuses a max age below its min age (5 s by default); a live run asks for a few ticks
	maxAge, minAge := ms(s.MetadataMaxAgeMs, 300000), 5*time.Second
	if minAge > maxAge {
		minAge = maxAge
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(s.Bootstrap), kgo.ClientID(s.Name), kgo.ConsumerGroup(s.Group), kgo.ConsumeTopics(s.Topics...),
		kgo.Balancers(balancers...), kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
		kgo.SessionTimeout(ms(s.SessionTimeoutMs, 45000)), kgo.HeartbeatInterval(ms(s.HeartbeatIntervalMs, 3000)),
		kgo.RebalanceTimeout(ms(s.MaxPollIntervalMs, 300000)), kgo.MetadataMaxAge(maxAge), kgo.MetadataMinAge(minAge),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.OnPartitionsAssigned(func(_ context.Context, cl *kgo.Client, tps map[string][]int32) { m.say("assigned", cl, tps) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, cl *kgo.Client, tps map[string][]int32) { m.say("revoked", cl, tps) }),
		kgo.OnPartitionsLost(func(_ context.Context, cl *kgo.Client, tps map[string][]int32) { m.say("lost", cl, tps) }),
	}
	if s.InstanceID != nil && *s.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(*s.InstanceID))
	}
	return kgo.NewClient(opts...)
}

// subscribe changes the subscription to exactly topics: new ones are added, dropped ones purged
// from consuming (kgo then rejoins with the new subscription).
func (m *member) subscribe(topics []string) {
	want := map[string]bool{}
	for _, t := range topics {
		want[t] = true
	}
	var drop []string
	for _, t := range m.topics {
		if !want[t] {
			drop = append(drop, t)
		}
	}
	if len(drop) > 0 {
		m.cl.PurgeTopicsFromConsuming(drop...)
	}
	m.cl.AddConsumeTopics(topics...)
	m.topics = append([]string(nil), topics...)
}

// pollLoop owns the client: commands queued by main run between two polls, as in the Python members.
func pollLoop(s startCmd, commands <-chan startCmd) {
	m := &member{owned: map[string]map[int32]bool{}, topics: append([]string(nil), s.Topics...)}
	cl, err := open(s, m)
	if err != nil {
		report("error", map[string]any{"op": "start", "message": err.Error(), "fatal": true})
		return
	}
	m.cl = cl
	report("started", map[string]any{"topics": s.Topics, "group_protocol": "classic"})
	resumePending := false
	lastError := ""
	for {
	drain:
		for {
			select {
			case cmd := <-commands:
				switch cmd.Op {
				case "subscribe":
					m.subscribe(cmd.Topics)
					report("subscribed", map[string]any{"topics": cmd.Topics})
				case "stall":
					report("stalled", map[string]any{"ms": cmd.Ms})
					time.Sleep(time.Duration(cmd.Ms) * time.Millisecond)
					resumePending = true
				case "leave":
					cl.Close() // leaves the group (a static member's close sends no LeaveGroup); revocation callbacks run
					report("closed", nil)
					os.Exit(0)
				default:
					report("error", map[string]any{"op": cmd.Op, "message": "unknown command"})
				}
			default:
				break drain
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		fetches := cl.PollRecords(ctx, 0)
		cancel()
		message := ""
		fetches.EachError(func(t string, p int32, err error) {
			if message == "" && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				message = fmt.Sprintf("%s[%d]: %v", t, p, err)
			}
		})
		cl.AllowRebalance()
		if message != "" && message != lastError {
			report("error", map[string]any{"op": "poll", "message": message})
		}
		lastError = message
		if resumePending {
			resumePending = false
			_, generation := cl.GroupMetadata()
			report("resumed", map[string]any{"partitions": m.assignment(), "generation": generation})
		}
	}
}

func main() {
	flag.String("mode", "member", "the only mode: a live member")
	flag.Parse()
	commands := make(chan startCmd, 64)
	started := false
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		line := in.Bytes()
		if len(line) == 0 {
			continue
		}
		var cmd startCmd
		if err := json.Unmarshal(line, &cmd); err != nil {
			report("error", map[string]any{"message": "bad command: " + err.Error()})
			continue
		}
		switch cmd.Op {
		case "start":
			if started {
				report("error", map[string]any{"op": "start", "message": "already started"})
				continue
			}
			started = true
			name = cmd.Name
			go pollLoop(cmd, commands)
		case "crash":
			report("crashing", nil)
			os.Exit(3)
		case "exit":
			report("exited", nil)
			os.Exit(0)
		case "admin", "create-topics", "add-partitions", "delete-topic":
			report("error", map[string]any{"op": cmd.Op, "message": "admin commands are the Java member's"})
		default:
			commands <- cmd
		}
	}
	os.Exit(4) // stickyproof is gone: end at once, as a crash
}
