"""A solution to the at-least-once challenge with kafka-python: each
order's work, then its report, then its commit.

    mqlab challenge at-least-once -- /usr/bin/python3 good.py
"""
import os
import sys
import time

from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

session_ms = int(os.environ["MQLAB_SESSION_MS"])
work = int(os.environ["MQLAB_WORK_MS"]) / 1000

consumer = KafkaConsumer(
    os.environ["MQLAB_TOPIC"],
    bootstrap_servers=os.environ["MQLAB_BOOTSTRAP"].split(","),
    group_id=os.environ["MQLAB_GROUP"],
    client_id=os.environ["MQLAB_CLIENT_ID"],
    auto_offset_reset="earliest",
    enable_auto_commit=False,
    session_timeout_ms=session_ms,
    heartbeat_interval_ms=max(100, session_ms // 10),
)


def commit(msg):
    """Commit msg's offset: the group will start after it next time."""
    tp = TopicPartition(msg.topic, msg.partition)
    consumer.commit({tp: OffsetAndMetadata(msg.offset + 1, "")})


for msg in consumer:
    key = msg.key.decode()
    time.sleep(work)  # the order's work
    print(f"processed {key}", flush=True)
    try:
        commit(msg)  # after the work: a kill before it repeats the order
    except Exception as err:  # a rebalance: the order comes again
        print(f"commit {key}: {err}", file=sys.stderr)
