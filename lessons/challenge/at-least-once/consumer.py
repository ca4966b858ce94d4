"""Starter for the at-least-once challenge, with kafka-python (Debian's
python3-kafka). Run it with:

    mqlab challenge at-least-once -- /usr/bin/python3 consumer.py

Every order must be processed, however often the lab kills this program.
Fill in the loop: do the order's work, report it, and commit at the right
moment. Print "processed KEY" on standard output for each order you
finish, and nothing else there; log to standard error.
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
    # TODO: the order's work takes `work` seconds (time.sleep(work)),
    # then print(f"processed {key}", flush=True) reports it. Where does
    # commit(msg) go, so that a kill at any moment loses no order?
    commit(msg)
    time.sleep(work)
    print(f"processed {key}", flush=True)
