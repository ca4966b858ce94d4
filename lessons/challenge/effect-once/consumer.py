"""Starter for the effect-once challenge, with kafka-python (Debian's
python3-kafka) and sqlite3. Run it with:

    mqlab challenge effect-once -- /usr/bin/python3 consumer.py

Each order must be charged 450 exactly once in the charges table of the
database MQLAB_DB names. As written it processes at least once, so an
order redelivered after a kill between its charge and its commit is
charged again: make the second delivery charge nothing. Print
"processed KEY" on standard output for each order you finish, and
nothing else there; log to standard error.
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
    """Charge the order 450.

    TODO: remember, in the same transaction as the charge, that this order
    was charged, and charge nothing when it comes again.
    """
    db.execute("INSERT INTO charges (order_key, amount) VALUES (?, 450)", (key,))


for msg in consumer:
    key = msg.key.decode()
    time.sleep(work)  # the order's work
    charge(key)
    print(f"processed {key}", flush=True)
    try:
        commit(msg)
    except Exception as err:  # a rebalance: the order comes again
        print(f"commit {key}: {err}", file=sys.stderr)
