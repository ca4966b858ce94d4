"""Starter for the poison challenge, with kafka-python (Debian's
python3-kafka). Run it with:

    mqlab challenge poison -- /usr/bin/python3 consumer.py

Each order's value is "order 17 amount=450". A few orders carry an amount
nobody can read, and as written the consumer tries such an order again
and again, forever, and every order behind it waits. Try a few times,
then park the order in the dead-letter topic MQLAB_DEAD_LETTERS and go
on. Print "processed KEY" on standard output for each order you finish
and "failed KEY" for each try that fails, and nothing else there; log to
standard error.
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


def bill(value):
    """An order's work: read the amount and charge it."""
    time.sleep(work)
    amount = value.split("amount=", 1)[-1]
    if not amount.isdigit():
        raise ValueError(f"the amount {amount!r} is not a number")


for msg in consumer:
    key = msg.key.decode()
    # TODO: give up after a few tries: park the record in the topic
    # MQLAB_DEAD_LETTERS, and commit past it.
    while True:
        try:
            bill(msg.value.decode())
            break
        except ValueError as err:
            print(f"{key}: {err}; trying again", file=sys.stderr)
            print(f"failed {key}", flush=True)
    print(f"processed {key}", flush=True)
    try:
        commit(msg)
    except Exception as err:  # a rebalance: the order comes again
        print(f"commit {key}: {err}", file=sys.stderr)
