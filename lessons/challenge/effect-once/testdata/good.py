"""A solution to the effect-once challenge with kafka-python and sqlite3:
the charge and the record that it was made commit in one transaction.

    mqlab challenge effect-once -- /usr/bin/python3 good.py
"""
import os
import sqlite3
import sys
import time

from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

db = sqlite3.connect(os.environ["MQLAB_DB"], timeout=5, isolation_level=None)
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


def charge(key):
    """Charge the order 450 unless it was charged before: the record that
    it was and the charge commit together, or not at all."""
    db.execute("CREATE TABLE IF NOT EXISTS processed (order_key TEXT PRIMARY KEY)")
    db.execute("BEGIN")
    try:
        cur = db.execute("INSERT OR IGNORE INTO processed (order_key) VALUES (?)", (key,))
        if cur.rowcount == 1:
            db.execute("INSERT INTO charges (order_key, amount) VALUES (?, 450)", (key,))
        db.execute("COMMIT")
    except Exception:
        db.execute("ROLLBACK")
        raise


for msg in consumer:
    key = msg.key.decode()
    time.sleep(work)  # the order's work
    charge(key)
    print(f"processed {key}", flush=True)
    try:
        commit(msg)
    except Exception as err:  # a rebalance: the order comes again
        print(f"commit {key}: {err}", file=sys.stderr)
