//go:build ignore

// Starter for the sqs-once challenge in Go, with only the standard
// library: it speaks SQS's JSON protocol over net/http (any SQS SDK would
// do as well). Run it with:
//
//	mqlab challenge sqs-once -- go run consumer.go
//
// Two workers take jobs from the queue MQLAB_QUEUE at MQLAB_SQS_ENDPOINT;
// each job must be charged 450 exactly once in the charges table of the
// database MQLAB_DB names. As written, a job works longer than the
// queue's visibility timeout, so its message comes back to the other
// worker while the first still works on it; and a worker killed between
// its charge and its delete leaves the message to come back. Extend the
// visibility while a job works (ChangeMessageVisibility), and make a
// message that comes again charge nothing. Print "processed JOB" on
// standard output for each job you finish, and nothing else there; log
// to standard error.
package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"time"

	_ "modernc.org/sqlite"
)

// workers is how many jobs the program works at once.
const workers = 2

func main() {
	work := millis("MQLAB_WORK_MS")
	db, err := sql.Open("sqlite", "file:"+os.Getenv("MQLAB_DB")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	q := &queue{endpoint: os.Getenv("MQLAB_SQS_ENDPOINT"), client: os.Getenv("MQLAB_CLIENT_ID")}
	q.url = q.urlOf(os.Getenv("MQLAB_QUEUE"))
	for range workers {
		go func() {
			for {
				msgs, err := q.receive()
				if err != nil {
					log.Printf("receive: %v", err)
					time.Sleep(100 * time.Millisecond)
					continue
				}
				for _, m := range msgs {
					time.Sleep(work) // the job's work: longer than the visibility timeout
					if err := charge(db, m.Body); err != nil {
						log.Fatalf("charge %s: %v", m.Body, err) // not deleted: it comes again
					}
					fmt.Printf("processed %s\n", m.Body)
					if err := q.call("DeleteMessage", map[string]any{"QueueUrl": q.url, "ReceiptHandle": m.ReceiptHandle}, nil); err != nil {
						log.Printf("delete %s: %v", m.Body, err)
					}
				}
			}
		}()
	}
	select {}
}

// charge charges the job 450.
//
// TODO: remember, in the same transaction as the charge, that this
// message (its MessageId) was charged, and charge nothing when it comes
// again.
func charge(db *sql.DB, job string) error {
	_, err := db.Exec(`INSERT INTO charges (job, amount) VALUES (?, 450)`, job)
	return err
}

// queue is an SQS queue reached with the JSON protocol.
type queue struct{ endpoint, client, url string }

// message is a message a receive handed out.
type message struct{ MessageId, ReceiptHandle, Body string }

// urlOf asks for the queue's URL until it is answered.
func (q *queue) urlOf(name string) string {
	for {
		var out struct{ QueueUrl string }
		err := q.call("GetQueueUrl", map[string]any{"QueueName": name}, &out)
		if err == nil {
			return out.QueueUrl
		}
		log.Printf("get queue url: %v", err)
		time.Sleep(100 * time.Millisecond)
	}
}

// receive takes one message, waiting up to a second for it.
func (q *queue) receive() ([]message, error) {
	var out struct{ Messages []message }
	err := q.call("ReceiveMessage", map[string]any{"QueueUrl": q.url, "MaxNumberOfMessages": 1, "WaitTimeSeconds": 1}, &out)
	return out.Messages, err
}

// call makes one SQS request and decodes its answer into out.
func (q *queue) call(action string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, q.endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	req.Header.Set("x-mqlab-client", q.client)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", action, resp.Status, answer)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(answer, out)
}

func millis(name string) time.Duration {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	return time.Duration(n) * time.Millisecond
}
