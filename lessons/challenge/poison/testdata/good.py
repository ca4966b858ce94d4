"""A consumer that tries an order three times, then parks it in the
dead-letter topic, waits for the topic to have it, and only then commits
past it: a kill in between parks it twice, never loses it.

    mqlab challenge poison -- /usr/bin/python3 testdata/good.py
"""
import os
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
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

producer = KafkaProducer(
    bootstrap_servers=os.environ["MQLAB_BOOTSTRAP"].split(","),
    client_id=os.environ["MQLAB_CLIENT_ID"] + "-dead-letters",
    acks="all",
    retries=10,
)
TRIES = 3


def park(msg, why):
    """Copy msg, and why it failed, to the dead-letter topic; return once
    the topic has it. Until then it must not be committed past."""
    while True:
        try:
            producer.send(
                os.environ["MQLAB_DEAD_LETTERS"],
                key=msg.key,
                value=msg.value,
                headers=[("error", str(why).encode())],
            ).get(timeout=10)
            return
        except Exception as err:
            print(f"parking {msg.key.decode()}: {err}; trying again", file=sys.stderr)
            time.sleep(0.1)


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
    for attempt in range(1, TRIES + 1):
        try:
            bill(msg.value.decode())
            print(f"processed {key}", flush=True)
            break
        except ValueError as err:
            print(f"{key}, try {attempt} of {TRIES}: {err}", file=sys.stderr)
            print(f"failed {key}", flush=True)
            if attempt == TRIES:
                park(msg, err)
    try:
        commit(msg)
    except Exception as err:  # a rebalance: the order comes again
        print(f"commit {key}: {err}", file=sys.stderr)
