"""A solution to the sqs-once challenge with boto3 and sqlite3: each job's
message is kept hidden while the job works (change_message_visibility,
renewed before it runs out), and its MessageId is recorded in the same
transaction as the charge, so a message that comes again charges nothing.

    mqlab challenge sqs-once -- /usr/bin/python3 good.py
"""
import os
import sqlite3
import sys
import threading
import time

import boto3

WORKERS = 2  # jobs worked at once
work = int(os.environ["MQLAB_WORK_MS"]) / 1000
out = threading.Lock()

# The lab checks no signature, but boto3 wants credentials to sign with.
sqs = boto3.client(
    "sqs",
    endpoint_url=os.environ["MQLAB_SQS_ENDPOINT"],
    region_name="us-east-1",
    aws_access_key_id="mqlab",
    aws_secret_access_key="mqlab",
)


def queue_url():
    """Ask for the queue's URL until it is answered."""
    while True:
        try:
            return sqs.get_queue_url(QueueName=os.environ["MQLAB_QUEUE"])["QueueUrl"]
        except Exception as err:
            print(f"get queue url: {err}", file=sys.stderr)
            time.sleep(0.1)


url = queue_url()


def charge(db, msg_id, job):
    """Charge the job 450 unless its message was charged before: the
    record that it was and the charge commit together, or not at all."""
    db.execute("BEGIN IMMEDIATE")
    try:
        cur = db.execute("INSERT OR IGNORE INTO processed (message_id) VALUES (?)", (msg_id,))
        if cur.rowcount == 1:
            db.execute("INSERT INTO charges (job, amount) VALUES (?, 450)", (job,))
        db.execute("COMMIT")
    except Exception:
        db.execute("ROLLBACK")
        raise


def keep_hidden(msg, done):
    """Keep msg hidden from the other workers until done is set: its
    visibility timeout is set to a second at once, and again every 300 ms.
    A renewal that fails is logged: the job may come back, and its record
    keeps it from being charged twice."""
    while True:
        try:
            sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=msg["ReceiptHandle"], VisibilityTimeout=1)
        except Exception as err:
            print(f"extend {msg['Body']}: {err}", file=sys.stderr)
        if done.wait(0.3):
            return


def worker():
    db = sqlite3.connect(os.environ["MQLAB_DB"], timeout=5, isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS processed (message_id TEXT PRIMARY KEY)")
    while True:
        try:
            got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1, WaitTimeSeconds=1)
        except Exception as err:
            print(f"receive: {err}", file=sys.stderr)
            time.sleep(0.1)
            continue
        for msg in got.get("Messages", []):
            job = msg["Body"]
            done = threading.Event()
            hider = threading.Thread(target=keep_hidden, args=(msg, done), daemon=True)
            hider.start()
            time.sleep(work)  # the job's work: longer than the visibility timeout
            try:
                charge(db, msg["MessageId"], job)
            finally:
                done.set()
                hider.join()
            with out:
                print(f"processed {job}", flush=True)
            try:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=msg["ReceiptHandle"])
            except Exception as err:
                print(f"delete {job}: {err}", file=sys.stderr)


for _ in range(WORKERS):
    threading.Thread(target=worker, daemon=True).start()
threading.Event().wait()
