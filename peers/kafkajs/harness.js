#!/usr/bin/env node
// stickyproof's harness around KafkaJS's RoundRobinAssigner: stickyproof's assignor protocol
// (models/assignor-protocol.md, assignor/1) in wire mode, on standard input and output.
//
// For each request it does what KafkaJS's ConsumerGroup does when it is the group's leader
// (src/consumer/consumerGroup.js, [PRIVATE.JOIN] then [PRIVATE.SYNC]), with KafkaJS's own code:
//
//   * the group is a group of KafkaJS consumers: each member's JoinGroup metadata is what its
//     assigner's protocol({ topics }) writes (AssignerProtocol.MemberMetadata.encode, version 0),
//     for the topics its ConsumerProtocolSubscription bytes name, read with KafkaJS's
//     MemberMetadata.decode (every version of those bytes starts with that layout);
//   * the leader is the request's first member (the first to join, which the coordinator makes the
//     leader); its topicsSubscribed, the topics it hands the assigner, are its own subscription,
//     read back from its metadata with MemberMetadata.decode;
//   * cluster.refreshMetadata() loads the metadata of those topics: a topic the brokers do not know
//     fails it as KafkaJS's metadata response parser fails (UNKNOWN_TOPIC_OR_PARTITION);
//   * the assigner is created as the consumer creates it (roundRobin({ groupId, logger, cluster }))
//     and called as the leader calls it: assign({ members, topics: topicsSubscribed }), the
//     members being the JoinGroup response's ({ memberId, groupInstanceId, memberMetadata });
//   * each member's MemberAssignment bytes are read with MemberAssignment.decode, as the member
//     reads its SyncGroup answer; a member the assigner gave nothing gets nothing.
//
// Usage: node harness.js roundrobin
'use strict'

const readline = require('readline')
const { AssignerProtocol, PartitionAssigners } = require('kafkajs')
const { createErrorFromCode } = require('kafkajs/src/protocol/error')

const { MemberMetadata, MemberAssignment } = AssignerProtocol
const UNKNOWN_TOPIC_OR_PARTITION = 3
const ASSIGNERS = { roundrobin: PartitionAssigners.roundRobin }

const which = process.argv[2]
if (!Object.prototype.hasOwnProperty.call(ASSIGNERS, which)) {
  process.stderr.write(`stickyproof-kafkajs-peer: the assigner must be one of ${Object.keys(ASSIGNERS).join(', ')}, got ${JSON.stringify(which)}\n`)
  process.exit(2)
}

class BadRequest extends Error {}

// The leader's view of the cluster, as KafkaJS's Cluster answers the assigner.
function clusterOf(topicsDoc) {
  const partitions = new Map()
  for (const [topic, doc] of Object.entries(topicsDoc || {})) {
    const count = typeof doc === 'number' ? doc : doc && doc.partitions
    if (!Number.isInteger(count) || count < 0) throw new BadRequest(`group.topics.${topic}: not a partition count`)
    // brokers list a topic's partitions in ascending order
    partitions.set(topic, Array.from({ length: count }, (_, id) => ({ partitionErrorCode: 0, partitionId: id, leader: 0 })))
  }
  return {
    known: topic => partitions.has(topic),
    async refreshMetadata(topics) {
      for (const topic of topics) {
        if (!partitions.has(topic)) throw createErrorFromCode(UNKNOWN_TOPIC_OR_PARTITION)
      }
    },
    findTopicPartitionMetadata(topic) {
      return partitions.get(topic) || []
    },
  }
}

const silent = { debug() {}, info() {}, warn() {}, error() {}, namespace() { return silent } }
const proto = ASSIGNERS[which]({ groupId: 'stickyproof', logger: silent, cluster: clusterOf({}) })

async function serve(request) {
  const group = request.group
  if (!group || !Array.isArray(group.members)) throw new BadRequest('group.members: missing')
  const subscriptions = request.subscriptions || {}
  const cluster = clusterOf(group.topics)
  const assigner = ASSIGNERS[which]({ groupId: 'stickyproof', logger: silent, cluster })
  const members = group.members.map((m, i) => {
    const encoded = subscriptions[m.id]
    if (typeof encoded !== 'string') {
      throw new BadRequest(`subscriptions: no bytes for group.members[${i}] ${JSON.stringify(m.id)} (this harness runs in wire mode)`)
    }
    const { topics } = MemberMetadata.decode(Buffer.from(encoded, 'base64'))
    return { memberId: m.id, groupInstanceId: m.instance_id == null ? null : m.instance_id, memberMetadata: assigner.protocol({ topics }).metadata }
  })
  if (members.length === 0) return { assignment: {}, seconds: 0 }
  const topicsSubscribed = MemberMetadata.decode(members[0].memberMetadata).topics
  const started = process.hrtime.bigint()
  await cluster.refreshMetadata(topicsSubscribed)
  const groupAssignment = await assigner.assign({ members, topics: topicsSubscribed })
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  const assignment = {}
  for (const { memberId, memberAssignment } of groupAssignment) {
    const decoded = MemberAssignment.decode(memberAssignment)
    assignment[memberId] = {}
    for (const [topic, partitions] of Object.entries(decoded ? decoded.assignment : {})) {
      assignment[memberId][topic] = partitions
    }
  }
  return { assignment, seconds }
}

function write(doc) {
  process.stdout.write(JSON.stringify(doc) + '\n')
}

write({
  stickyproof: 'assignor/1',
  name: `kafkajs:${which}`,
  kafka_name: proto.name,
  supported_protocols: ['eager'], // KafkaJS rebalances eagerly only
  accepts: ['ranges'],
  wire: true,
})

// One request at a time, in order: a line is read only after the previous answer was written.
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
const queue = []
let busy = false
lines.on('line', line => {
  if (line.trim()) queue.push(line)
  drain()
})
lines.on('close', () => {
  queue.push(null)
  drain()
})

async function drain() {
  if (busy) return
  busy = true
  while (queue.length) {
    const line = queue.shift()
    if (line === null) process.exit(0)
    let request
    try {
      request = JSON.parse(line)
    } catch (err) {
      process.stderr.write(`stickyproof-kafkajs-peer: unreadable request (${err.message}): ${line.slice(0, 200)}\n`)
      process.exit(2)
    }
    if (!request || !Number.isInteger(request.id)) {
      process.stderr.write(`stickyproof-kafkajs-peer: a request without an id: ${line.slice(0, 200)}\n`)
      process.exit(2)
    }
    try {
      const { assignment, seconds } = await serve(request)
      write({ id: request.id, assignment: assignment || {}, assign_seconds: seconds || 0 })
    } catch (err) {
      if (err instanceof BadRequest) {
        write({ id: request.id, error: { type: 'stickyproof.BadRequest', message: err.message } })
      } else {
        process.stderr.write(`${err && err.stack ? err.stack : err}\n`)
        const type = (err && (err.name || (err.constructor && err.constructor.name))) || 'Error'
        write({ id: request.id, error: { type, message: String(err && err.message !== undefined ? err.message : err) } })
      }
    }
  }
  busy = false
}
