"""A consumer that must fail the effect-once challenge: it charges an
order and records that it was charged in two writes, each committed alone,
with the order's work between them. A redelivered order finds its record
and charges nothing, which holds until a kill lands between the two
writes: then the order comes again unrecorded and is charged twice.

    mqlab challenge effect-once -- /usr/bin/python3 bad_two_writes.py
"""
import os
import sqlite3
import sys
import time

from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

db = sqlite3.connect(os.environ["MQLAB_DB"], timeout=5, isolation_level=None)
db.execute("CREATE TABLE IF NOT EXISTS processed (order_key TEXT PRIMARY KEY)")
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


def charged_before(key):
    """Whether the order was recorded as charged."""
    cur = db.execute("SELECT 1 FROM processed WHERE order_key = ?", (key,))
    return cur.fetchone() is not None


for msg in consumer:
    key = msg.key.decode()
    if not charged_before(key):
        db.execute("INSERT INTO charges (order_key, amount) VALUES (?, 450)", (key,))
        time.sleep(work)  # the order's work, between the two writes
        db.execute("INSERT OR IGNORE INTO processed (order_key) VALUES (?)", (key,))
    print(f"processed {key}", flush=True)
    try:
        commit(msg)
    except Exception as err:  # a rebalance: the order comes again
        print(f"commit {key}: {err}", file=sys.stderr)
