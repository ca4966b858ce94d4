"""A consumer that writes an update only over an older one: the seq goes
into the row with the balance, and the write's own condition compares
them, so a paused run that wakes up with old updates changes nothing.

    mqlab challenge in-order -- /usr/bin/python3 testdata/good.py
"""
import os
import sqlite3
import sys
import time

from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

db = sqlite3.connect(os.environ["MQLAB_DB"], timeout=15, isolation_level=None)
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


def apply(account, seq, balance):
    """Set the account's balance unless it holds this update or a later one.

    One statement: no other run can write between the comparison and the
    write.
    """
    db.execute(
        "INSERT INTO balances (account, balance, seq) VALUES (?, ?, ?) "
        "ON CONFLICT (account) DO UPDATE SET balance = excluded.balance, seq = excluded.seq "
        "WHERE excluded.seq > balances.seq",
        (account, balance, seq),
    )


def parse(value):
    """"seq=7 balance=450" -> (7, 450)"""
    fields = dict(f.split("=", 1) for f in value.split())
    return int(fields["seq"]), int(fields["balance"])


for msg in consumer:
    account = msg.key.decode()
    seq, balance = parse(msg.value.decode())
    time.sleep(work)  # the update's work
    apply(account, seq, balance)
    print(f"processed {account}", flush=True)
    try:
        commit(msg)
    except Exception as err:  # the group moved on: what we did may be done again
        print(f"commit {account}: {err}", file=sys.stderr)
