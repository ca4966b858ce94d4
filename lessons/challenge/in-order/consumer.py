"""Starter for the in-order challenge, with kafka-python (Debian's
python3-kafka) and sqlite3. Run it with:

    mqlab challenge in-order -- /usr/bin/python3 consumer.py

Each record sets an account's balance: key account-3, value
"seq=7 balance=450". As written it processes at least once and writes
whatever balance it is handed, so a run that was paused wakes up and
overwrites newer balances with the old updates it still holds: make an
older update change nothing. Print "processed KEY" on standard output for
each record you finish, and nothing else there; log to standard error.
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
    """Set the account's balance.

    TODO: an update older than the one the account already has (a smaller
    seq) must change nothing.
    """
    db.execute(
        "INSERT INTO balances (account, balance) VALUES (?, ?) "
        "ON CONFLICT (account) DO UPDATE SET balance = excluded.balance",
        (account, balance),
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
