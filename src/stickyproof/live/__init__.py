"""Live groups: a real Kafka broker started and stopped by the tool, real members driven over pipes,
and their reports turned into a timeline the simulator's monitors read (issue 24).

    broker.running_broker()          a single-node KRaft broker on loopback, or one the user names
    java_member.JavaMember           Kafka's KafkaConsumer as a member, over JSON lines
    run.run_live(...)                a scenario's history applied to real members
"""

__all__: list[str] = []  # import the modules themselves (broker, java_member, run): each starts JVMs
