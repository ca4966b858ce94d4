"""Starter for the sqs-once challenge, with boto3 (Debian's python3-boto3)
and sqlite3. Run it with:

    mqlab challenge sqs-once -- /usr/bin/python3 consumer.py

Two workers take jobs from the queue MQLAB_QUEUE at MQLAB_SQS_ENDPOINT;
each job must be charged 450 exactly once in the charges table of the
database MQLAB_DB names. As written, a job works longer than the queue's
visibility timeout, so its message comes back to the other worker while
the first still works on it; and a worker killed between its charge and
its delete leaves the message to come back. Extend the visibility while a
job works (change_message_visibility), and make a message that comes
again charge nothing. Print "processed JOB" on standard output for each
job you finish, and nothing else there; log to standard error.
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


def charge(db, job):
    """Charge the job 450.

    TODO: remember, in the same transaction as the charge, that this
    message (its MessageId) was charged, and charge nothing when it comes
    again.
    """
    db.execute("INSERT INTO charges (job, amount) VALUES (?, 450)", (job,))


def worker():
    db = sqlite3.connect(os.environ["MQLAB_DB"], timeout=5, isolation_level=None)
    while True:
        try:
            got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1, WaitTimeSeconds=1)
        except Exception as err:
            print(f"receive: {err}", file=sys.stderr)
            time.sleep(0.1)
            continue
        for msg in got.get("Messages", []):
            job = msg["Body"]
            time.sleep(work)  # the job's work: longer than the visibility timeout
            charge(db, job)
            with out:
                print(f"processed {job}", flush=True)
            try:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=msg["ReceiptHandle"])
            except Exception as err:
                print(f"delete {job}: {err}", file=sys.stderr)


for _ in range(WORKERS):
    threading.Thread(target=worker, daemon=True).start()
threading.Event().wait()
